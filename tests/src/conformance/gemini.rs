//! The Gemini API, as the conformance suite drives it.

use std::sync::Arc;
use std::time::Duration;

use reticent::providers::gemini::Gemini;
use serde_json::{Value, json};

use super::{Call, Piece, SentResult, Settings, Spec};
use crate::provider::TestServer;

/// The Gemini API key of the tests.
pub const GEMINI_KEY: &str = "AIza-test-3e8f1a2b7c6d";

/// How the API spells answers and requests.
pub fn spec() -> Spec {
    Spec {
        name: "gemini",
        model: |server, settings| Arc::new(build(server, settings)),
        debug: |server| format!("{:?}", build(server, Settings::default())),
        at_llmock: |llmock, settings| Arc::new(build_at(llmock.gemini_base(), settings)),
        key: (GEMINI_KEY, "x-goog-api-key"),
        path: |stream| {
            if stream {
                "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse".to_owned()
            } else {
                "/v1beta/models/gemini-2.5-flash:generateContent".to_owned()
            }
        },
        answer,
        stream,
        fragments: false,
        error: |message| {
            json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
                .to_string()
        },
        results,
    }
}

/// `Gemini` at `server`, retrying quickly, with `settings`.
pub fn build(server: &TestServer, settings: Settings) -> Gemini {
    build_at(format!("{}/v1beta", server.url), settings)
}

/// `Gemini` at the base URL `base`, retrying quickly, with `settings`.
pub fn build_at(base: String, settings: Settings) -> Gemini {
    Gemini::new(GEMINI_KEY, "gemini-2.5-flash")
        .base_url(base)
        .retry_delay(Duration::from_millis(5))
        .timeout(Duration::from_secs(10))
        .max_retries(settings.max_retries)
        .max_tool_calls(settings.max_tool_calls)
        .max_response_bytes(settings.max_response_bytes)
}

fn usage() -> Value {
    json!({"promptTokenCount": 10, "cachedContentTokenCount": 4, "candidatesTokenCount": 5,
           "totalTokenCount": 15})
}

fn call_part(id: &str, name: &str, arguments: &str) -> Value {
    let args: Value = serde_json::from_str(arguments).expect("arguments are JSON");
    json!({"functionCall": {"id": id, "name": name, "args": args}})
}

fn chunk(parts: Vec<Value>, finish: Option<&str>, usage: Option<Value>) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let Some(finish) = finish {
        candidate["finishReason"] = json!(finish);
    }
    let mut body = json!({"candidates": [candidate], "modelVersion": "gemini-2.5-flash"});
    if let Some(usage) = usage {
        body["usageMetadata"] = usage;
    }
    body
}

fn answer(text: Option<&str>, calls: &[Call<'_>]) -> String {
    let mut parts = Vec::new();
    if let Some(text) = text {
        parts.push(json!({"text": text}));
    }
    parts.extend(
        calls
            .iter()
            .map(|(id, name, arguments)| call_part(id, name, arguments)),
    );
    chunk(parts, Some("STOP"), Some(usage())).to_string()
}

/// Gemini sends each call whole: a call's part goes out where its last fragment was.
fn stream(pieces: &[Piece<'_>]) -> String {
    let mut calls: Vec<(String, String, String)> = Vec::new();
    let mut last_fragment = std::collections::HashMap::new();
    for (at, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Call { index, id, name } => {
                calls.push(((*id).to_owned(), (*name).to_owned(), String::new()));
                last_fragment.insert(*index, at);
            }
            Piece::Arguments { index, fragment } => {
                calls[*index].2.push_str(fragment);
                last_fragment.insert(*index, at);
            }
            Piece::Text(_) => {}
        }
    }
    let mut body = String::new();
    let mut partial = json!({"promptTokenCount": 10, "candidatesTokenCount": 1});
    for (at, piece) in pieces.iter().enumerate() {
        let parts = match piece {
            Piece::Text(text) => vec![json!({"text": text})],
            _ => (0..calls.len())
                .filter(|index| last_fragment.get(index) == Some(&at))
                .map(|index| {
                    let (id, name, arguments) = &calls[index];
                    call_part(
                        id,
                        name,
                        if arguments.is_empty() {
                            "{}"
                        } else {
                            arguments
                        },
                    )
                })
                .collect(),
        };
        if !parts.is_empty() {
            body.push_str(&format!(
                "data: {}\r\n\r\n",
                chunk(parts, None, Some(partial.take()))
            ));
            partial = json!({"promptTokenCount": 10, "candidatesTokenCount": 1});
        }
    }
    let end = chunk(vec![json!({"text": ""})], Some("STOP"), Some(usage()));
    body.push_str(&format!("data: {end}\r\n\r\n"));
    body
}

fn results(body: &Value) -> Vec<SentResult> {
    body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["role"] == "user")
        .filter_map(|c| c["parts"].as_array())
        .flatten()
        .filter_map(|part| part.get("functionResponse"))
        .map(|response| {
            let error = response["response"].get("error");
            let text = error.or(response["response"].get("output"));
            SentResult {
                call_id: response["id"].as_str().map(str::to_owned),
                text: text.and_then(Value::as_str).unwrap_or_default().to_owned(),
                is_error: Some(error.is_some()),
            }
        })
        .collect()
}
