//! OpenAI's Responses API, as the conformance suite drives it.

use std::sync::Arc;
use std::time::Duration;

use reticent::providers::openai_responses::OpenAiResponses;
use serde_json::{Value, json};

use super::{Call, Piece, SentResult, Settings, Spec};
use crate::provider::{OPENAI_KEY, TestServer};

/// How the API spells answers and requests.
pub fn spec() -> Spec {
    Spec {
        name: "openai-responses",
        model: |server, settings| Arc::new(build(server, settings)),
        debug: |server| format!("{:?}", build(server, Settings::default())),
        at_llmock: |llmock, settings| Arc::new(build_at(llmock.openai_base(), settings)),
        key: (OPENAI_KEY, "authorization"),
        path: |_| "/v1/responses".to_owned(),
        answer,
        stream,
        fragments: true,
        error: |message| {
            json!({"error": {"type": "invalid_request_error", "message": message}}).to_string()
        },
        results,
    }
}

/// `OpenAiResponses` at `server`, retrying quickly, with `settings`.
pub fn build(server: &TestServer, settings: Settings) -> OpenAiResponses {
    build_at(format!("{}/v1", server.url), settings)
}

/// `OpenAiResponses` at the base URL `base`, retrying quickly, with `settings`.
pub fn build_at(base: String, settings: Settings) -> OpenAiResponses {
    OpenAiResponses::new(OPENAI_KEY, "o4-mini")
        .base_url(base)
        .retry_delay(Duration::from_millis(5))
        .timeout(Duration::from_secs(10))
        .max_retries(settings.max_retries)
        .max_tool_calls(settings.max_tool_calls)
        .max_response_bytes(settings.max_response_bytes)
}

fn usage() -> Value {
    json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 4},
           "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
           "total_tokens": 15})
}

/// The output items of an answer.
fn output(text: Option<&str>, calls: &[Call<'_>]) -> Vec<Value> {
    let mut output = Vec::new();
    if let Some(text) = text {
        output.push(
            json!({"type": "message", "id": "msg_1", "role": "assistant",
                           "status": "completed",
                           "content": [{"type": "output_text", "text": text, "annotations": []}]}),
        );
    }
    for (id, name, arguments) in calls {
        output.push(
            json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id,
                           "name": name, "arguments": arguments, "status": "completed"}),
        );
    }
    output
}

fn response(output: Vec<Value>) -> Value {
    json!({"id": "resp_1", "object": "response", "status": "completed", "model": "o4-mini",
           "output": output, "usage": usage()})
}

fn answer(text: Option<&str>, calls: &[Call<'_>]) -> String {
    response(output(text, calls)).to_string()
}

fn event(data: Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

fn stream(pieces: &[Piece<'_>]) -> String {
    let mut body = event(json!({"type": "response.created",
                                "response": {"id": "resp_1", "status": "in_progress", "output": []}}));
    for piece in pieces {
        body.push_str(&match piece {
            Piece::Text(text) => event(json!({"type": "response.output_text.delta",
                                              "item_id": "msg_1", "output_index": 0,
                                              "content_index": 0, "delta": text})),
            Piece::Call { index, id, name } => event(json!({
                "type": "response.output_item.added", "output_index": index + 1,
                "item": {"type": "function_call", "id": format!("fc_{id}"), "call_id": id,
                         "name": name, "arguments": "", "status": "in_progress"}})),
            Piece::Arguments { index, fragment } => event(json!({
                "type": "response.function_call_arguments.delta",
                "output_index": index + 1, "delta": fragment})),
        });
    }
    // `response.completed` repeats the output; the stream's events are what is read
    body.push_str(&event(
        json!({"type": "response.completed", "response": response(Vec::new())}),
    ));
    body
}

fn results(body: &Value) -> Vec<SentResult> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| SentResult {
            call_id: item["call_id"].as_str().map(str::to_owned),
            text: item["output"].as_str().unwrap_or_default().to_owned(),
            is_error: None,
        })
        .collect()
}
