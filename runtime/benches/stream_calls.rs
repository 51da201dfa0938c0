//! Reading a streamed answer with many tool calls is linear in the number of calls: for each
//! provider, one stream of 100,000 calls against two streams of 50,000, and the same for text
//! deltas as the reference, timed in alternating rounds in one process
//! (`support/paired.rs`). A ratio near 1.0 is linear work; quadratic work would give 2.0.
//!
//! ```text
//! cargo bench -p reticent --features openai,anthropic --bench stream_calls
//! ```
//!
//! The streams are read as the providers read them from the network, in pieces of 16 KiB,
//! with a `max_tool_calls` raised to let every call through.

use std::hint::black_box;

use reticent::providers::__fuzz::{read_anthropic_stream, read_openai_stream};
use reticent::{ModelError, model::ModelEvent};
use serde_json::json;

#[path = "support/paired.rs"]
mod paired;

/// The calls (or text deltas) of the larger stream; the smaller has half.
const LARGE: usize = 100_000;
/// Rounds of the paired timing.
const ROUNDS: usize = 10;
/// The bytes of one network read.
const PIECE: usize = 16 << 10;

/// A provider's stream reader: body, piece size, `max_event_bytes`, `max_response_bytes` and
/// `max_tool_calls`.
type Read = fn(&[u8], usize, usize, usize, usize) -> Vec<Result<ModelEvent, ModelError>>;

/// How one provider's API spells a streamed answer.
struct Wire {
    name: &'static str,
    read: Read,
    /// A stream whose answer is `n` tool calls, each started and given its arguments.
    calls: fn(usize) -> Vec<u8>,
    /// A stream whose answer is `n` text deltas.
    text: fn(usize) -> Vec<u8>,
}

fn event(data: &serde_json::Value) -> String {
    format!("data: {data}\n\n")
}

fn openai_chunk(delta: serde_json::Value) -> String {
    event(&json!({"choices": [{"index": 0, "delta": delta}]}))
}

fn openai_end() -> String {
    event(&json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
        + "data: [DONE]\n\n"
}

fn openai_calls(n: usize) -> Vec<u8> {
    let mut body = String::new();
    for i in 0..n {
        body += &openai_chunk(
            json!({"tool_calls": [{"index": i, "id": format!("call_{i}"),
            "type": "function", "function": {"name": "lookup_order", "arguments": ""}}]}),
        );
        body += &openai_chunk(json!({"tool_calls": [{"index": i,
            "function": {"arguments": "{\"order_id\": \"ORD-1042\"}"}}]}));
    }
    (body + &openai_end()).into_bytes()
}

fn openai_text(n: usize) -> Vec<u8> {
    let mut body = String::new();
    for i in 0..n {
        body += &openai_chunk(json!({"content": format!("word {i} ")}));
    }
    (body + &openai_end()).into_bytes()
}

fn anthropic_event(data: serde_json::Value) -> String {
    format!(
        "event: {}\n{}",
        data["type"].as_str().unwrap_or_default(),
        event(&data)
    )
}

fn anthropic(blocks: impl Fn(usize) -> [serde_json::Value; 3], n: usize) -> Vec<u8> {
    let mut body = anthropic_event(json!({"type": "message_start",
        "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}));
    for i in 0..n {
        for data in blocks(i) {
            body += &anthropic_event(data);
        }
    }
    body += &anthropic_event(json!({"type": "message_delta", "usage": {"output_tokens": 5}}));
    body += &anthropic_event(json!({"type": "message_stop"}));
    body.into_bytes()
}

fn anthropic_calls(n: usize) -> Vec<u8> {
    anthropic(
        |i| {
            [
                json!({"type": "content_block_start", "index": i, "content_block":
                    {"type": "tool_use", "id": format!("toolu_{i}"), "name": "lookup_order",
                     "input": {}}}),
                json!({"type": "content_block_delta", "index": i, "delta":
                    {"type": "input_json_delta", "partial_json": "{\"order_id\": \"ORD-1042\"}"}}),
                json!({"type": "content_block_stop", "index": i}),
            ]
        },
        n,
    )
}

fn anthropic_text(n: usize) -> Vec<u8> {
    anthropic(
        |i| {
            [
                json!({"type": "content_block_start", "index": i, "content_block":
                    {"type": "text", "text": ""}}),
                json!({"type": "content_block_delta", "index": i, "delta":
                    {"type": "text_delta", "text": format!("word {i} ")}}),
                json!({"type": "content_block_stop", "index": i}),
            ]
        },
        n,
    )
}

/// Reads `body` whole, checks that it completed with `calls` calls, and returns the events.
fn read(wire: &Wire, body: &[u8], calls: usize) -> Vec<Result<ModelEvent, ModelError>> {
    let events = (wire.read)(body, PIECE, 8 << 20, usize::MAX, usize::MAX);
    match events.last() {
        Some(Ok(ModelEvent::Completed(response))) => {
            assert_eq!(response.tool_calls.len(), calls, "{}", wire.name);
        }
        other => panic!("{}: the stream did not complete: {other:?}", wire.name),
    }
    events
}

fn main() {
    let wires = [
        Wire {
            name: "openai",
            read: read_openai_stream,
            calls: openai_calls,
            text: openai_text,
        },
        Wire {
            name: "anthropic",
            read: read_anthropic_stream,
            calls: anthropic_calls,
            text: anthropic_text,
        },
    ];
    println!(
        "one stream of {LARGE} against two of {}, paired over {ROUNDS} rounds: median ratio \
         [interquartile range] (median time of the one stream vs the two)",
        LARGE / 2
    );
    for wire in &wires {
        for (what, make, calls) in [
            ("tool calls", wire.calls, LARGE),
            ("text deltas", wire.text, 0),
        ] {
            let (large, small) = (make(LARGE), make(LARGE / 2));
            let p = paired::compare(
                ROUNDS,
                1,
                || (large.clone(), small.clone()),
                |(_, small)| {
                    let first = read(wire, black_box(&small), calls / 2);
                    (first, read(wire, black_box(&small), calls / 2))
                },
                |(large, _)| read(wire, black_box(&large), calls),
            );
            println!(
                "  {:<10} {what:<12} {:.3}x  [{:.3}x {:.3}x]   ({:?} vs {:?})",
                wire.name, p.ratio, p.ratio_iqr.0, p.ratio_iqr.1, p.candidate, p.baseline
            );
        }
    }
}
