//! The provider conformance suite: how each HTTP provider's API spells an answer (a
//! [`Spec`]), and the scenarios every provider must pass, run over all of them by
//! `tests/tests/providers/conformance.rs` against the scripted server on loopback, and by
//! `tests/tests/providers/llmock.rs` against the independent mock llmock.
//!
//! A scenario is written once against [`Spec`]: text, a tool call, parallel calls, a failed
//! tool whose secret never reaches the request bytes, streaming with arguments split in
//! fragments and the bytes in pieces, usage, retries, limits and errors. A new provider adds a
//! module here with its [`Spec`] and joins [`specs`].

pub mod anthropic;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use reticent::{
    Model, ModelError, ModelRequest, ModelResponse, ToolCall, Usage, model::ModelEvent,
};
use serde_json::Value;

use crate::llmock::Llmock;
use crate::provider::{Received, TestServer};

/// The settings a scenario gives the model; each provider applies them with its builder.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// `max_tool_calls`.
    pub max_tool_calls: usize,
    /// `max_response_bytes`.
    pub max_response_bytes: usize,
    /// `max_retries`.
    pub max_retries: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            max_tool_calls: 1024,
            max_response_bytes: 1 << 20,
            max_retries: 2,
        }
    }
}

/// One piece of a streamed answer, in the order the model produced it.
#[derive(Clone, Copy, Debug)]
pub enum Piece<'a> {
    /// A text delta.
    Text(&'a str),
    /// Call number `index` starts, with this id and tool name.
    Call {
        /// The call's number in the answer.
        index: usize,
        /// Its id.
        id: &'a str,
        /// The tool's name.
        name: &'a str,
    },
    /// A fragment of the arguments of call number `index`.
    Arguments {
        /// The call's number in the answer.
        index: usize,
        /// The fragment.
        fragment: &'a str,
    },
}

/// A call of a scripted answer: its id, the tool's name, and the arguments as the model wrote
/// them.
pub type Call<'a> = (&'a str, &'a str, &'a str);

/// A tool result as a request carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentResult {
    /// The id of the call it answers, where the API sends one.
    pub call_id: Option<String>,
    /// Its text.
    pub text: String,
    /// Whether it is marked as an error, where the API has a flag.
    pub is_error: Option<bool>,
}

/// How one provider's API spells answers and requests.
#[allow(missing_debug_implementations)] // function pointers only
pub struct Spec {
    /// The provider's `from_spec` prefix.
    pub name: &'static str,
    /// The model, talking to `server`, retrying quickly, with `settings`.
    pub model: fn(&TestServer, Settings) -> Arc<dyn Model>,
    /// `Debug` of that model.
    pub debug: fn(&TestServer) -> String,
    /// The model at llmock's base URL for the API, retrying quickly, with `settings`.
    pub at_llmock: fn(&Llmock, Settings) -> Arc<dyn Model>,
    /// The API key the model sends, and the header it goes in (with its prefix).
    pub key: (&'static str, &'static str),
    /// The path of a request, streamed or not.
    pub path: fn(bool) -> String,
    /// A whole answer with this text (or none) and these calls (id, name, arguments as the
    /// model wrote them), which used 10 tokens in (4 of them read from the cache) and 5 out.
    pub answer: fn(Option<&str>, &[Call<'_>]) -> String,
    /// A streamed answer of these pieces, with the same usage as `answer`.
    pub stream: fn(&[Piece<'_>]) -> String,
    /// Whether the API streams a call's arguments in fragments (else each call whole).
    pub fragments: bool,
    /// The body of an error answer with this message.
    pub error: fn(&str) -> String,
    /// The tool results a request body carries, in order.
    pub results: fn(&Value) -> Vec<SentResult>,
}

/// Every provider's spec.
pub fn specs() -> Vec<Spec> {
    vec![
        openai_chat::spec(),
        openai_responses::spec(),
        anthropic::spec(),
        gemini::spec(),
    ]
}

/// The usage every scripted answer reports.
pub fn usage() -> Usage {
    Usage::new(10, 5).with_cache(4, 0)
}

/// A request with a system prompt and one user message.
pub fn request() -> ModelRequest {
    ModelRequest {
        system: Some("You are a support agent.".into()),
        messages: vec![reticent::Message::user("Where is order ORD-1042?")],
        tools: Vec::new(),
    }
}

/// The events of a stream, and how it ended.
pub async fn collect(
    model: &dyn Model,
    request: &ModelRequest,
) -> (Vec<ModelEvent>, Option<ModelError>) {
    let mut stream = model.stream(request);
    let mut events = Vec::new();
    let read = async {
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => events.push(event),
                Err(error) => return Some(error),
            }
        }
        None
    };
    let error = tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .expect("the stream ends within 20 s");
    (events, error)
}

/// The response a stream completed with; panics on an error or a stream without one.
pub async fn streamed(
    model: &dyn Model,
    request: &ModelRequest,
) -> (Vec<ModelEvent>, ModelResponse) {
    let (mut events, error) = collect(model, request).await;
    if let Some(error) = error {
        panic!("the stream failed: {error}");
    }
    match events.pop() {
        Some(ModelEvent::Completed(response)) => (events, response),
        other => panic!("the stream ended with {other:?}"),
    }
}

/// Checks the request a provider sent: its path and key header.
pub fn check_request(spec: &Spec, received: &Received, stream: bool) {
    assert_eq!(received.method, "POST", "{}", spec.name);
    assert_eq!(received.path, (spec.path)(stream), "{}", spec.name);
    let (key, header) = spec.key;
    let expected = match header {
        "authorization" => format!("Bearer {key}"),
        _ => key.to_owned(),
    };
    assert_eq!(
        received.header(header),
        Some(expected.as_str()),
        "{}",
        spec.name
    );
}

/// `call` as the provider reads it, without the state a provider keeps with it.
pub fn bare(call: &ToolCall) -> ToolCall {
    ToolCall::new(
        call.id.clone(),
        call.name.clone(),
        call.arguments.value().clone(),
    )
}
