//! [`OpenAiResponses`]: OpenAI's Responses API, the one its reasoning models need.
//!
//! ```no_run
//! use reticent::providers::openai_responses::OpenAiResponses;
//!
//! let model = OpenAiResponses::new(std::env::var("OPENAI_API_KEY")?, "o4-mini");
//! # let _ = model;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! How the conversation maps onto the API (`POST {base_url}/responses`):
//!
//! - the system prompt is `instructions`; the conversation is `input` items: user and
//!   assistant messages, the model's calls as `function_call` items and tool results as
//!   `function_call_output` items with the call's `call_id` (the API has no error flag: the
//!   text of a failed call already says that it failed);
//! - nothing is kept at OpenAI unless [`OpenAiResponses::store`] says so (`store: false`), and
//!   the request asks for `reasoning.encrypted_content`. The items a response has before each
//!   of its calls (reasoning, with its encrypted content or its id, and the message) are kept
//!   with the call in [`ToolCall::provider_data`] under `"openai_responses"`, with the call's
//!   item id, and go back in their place next turn, so a reasoning model keeps its chain of
//!   thought across tool calls. They are saved with the conversation, so they survive a saved
//!   and resumed run and a replayed trajectory;
//! - tool schemas are sent in [`SchemaDialect::OpenAiStrict`] with `"strict": true` unless
//!   [`OpenAiResponses::strict`] turns it off (then `"strict": false`, which the API otherwise
//!   assumes true);
//! - usage is `response.usage`; `input_tokens_details.cached_tokens` are cache reads;
//! - a response that is `incomplete` (`max_output_tokens`, `content_filter`) or `failed` is a
//!   [`ModelError`] that says why;
//! - [`Model::stream`](crate::Model::stream) reads the events: `response.output_text.delta`
//!   (and `response.refusal.delta`) are text, `response.output_item.added` starts a call,
//!   `response.function_call_arguments.delta` adds to its arguments (looked up by the item,
//!   not searched for), `response.output_item.done` completes the items kept for next turn,
//!   `response.completed` ends the stream with the usage, and `error`, `response.failed` and
//!   `response.incomplete` are errors.
//!
//! One file per wire format, longer than most: the request encoding, the response decoding and
//! the streamed events of one API change together when the API does, and are read together.

use std::collections::HashMap;

use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::endpoint::{Endpoint, Wire, endpoint_model};
use super::http::{Failed, error_message, join, unreadable, unreadable_event};
use super::openai::bearer;
use super::sse::SseEvent;
use super::stream::{Assembly, Decode, arguments_from_text, error_event};
use crate::model::{
    Message, ModelError, ModelRequest, ModelResponse, SchemaDialect, ToolCall, Usage,
};
use crate::render::{MAX_NAME_LEN, bounded};
use crate::secret::Secret;

/// The key of the Responses API's state in [`ToolCall::provider_data`].
const KEY: &str = "openai_responses";

/// A model behind OpenAI's Responses API (`POST {base_url}/responses`).
///
/// See the [module docs](self) for how requests are built. For servers that have only Chat
/// Completions, use [`OpenAi`](super::openai::OpenAi).
#[derive(Clone)]
pub struct OpenAiResponses {
    endpoint: Endpoint<Responses>,
}

endpoint_model!(OpenAiResponses);

/// The Responses API wire format.
#[derive(Clone, Debug)]
pub(super) struct Responses {
    strict: bool,
    store: bool,
    encrypted_reasoning: bool,
}

impl OpenAiResponses {
    /// OpenAI's own endpoint.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// The model `model` at OpenAI, with this API key. An empty key sends no `Authorization`
    /// header (for local servers).
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        let wire = Responses {
            strict: true,
            store: false,
            encrypted_reasoning: true,
        };
        Self {
            endpoint: Endpoint::new(api_key.into(), model.into(), Self::DEFAULT_BASE_URL, wire),
        }
    }

    /// Sends tool schemas in strict mode (`"strict": true`, schemas converted with
    /// [`SchemaDialect::OpenAiStrict`]). On by default; off sends `"strict": false`.
    #[must_use]
    pub fn strict(mut self, strict: bool) -> Self {
        self.endpoint.wire.strict = strict;
        self
    }

    /// Lets OpenAI keep the responses (`store: true`); reasoning then goes back by its item
    /// id. Off by default: nothing is kept, and reasoning goes back as its encrypted content.
    #[must_use]
    pub fn store(mut self, store: bool) -> Self {
        self.endpoint.wire.store = store;
        self
    }

    /// Asks, when nothing is stored, for the reasoning's encrypted content
    /// (`include: ["reasoning.encrypted_content"]`), so that it can go back next turn. On by
    /// default; turn it off for a server or model that refuses the field.
    #[must_use]
    pub fn encrypted_reasoning(mut self, include: bool) -> Self {
        self.endpoint.wire.encrypted_reasoning = include;
        self
    }

    super::endpoint::endpoint_setters!(
        key: "OPENAI_API_KEY",
        base: "OPENAI_BASE_URL",
        key_optional: true,
        endpoint: "The endpoint, up to and including the version: `https://api.openai.com/v1`. Requests go to `{base_url}/responses`.",
    );

    super::http::transport_setters!(
        retried: "`408`, `409`, `429` or `5xx`",
        params: "`reasoning`, `max_output_tokens`, `temperature` or `truncation`",
    );
}

impl Wire for Responses {
    type Events = Events;

    fn url(&self, base_url: &str, _model: &str, _stream: bool) -> String {
        join(base_url, "/responses")
    }

    fn headers(&self, api_key: &Secret<String>) -> Result<HeaderMap, ModelError> {
        bearer(api_key)
    }

    fn body(&self, model: &str, request: &ModelRequest, stream: bool) -> Map<String, Value> {
        let mut input = Vec::with_capacity(request.messages.len());
        for message in &request.messages {
            match message {
                Message::User { text } => input.push(json!({"role": "user", "content": text})),
                Message::Assistant { text, tool_calls } => {
                    let states: Vec<Option<&Value>> = tool_calls
                        .iter()
                        .map(|call| call.provider_data.as_ref().and_then(|d| d.get(KEY)))
                        .collect();
                    // the message item came back with the calls' items, in its place
                    let replays_message = states.iter().flatten().any(|state| {
                        before(state).any(|item| item.get("type") == Some(&json!("message")))
                    });
                    if let Some(text) = text.as_deref().filter(|t| !t.is_empty())
                        && !replays_message
                    {
                        input.push(json!({"role": "assistant", "content": text}));
                    }
                    for (call, state) in tool_calls.iter().zip(states) {
                        if let Some(state) = state {
                            input.extend(before(state).cloned());
                        }
                        input.push(function_call(call, state));
                    }
                }
                Message::Tool(result) => input.push(json!({
                    "type": "function_call_output",
                    "call_id": result.call_id,
                    "output": result.content,
                })),
            }
        }
        let mut body = Map::new();
        body.insert("model".into(), Value::from(model));
        if let Some(system) = &request.system {
            body.insert("instructions".into(), Value::from(system.as_str()));
        }
        body.insert("input".into(), Value::Array(input));
        if !request.tools.is_empty() {
            let tools = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                        "strict": self.strict,
                    })
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        body.insert("store".into(), Value::Bool(self.store));
        if !self.store && self.encrypted_reasoning {
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
        if stream {
            body.insert("stream".into(), Value::Bool(true));
        }
        body
    }

    fn schema_dialect(&self) -> SchemaDialect {
        if self.strict {
            SchemaDialect::OpenAiStrict
        } else {
            SchemaDialect::Standard
        }
    }
}

/// The items kept before a call, from its state.
fn before(state: &Value) -> impl Iterator<Item = &Value> {
    state
        .get("before")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The `function_call` input item of `call`, with its item id when it came with one.
fn function_call(call: &ToolCall, state: Option<&Value>) -> Value {
    let mut item = Map::new();
    item.insert("type".into(), "function_call".into());
    if let Some(id) = state.and_then(|s| s.get("id")) {
        item.insert("id".into(), id.clone());
    }
    item.insert("call_id".into(), Value::from(call.id.as_str()));
    item.insert("name".into(), Value::from(call.name.as_str()));
    // the text the model produced (also when it was not JSON), or the value written out
    item.insert(
        "arguments".into(),
        Value::from(call.arguments.to_json_text()),
    );
    Value::Object(item)
}

/// The state kept with a call: its item id and the items before it.
fn call_state(id: Option<&str>, before: Vec<Value>) -> Option<Value> {
    let mut state = Map::new();
    if let Some(id) = id.filter(|id| !id.is_empty()) {
        state.insert("id".into(), Value::from(id));
    }
    if !before.is_empty() {
        state.insert("before".into(), Value::Array(before));
    }
    (!state.is_empty()).then(|| json!({ KEY: state }))
}

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    output: Option<Vec<Value>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    incomplete_details: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    input_tokens_details: Option<Value>,
}

impl WireUsage {
    fn usage(&self) -> Usage {
        let cached = self
            .input_tokens_details
            .as_ref()
            .and_then(|d| d.get("cached_tokens"))
            .and_then(Value::as_u64)
            .unwrap_or(0);
        Usage::new(
            self.input_tokens.unwrap_or(0),
            self.output_tokens.unwrap_or(0),
        )
        .with_cache(cached, 0)
    }
}

/// Why a response is not an answer: `failed`, `incomplete`, or an error in its body.
fn refusal(response: &Response) -> Option<String> {
    let status = response.status.as_deref();
    if status == Some("incomplete") {
        let reason = response
            .incomplete_details
            .as_ref()
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        return Some(format!(
            "the response is incomplete ({})",
            bounded(reason, MAX_NAME_LEN)
        ));
    }
    let error = response.error.as_ref().filter(|e| !e.is_null());
    if status == Some("failed") || error.is_some() {
        let message = error.and_then(|e| error_message(&json!({ "error": e })));
        return Some(match message {
            Some(message) => format!("the response failed: {message}"),
            None => "the response failed".to_owned(),
        });
    }
    None
}

/// The text of a `message` output item: its `output_text` and `refusal` parts.
fn message_text(item: &Value, text: &mut String) {
    let parts = item.get("content").and_then(Value::as_array);
    for part in parts.into_iter().flatten() {
        let piece = match part.get("type").and_then(Value::as_str) {
            Some("output_text") => part.get("text"),
            Some("refusal") => part.get("refusal"),
            _ => None,
        };
        if let Some(piece) = piece.and_then(Value::as_str) {
            text.push_str(piece);
        }
    }
}

pub(super) fn parse(body: &[u8]) -> Result<ModelResponse, ModelError> {
    let response: Response = serde_json::from_slice(body).map_err(|e| unreadable("response", e))?;
    if let Some(reason) = refusal(&response) {
        return Err(ModelError::new(reason));
    }
    let Some(output) = response.output else {
        return Err(ModelError::new("the response has no output"));
    };
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    let mut held = Vec::new();
    for item in output {
        match item.get("type").and_then(Value::as_str) {
            Some("function_call") => {
                let str_of = |key: &str| item.get(key).and_then(Value::as_str);
                let Some(name) = str_of("name") else {
                    return Err(ModelError::new(
                        "the response has a function call without a name",
                    ));
                };
                let id = match str_of("call_id") {
                    Some(id) if !id.is_empty() => id.to_owned(),
                    _ => format!("call_{}", tool_calls.len()),
                };
                let arguments = arguments_from_text(str_of("arguments").unwrap_or("").to_owned());
                let mut call = ToolCall::new(id, name, arguments);
                if let Some(state) = call_state(str_of("id"), std::mem::take(&mut held)) {
                    call = call.with_provider_data(state);
                }
                tool_calls.push(call);
            }
            Some("message") => {
                message_text(&item, &mut text);
                held.push(item);
            }
            Some("reasoning") => held.push(item),
            // hosted tools and items added later: not part of the answer
            _ => {}
        }
    }
    Ok(ModelResponse {
        text: (!text.is_empty()).then_some(text),
        tool_calls,
        usage: response.usage.map(|u| u.usage()).unwrap_or_default(),
    })
}

/// One event of a streamed response, by its `type`.
#[derive(Deserialize)]
struct StreamEvent {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    item: Option<Value>,
    #[serde(default)]
    item_id: Option<String>,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    delta: Option<String>,
    /// The whole arguments, in `response.function_call_arguments.done`.
    #[serde(default)]
    arguments: Option<String>,
    #[serde(default)]
    response: Option<Response>,
    /// The `error` event's own fields.
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: Option<String>,
}

/// Reads the events of a streamed response; see the [module docs](self). A call is started
/// when its item is added, and its argument deltas are matched to it by item id (or output
/// index), looked up, not searched for.
#[derive(Default)]
pub(super) struct Events {
    /// The started calls: index in the answer by item id.
    by_id: HashMap<String, usize>,
    /// The started calls: index in the answer by output index.
    by_output: HashMap<u64, usize>,
    /// Reasoning and message items done since the last call started.
    held: Vec<Value>,
    /// Whether each started call had arguments yet (else `.done` gives them whole).
    has_arguments: Vec<bool>,
}

impl Events {
    fn call_of(&self, event: &StreamEvent) -> Result<usize, Failed> {
        let found = match (&event.item_id, event.output_index) {
            (Some(id), _) if self.by_id.contains_key(id) => self.by_id.get(id).copied(),
            (_, Some(index)) => self.by_output.get(&index).copied(),
            _ => None,
        };
        found.ok_or_else(|| {
            Failed::new(
                "the response stream sent arguments for an item that is not a function call",
                false,
            )
        })
    }
}

impl Decode for Events {
    fn event(&mut self, event: SseEvent, answer: &mut Assembly) -> Result<bool, Failed> {
        let event: StreamEvent =
            serde_json::from_str(&event.data).map_err(|e| unreadable_event("response event", e))?;
        match event.kind.as_str() {
            "response.output_text.delta" | "response.refusal.delta" => {
                answer.text(event.delta.as_deref().unwrap_or(""))?;
            }
            "response.output_item.added" => {
                let Some(item) = &event.item else {
                    return Ok(false);
                };
                if item.get("type").and_then(Value::as_str) != Some("function_call") {
                    return Ok(false);
                }
                let str_of = |key: &str| item.get(key).and_then(Value::as_str);
                let id = match str_of("call_id") {
                    Some(id) if !id.is_empty() => id.to_owned(),
                    _ => format!("call_{}", answer.calls()),
                };
                let name = str_of("name").unwrap_or("").to_owned();
                let index = answer.start_call(id, name)?;
                if let Some(state) = call_state(str_of("id"), std::mem::take(&mut self.held)) {
                    answer.provider_data(index, state);
                }
                if let Some(item_id) = str_of("id") {
                    self.by_id.entry(item_id.to_owned()).or_insert(index);
                }
                if let Some(output) = event.output_index {
                    self.by_output.entry(output).or_insert(index);
                }
                let arguments = str_of("arguments").unwrap_or("");
                self.has_arguments.push(!arguments.is_empty());
                answer.arguments(index, arguments)?;
            }
            "response.function_call_arguments.delta" => {
                let index = self.call_of(&event)?;
                let delta = event.delta.as_deref().unwrap_or("");
                self.has_arguments[index] |= !delta.is_empty();
                answer.arguments(index, delta)?;
            }
            "response.function_call_arguments.done" => {
                // the arguments whole: used only by a server that sent no deltas
                let index = self.call_of(&event)?;
                if !std::mem::replace(&mut self.has_arguments[index], true) {
                    answer.arguments(index, event.arguments.as_deref().unwrap_or(""))?;
                }
            }
            "response.output_item.done" => {
                if let Some(item) = event.item {
                    let kind = item.get("type").and_then(Value::as_str);
                    if matches!(kind, Some("reasoning" | "message")) {
                        self.held.push(item);
                    }
                }
            }
            "response.completed" => {
                if let Some(response) = event.response {
                    if let Some(reason) = refusal(&response) {
                        return Err(Failed::new(reason, false));
                    }
                    if let Some(usage) = response.usage {
                        answer.usage = usage.usage();
                    }
                }
                return Ok(true);
            }
            "response.failed" | "response.incomplete" => {
                let reason = event
                    .response
                    .as_ref()
                    .and_then(refusal)
                    .unwrap_or_else(|| format!("the response stream ended with {}", event.kind));
                return Err(Failed::new(reason, false));
            }
            "error" => {
                let mut error = Map::new();
                if let Some(code) = event.code {
                    error.insert("type".into(), code);
                }
                error.insert(
                    "message".into(),
                    Value::from(event.message.unwrap_or_default()),
                );
                return Err(error_event(&json!({ "error": error })));
            }
            // created, in_progress, content parts, `.done` events whose content the deltas
            // already gave, and events added later
            _ => {}
        }
        Ok(false)
    }

    fn parse_whole(body: &[u8]) -> Result<ModelResponse, ModelError> {
        parse(body)
    }
}
