//! Bytes as argument text for a tool with parameters of every common kind: decoding never
//! panics, what the model is shown about bad arguments stays short, and decoding straight from
//! the text (`call_text`) comes to what decoding the parsed value does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reticent::ModelResponse;
use reticent_fuzz::{call_tool, call_tool_text, run_agent};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    // The tool's own decoding, given the parsed value.
    if let Ok(value) = serde_json::from_str::<Value>(&text) {
        call_tool(value);
    }
    // Straight from the text, against parsing it first.
    call_tool_text(&text);
    // The agent, given the raw text as a provider hands over arguments it could not parse.
    run_agent(ModelResponse::tool_call(
        "call_1",
        "shape",
        Value::String(text),
    ));
});
