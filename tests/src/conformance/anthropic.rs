//! Anthropic's Messages API, as the conformance suite drives it.

use std::sync::Arc;
use std::time::Duration;

use reticent::providers::anthropic::Anthropic;
use serde_json::{Value, json};

use super::{Call, Piece, SentResult, Settings, Spec};
use crate::provider::{ANTHROPIC_KEY, TestServer};

/// How the API spells answers and requests.
pub fn spec() -> Spec {
    Spec {
        name: "anthropic",
        model: |server, settings| Arc::new(build(server, settings)),
        debug: |server| format!("{:?}", build(server, Settings::default())),
        at_llmock: |llmock, settings| Arc::new(build_at(llmock.anthropic_base(), settings)),
        key: (ANTHROPIC_KEY, "x-api-key"),
        path: |_| "/v1/messages".to_owned(),
        answer,
        stream,
        fragments: true,
        error: |message| {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
                .to_string()
        },
        results,
    }
}

/// `Anthropic` at `server`, retrying quickly, with `settings`.
pub fn build(server: &TestServer, settings: Settings) -> Anthropic {
    build_at(server.url.clone(), settings)
}

/// `Anthropic` at the base URL `base`, retrying quickly, with `settings`.
pub fn build_at(base: String, settings: Settings) -> Anthropic {
    Anthropic::new(ANTHROPIC_KEY, "claude-sonnet-4-5")
        .base_url(base)
        .retry_delay(Duration::from_millis(5))
        .timeout(Duration::from_secs(10))
        .max_retries(settings.max_retries)
        .max_tool_calls(settings.max_tool_calls)
        .max_response_bytes(settings.max_response_bytes)
}

/// 10 in, of which 4 read from the cache: the API counts those apart.
fn usage() -> Value {
    json!({"input_tokens": 6, "cache_read_input_tokens": 4, "cache_creation_input_tokens": 0,
           "output_tokens": 5})
}

fn answer(text: Option<&str>, calls: &[Call<'_>]) -> String {
    let mut content = Vec::new();
    if let Some(text) = text {
        content.push(json!({"type": "text", "text": text}));
    }
    for (id, name, arguments) in calls {
        let input: Value = serde_json::from_str(arguments).expect("arguments are JSON");
        content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
    }
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
           "content": content, "stop_reason": "end_turn", "usage": usage()})
    .to_string()
}

fn event(data: Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

fn stream(pieces: &[Piece<'_>]) -> String {
    let mut usage = usage();
    usage["output_tokens"] = json!(1);
    let mut body = event(json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "content": [],
        "model": "claude-sonnet-4-5", "stop_reason": null, "usage": usage}}));
    let mut text_started = false;
    for piece in pieces {
        match piece {
            Piece::Text(text) => {
                if !std::mem::replace(&mut text_started, true) {
                    body.push_str(&event(json!({"type": "content_block_start", "index": 0,
                                                "content_block": {"type": "text", "text": ""}})));
                }
                body.push_str(&event(json!({"type": "content_block_delta", "index": 0,
                                            "delta": {"type": "text_delta", "text": text}})));
            }
            Piece::Call { index, id, name } => body.push_str(&event(json!({
                "type": "content_block_start", "index": index + 1,
                "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}))),
            Piece::Arguments { index, fragment } => body.push_str(&event(json!({
                "type": "content_block_delta", "index": index + 1,
                "delta": {"type": "input_json_delta", "partial_json": fragment}}))),
        }
    }
    body.push_str(&event(json!({"type": "message_delta",
                                "delta": {"stop_reason": "end_turn"},
                                "usage": {"output_tokens": 5}})));
    body.push_str(&event(json!({"type": "message_stop"})));
    body
}

fn results(body: &Value) -> Vec<SentResult> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| SentResult {
            call_id: block["tool_use_id"].as_str().map(str::to_owned),
            text: block["content"].as_str().unwrap_or_default().to_owned(),
            is_error: Some(block["is_error"] == true),
        })
        .collect()
}
