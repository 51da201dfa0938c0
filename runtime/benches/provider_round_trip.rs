//! A provider round trip as the agent loop does it: an OpenAI Chat Completions response body
//! (bytes) read into a tool call, the call dispatched to its tool, and the tool's output
//! turned into the text the model is shown. As a plain program, for counting instructions with
//! callgrind (exact and repeatable on a shared machine) and for timing.
//!
//! ```text
//! cargo bench -p reticent --features openai --bench provider_round_trip -- MODE [N]
//! ```
//!
//! MODE is `inputs` (make and drop the body only), `parse` (read the body into a response)
//! or `round_trip` (read it, run the call, render the output). `runtime/benches/round_trip.sh`
//! runs it under callgrind and prints instructions per round trip.

use std::hint::black_box;
use std::time::Instant;

use reticent::providers::__fuzz::parse_openai;
use reticent::{Tool, ToolContext};
use serde_json::{Value, json};

#[path = "support/booking.rs"]
mod booking;

use booking::{Book, ready};

/// A completion whose one tool call books a room, as OpenAI sends it: the arguments are a
/// string of JSON text.
fn body() -> Vec<u8> {
    let arguments = booking::args().to_string();
    serde_json::to_vec(&json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "book", "arguments": arguments}
                }]
            },
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30}
    }))
    .expect("a body")
}

/// What the loop does with one response: each call dispatched the way the loop dispatches it,
/// and the output rendered as the model's text.
fn round_trip(body: &[u8]) -> String {
    let response = parse_openai(body).expect("a response");
    let call = &response.tool_calls[0];
    let cx = ToolContext::new(call.id.as_str(), "book");
    let output = match call.arguments.text() {
        Some(text) => ready(Book.call_text(text, cx)),
        None => ready(Book.call(call.arguments.value().clone(), cx)),
    }
    .expect("booked");
    match output {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mode = args.next().unwrap_or_default();
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let template = body();
    let bodies: Vec<Vec<u8>> = (0..n).map(|_| template.clone()).collect();
    let start = Instant::now();
    for body in bodies {
        match mode.as_str() {
            "inputs" => {
                black_box(body);
            }
            "parse" => {
                black_box(parse_openai(black_box(&body)).expect("a response"));
            }
            "round_trip" => {
                black_box(round_trip(black_box(&body)));
            }
            other => panic!("unknown mode {other:?}: inputs, parse or round_trip"),
        }
    }
    if std::env::var_os("ROUND_TRIP_TIME").is_some() {
        eprintln!("{mode}: {:?} per body", start.elapsed() / n as u32);
    }
}
