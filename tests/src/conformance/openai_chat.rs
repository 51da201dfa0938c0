//! OpenAI Chat Completions, as the conformance suite drives it.

use std::sync::Arc;
use std::time::Duration;

use reticent::providers::openai::OpenAi;
use serde_json::{Value, json};

use super::{Call, Piece, SentResult, Settings, Spec};
use crate::provider::{OPENAI_KEY, TestServer};

/// How the API spells answers and requests.
pub fn spec() -> Spec {
    Spec {
        name: "openai",
        model: |server, settings| Arc::new(build(server, settings)),
        debug: |server| format!("{:?}", build(server, Settings::default())),
        at_llmock: |llmock, settings| Arc::new(build_at(llmock.openai_base(), settings)),
        key: (OPENAI_KEY, "authorization"),
        path: |_| "/v1/chat/completions".to_owned(),
        answer,
        stream,
        fragments: true,
        error: |message| {
            json!({"error": {"type": "invalid_request_error", "message": message}}).to_string()
        },
        results,
    }
}

/// `OpenAi` at `server`, retrying quickly, with `settings`.
pub fn build(server: &TestServer, settings: Settings) -> OpenAi {
    build_at(format!("{}/v1", server.url), settings)
}

/// `OpenAi` at the base URL `base`, retrying quickly, with `settings`.
pub fn build_at(base: String, settings: Settings) -> OpenAi {
    OpenAi::new(OPENAI_KEY, "gpt-4o-mini")
        .base_url(base)
        .retry_delay(Duration::from_millis(5))
        .timeout(Duration::from_secs(10))
        .max_retries(settings.max_retries)
        .max_tool_calls(settings.max_tool_calls)
        .max_response_bytes(settings.max_response_bytes)
}

fn usage() -> Value {
    json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
           "prompt_tokens_details": {"cached_tokens": 4}})
}

fn answer(text: Option<&str>, calls: &[Call<'_>]) -> String {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": text});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage(),
    })
    .to_string()
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let data = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {data}\n\n")
}

fn stream(pieces: &[Piece<'_>]) -> String {
    let mut body = chunk(json!({"role": "assistant", "content": ""}), None);
    for piece in pieces {
        body.push_str(&match piece {
            Piece::Text(text) => chunk(json!({"content": text}), None),
            Piece::Call { index, id, name } => chunk(
                json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                       "function": {"name": name, "arguments": ""}}]}),
                None,
            ),
            Piece::Arguments { index, fragment } => chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}),
                None,
            ),
        });
    }
    body.push_str(&chunk(json!({}), Some("stop")));
    let end = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
                     "usage": usage()});
    body.push_str(&format!("data: {end}\n\ndata: [DONE]\n\n"));
    body
}

fn results(body: &Value) -> Vec<SentResult> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| SentResult {
            call_id: m["tool_call_id"].as_str().map(str::to_owned),
            text: m["content"].as_str().unwrap_or_default().to_owned(),
            is_error: None,
        })
        .collect()
}
