//! [`OpenAi`]: the Chat Completions API, at OpenAI or any compatible server.
//!
//! ```no_run
//! use reticent::providers::openai::OpenAi;
//!
//! // OpenAI itself
//! let model = OpenAi::new(std::env::var("OPENAI_API_KEY")?, "gpt-4o-mini");
//!
//! // a local Ollama (no key; strict mode is OpenAI's)
//! let local = OpenAi::new("", "llama3.2")
//!     .base_url("http://localhost:11434/v1")
//!     .strict(false);
//! # let _ = (model, local);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! How the conversation maps onto the API:
//!
//! - the system prompt is the first message, `role: "system"`;
//! - the model's tool calls are `tool_calls` of its `assistant` message, with
//!   `function.arguments` a JSON string;
//! - a tool result is a `role: "tool"` message with the call's `tool_call_id`. The API has no
//!   error flag: the text of a failed call already says that it failed;
//! - arguments that are not valid JSON reach the agent as the raw text
//!   ([`serde_json::Value::String`]), which the agent reports to the model as invalid
//!   arguments, so the model can correct the call;
//! - tool schemas are sent in [`SchemaDialect::OpenAiStrict`] with `"strict": true` unless
//!   [`OpenAi::strict`] turns it off;
//! - [`Model::stream`](crate::Model::stream) asks for `"stream": true` with `stream_options.include_usage`:
//!   `content` and `refusal` deltas are text, `tool_calls` fragments are matched to their call
//!   by `index`, the usage comes in the last chunk, and `data: [DONE]` ends the stream.
//!
//! One file per wire format, longer than most: the request encoding (with the strict schema
//! dialect), the response decoding and the streamed chunks of one API change together when the
//! API does, and are read together.

use std::collections::HashMap;

use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::endpoint::{Endpoint, Wire, endpoint_model};
use super::http::{Failed, error_message, join, secret_header, unreadable, unreadable_event};
use super::stream::{Assembly, Decode, arguments_from_text, error_event};
use crate::model::SchemaDialect;
use crate::model::{Arguments, Message, ModelError, ModelRequest, ModelResponse, ToolCall, Usage};
use crate::secret::Secret;

/// A model behind the OpenAI Chat Completions API (`POST {base_url}/chat/completions`).
///
/// Works with OpenAI and with compatible servers: Ollama (`http://localhost:11434/v1`), vLLM,
/// llama.cpp's server and others. See the [module docs](self) for how requests are built.
#[derive(Clone)]
pub struct OpenAi {
    endpoint: Endpoint<ChatCompletions>,
}

endpoint_model!(OpenAi);

/// The Chat Completions wire format.
#[derive(Clone, Debug)]
pub(super) struct ChatCompletions {
    strict: bool,
}

impl OpenAi {
    /// OpenAI's own endpoint.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// Ollama's OpenAI-compatible endpoint on this machine.
    pub const OLLAMA_BASE_URL: &'static str = "http://localhost:11434/v1";

    /// The model `model` at OpenAI, with this API key. An empty key sends no `Authorization`
    /// header (for local servers).
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        let wire = ChatCompletions { strict: true };
        Self {
            endpoint: Endpoint::new(api_key.into(), model.into(), Self::DEFAULT_BASE_URL, wire),
        }
    }

    pub(super) fn ollama_from_lookup(model: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Self {
        Self::new("", model)
            .base_url(ollama_base_url(lookup))
            .strict(false)
    }

    /// Sends tool schemas in OpenAI's strict mode (`"strict": true`, schemas converted with
    /// [`SchemaDialect::OpenAiStrict`]). On by default; turn it off for servers or models
    /// without strict mode, or for tools whose parameters strict mode cannot express (free-form
    /// maps, values of any type).
    #[must_use]
    pub fn strict(mut self, strict: bool) -> Self {
        self.endpoint.wire.strict = strict;
        self
    }

    super::endpoint::endpoint_setters!(
        key: "OPENAI_API_KEY",
        base: "OPENAI_BASE_URL",
        key_optional: true,
        endpoint: "The endpoint, up to and including the version: `https://api.openai.com/v1`, `http://localhost:11434/v1`. Requests go to `{base_url}/chat/completions`.",
    );

    super::http::transport_setters!(
        retried: "`408`, `409`, `429` or `5xx`",
        params: "`temperature`, `max_completion_tokens`, `seed` or `reasoning_effort`",
    );
}

/// `Authorization: Bearer KEY`, or no header for an empty key (local servers).
pub(super) fn bearer(api_key: &Secret<String>) -> Result<HeaderMap, ModelError> {
    let mut headers = HeaderMap::new();
    if !api_key.expose().is_empty() {
        let value = secret_header(format!("Bearer {}", api_key.expose()))?;
        headers.insert(AUTHORIZATION, value);
    }
    Ok(headers)
}

/// Ollama's OpenAI-compatible endpoint at `OLLAMA_HOST`, else on this machine.
pub(super) fn ollama_base_url(lookup: &dyn Fn(&str) -> Option<String>) -> String {
    match lookup("OLLAMA_HOST") {
        Some(host) => {
            let host = host.trim().trim_end_matches('/');
            let host = if host.contains("://") {
                host.to_owned()
            } else {
                format!("http://{host}")
            };
            format!("{host}/v1")
        }
        None => OpenAi::OLLAMA_BASE_URL.to_owned(),
    }
}

impl Wire for ChatCompletions {
    type Events = Chunks;

    fn url(&self, base_url: &str, _model: &str, _stream: bool) -> String {
        join(base_url, "/chat/completions")
    }

    fn headers(&self, api_key: &Secret<String>) -> Result<HeaderMap, ModelError> {
        bearer(api_key)
    }

    /// The body of the request for `request`; `stream` asks for server-sent events, with the
    /// usage at the end.
    fn body(&self, model: &str, request: &ModelRequest, stream: bool) -> Map<String, Value> {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(system) = &request.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for message in &request.messages {
            messages.push(match message {
                Message::User { text } => json!({"role": "user", "content": text}),
                Message::Assistant { text, tool_calls } => {
                    let mut out = Map::new();
                    out.insert("role".into(), "assistant".into());
                    let content = match text {
                        Some(text) => Value::from(text.as_str()),
                        None if tool_calls.is_empty() => Value::from(""),
                        None => Value::Null,
                    };
                    out.insert("content".into(), content);
                    if !tool_calls.is_empty() {
                        let calls = tool_calls.iter().map(wire_call).collect();
                        out.insert("tool_calls".into(), Value::Array(calls));
                    }
                    Value::Object(out)
                }
                Message::Tool(result) => json!({
                    "role": "tool",
                    "tool_call_id": result.call_id,
                    "content": result.content,
                }),
            });
        }
        let mut body = Map::new();
        body.insert("model".into(), Value::from(model));
        body.insert("messages".into(), Value::Array(messages));
        if !request.tools.is_empty() {
            let tools = request
                .tools
                .iter()
                .map(|tool| {
                    let mut function = Map::new();
                    function.insert("name".into(), Value::from(tool.name.as_str()));
                    function.insert("description".into(), Value::from(tool.description.as_str()));
                    function.insert("parameters".into(), tool.parameters.clone());
                    if self.strict {
                        function.insert("strict".into(), Value::Bool(true));
                    }
                    json!({"type": "function", "function": function})
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        if stream {
            body.insert("stream".into(), Value::Bool(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
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

fn wire_call(call: &ToolCall) -> Value {
    // the text the model produced (also when it was not JSON), or the value written out
    let arguments = call.arguments.to_json_text();
    json!({
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    })
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// An error in a body with a successful status, which some servers send.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireCall>>,
}

#[derive(Deserialize)]
struct WireCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<Value>,
}

impl WireUsage {
    /// The prompt counts cached tokens too, which are also reported as cache reads.
    fn usage(&self) -> Usage {
        let cached = self
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.get("cached_tokens"))
            .and_then(Value::as_u64)
            .unwrap_or(0);
        Usage::new(
            self.prompt_tokens.unwrap_or(0),
            self.completion_tokens.unwrap_or(0),
        )
        .with_cache(cached, 0)
    }
}

pub(super) fn parse(body: &[u8]) -> Result<ModelResponse, ModelError> {
    let completion: Completion =
        serde_json::from_slice(body).map_err(|e| unreadable("chat completion", e))?;
    let usage = completion.usage.map(|u| u.usage()).unwrap_or_default();
    let Some(choice) = completion.choices.into_iter().next() else {
        // Some servers answer an error with a successful status.
        let error = completion.error.map(|error| json!({ "error": error }));
        return Err(match error.as_ref().and_then(error_message) {
            Some(message) => ModelError::new(format!(
                "the chat completion has no choices; it is an error: {message}"
            )),
            None => ModelError::new("the chat completion has no choices"),
        });
    };
    let message = choice.message;
    let text = match message.content {
        Some(Value::String(text)) => Some(text),
        // content parts: keep the text ones
        Some(Value::Array(parts)) => {
            let text: String = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            Some(text)
        }
        _ => None,
    }
    .filter(|t| !t.is_empty())
    .or(message.refusal);
    let tool_calls = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, call)| {
            ToolCall::new(
                call.id.unwrap_or_else(|| format!("call_{i}")),
                call.function.name,
                arguments(call.function.arguments),
            )
        })
        .collect();
    Ok(ModelResponse {
        text,
        tool_calls,
        usage,
    })
}

/// The arguments as JSON; the raw text when it is not JSON, for the agent to report to the
/// model as invalid arguments.
fn arguments(raw: Option<Value>) -> Arguments {
    match raw {
        None | Some(Value::Null) => Arguments::empty(),
        Some(Value::String(text)) => arguments_from_text(text),
        // some compatible servers send an object
        Some(other) => Arguments::from(other),
    }
}

/// One event of a streamed chat completion: `choices[].delta` fragments, the usage (in the
/// last chunk, whose `choices` is empty), or an error.
#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<ChunkChoice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CallDelta>>,
}

#[derive(Deserialize)]
struct CallDelta {
    /// Which call the fragment belongs to; some servers leave it out.
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

/// Reads the events of a streamed chat completion. Text and refusal deltas are text; tool
/// call fragments are matched to their call by `index` (by `id`, or to the last call, when a
/// server leaves `index` out), looked up, not searched for; a call starts once its name is
/// known. `data: [DONE]` ends the stream; a stream that closes after a `finish_reason` and the
/// usage (asked for with `include_usage`, sent after the `finish_reason`) without it ends too.
/// One that closes between the two was cut short: its usage is lost.
#[derive(Default)]
pub(super) struct Chunks {
    /// The calls seen, in the order their first fragment came; at most `max_tool_calls`,
    /// started or not.
    calls: Vec<WireCallState>,
    /// Where each call is in `calls`, by its `index`.
    by_index: HashMap<u64, usize>,
    /// Where each call is in `calls`, by its id (the first call to have it).
    by_id: HashMap<String, usize>,
    finished: bool,
    /// Whether the usage came.
    counted: bool,
}

/// A tool call as its fragments arrive.
struct WireCallState {
    id: Option<String>,
    name: Option<String>,
    /// Its index in the answer, once it started.
    started: Option<usize>,
    /// Arguments that arrived before it started.
    held: String,
}

impl Chunks {
    fn fragment(&mut self, delta: CallDelta, answer: &mut Assembly) -> Result<(), Failed> {
        let found = match (delta.index, &delta.id) {
            (Some(key), _) => self.by_index.get(&key).copied(),
            // an id not seen before starts a new call
            (None, Some(id)) => self.by_id.get(id).copied(),
            (None, None) => self.calls.len().checked_sub(1),
        };
        let position = match found {
            Some(position) => position,
            None => self.add(delta.index, answer)?,
        };
        let (name, arguments) = match delta.function {
            Some(function) => (function.name, function.arguments),
            None => (None, None),
        };
        if self.calls[position].started.is_none() {
            if let Some(id) = delta.id.filter(|id| !id.is_empty()) {
                self.set_id(position, id);
            }
            if let Some(name) = name.filter(|name| !name.is_empty()) {
                self.calls[position].name = Some(name);
            }
        }
        let fragment = match arguments {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text,
            // some compatible servers send the arguments as an object
            Some(other) => other.to_string(),
        };
        let call = &mut self.calls[position];
        match call.started {
            Some(index) => answer.arguments(index, &fragment)?,
            None => {
                if fragment.len() > answer.limit() - call.held.len() {
                    return Err(answer.arguments_too_large(call.name.as_deref().unwrap_or("")));
                }
                call.held.push_str(&fragment);
                if call.name.is_some() {
                    let index = self.start(position, answer)?;
                    let held = std::mem::take(&mut self.calls[position].held);
                    answer.arguments(index, &held)?;
                }
            }
        }
        Ok(())
    }

    /// A new call, with this `index` if it has one; refused past `max_tool_calls`, started
    /// or not.
    fn add(&mut self, index: Option<u64>, answer: &Assembly) -> Result<usize, Failed> {
        if self.calls.len() >= answer.max_calls() {
            return Err(answer.too_many_calls());
        }
        let position = self.calls.len();
        self.calls.push(WireCallState {
            id: None,
            name: None,
            started: None,
            held: String::new(),
        });
        if let Some(index) = index {
            self.by_index.insert(index, position);
        }
        Ok(position)
    }

    /// Gives the call at `position` the id `id`, in place of the one it had.
    fn set_id(&mut self, position: usize, id: String) {
        let call = &mut self.calls[position];
        if call.id.as_ref() == Some(&id) {
            return;
        }
        if let Some(old) = call.id.take()
            && self.by_id.get(&old) == Some(&position)
        {
            self.by_id.remove(&old);
        }
        self.by_id.entry(id.clone()).or_insert(position);
        self.calls[position].id = Some(id);
    }

    /// Starts the call at `position` in the answer.
    fn start(&mut self, position: usize, answer: &mut Assembly) -> Result<usize, Failed> {
        let id = match &self.calls[position].id {
            Some(id) => id.clone(),
            None => {
                let id = format!("call_{}", answer.calls());
                self.set_id(position, id.clone());
                id
            }
        };
        let call = &mut self.calls[position];
        let index = answer.start_call(id, call.name.clone().unwrap_or_default())?;
        call.started = Some(index);
        Ok(index)
    }
}

impl Decode for Chunks {
    fn event(
        &mut self,
        event: super::sse::SseEvent,
        answer: &mut Assembly,
    ) -> Result<bool, Failed> {
        if event.data.trim() == "[DONE]" {
            return Ok(true);
        }
        let chunk: Chunk = serde_json::from_str(&event.data)
            .map_err(|e| unreadable_event("chat completion chunk", e))?;
        if let Some(error) = chunk.error {
            return Err(error_event(&json!({ "error": error })));
        }
        for choice in chunk.choices.unwrap_or_default() {
            // with `n` above 1, the first choice is the answer, as for `complete`
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if choice.finish_reason.is_some() {
                self.finished = true;
            }
            let Some(delta) = choice.delta else {
                continue;
            };
            match delta.content {
                Some(Value::String(text)) => answer.text(&text)?,
                Some(Value::Array(parts)) => {
                    for part in &parts {
                        if let Some(text) = part.get("text").and_then(Value::as_str) {
                            answer.text(text)?;
                        }
                    }
                }
                _ => {}
            }
            if let Some(refusal) = delta.refusal {
                answer.text(&refusal)?;
            }
            for call in delta.tool_calls.unwrap_or_default() {
                self.fragment(call, answer)?;
            }
        }
        if let Some(usage) = chunk.usage {
            self.counted = true;
            answer.usage = usage.usage();
        }
        Ok(false)
    }

    fn end(&mut self) -> Result<(), Failed> {
        // calls whose name never came: as `complete`, a call without a name is unreadable
        if let Some(position) = self.calls.iter().position(|c| c.started.is_none()) {
            return Err(Failed::new(
                format!("the chat completion stream sent tool call {position} without a name"),
                false,
            ));
        }
        Ok(())
    }

    fn may_end(&self) -> bool {
        self.finished && self.counted
    }

    fn parse_whole(body: &[u8]) -> Result<ModelResponse, ModelError> {
        parse(body)
    }
}
