//! [`Gemini`]: the Gemini API (`generateContent`).
//!
//! ```no_run
//! use reticent::providers::gemini::Gemini;
//!
//! let model = Gemini::new(std::env::var("GEMINI_API_KEY")?, "gemini-2.5-flash");
//! # let _ = model;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! How the conversation maps onto the API:
//!
//! - requests go to `{base_url}/models/{model}:generateContent`, streamed ones to
//!   `:streamGenerateContent?alt=sse`, with the key in `x-goog-api-key`;
//! - the system prompt is `systemInstruction`;
//! - the model's tool calls are `functionCall` parts of its `model` turn. A call keeps the
//!   `thoughtSignature` of the part it came on, and the id the API gave it (when it gave one),
//!   in [`ToolCall::provider_data`] under `"gemini"`; both go back on the same part next
//!   turn, so thinking models keep their reasoning (Gemini 3 refuses a call without its
//!   signature). They are saved with the conversation, so they survive a saved and resumed
//!   run and a replayed trajectory;
//! - a tool result is a `functionResponse` part with the call's name (and id, if it had one):
//!   `response.output` for a success, `response.error` for a failure, the failure's text being
//!   what the disclosure rules let the model see. The results of one turn form one `user` turn;
//!   calls without ids are matched to their results by order;
//! - tool schemas are sent in [`SchemaDialect::Gemini`] as `functionDeclarations`; a tool with
//!   no parameters is sent without `parameters` (the API refuses an object with none);
//! - usage: `promptTokenCount` (cached tokens included, `cachedContentTokenCount` reported as
//!   cache reads), `candidatesTokenCount` plus `thoughtsTokenCount` out;
//! - a prompt blocked for safety (`promptFeedback.blockReason`) and any `finishReason` other
//!   than `STOP` (`MAX_TOKENS`, `SAFETY`, `RECITATION`, `MALFORMED_FUNCTION_CALL`, ...) is a
//!   [`ModelError`] that names the reason, not a partial answer;
//! - thought summaries (`"thought": true` parts) are not part of the answer;
//! - [`Model::stream`](crate::Model::stream) reads the server-sent events: each is a
//!   response whose text parts are deltas and whose `functionCall` parts come whole; the stream
//!   ends with the connection after the chunk with a `finishReason`.
//!
//! One file per wire format, longer than most: the request encoding, the response decoding and
//! the streamed chunks of one API change together when the API does, and are read together.

use std::collections::HashMap;

use reqwest::header::{HeaderMap, HeaderName};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::endpoint::{Endpoint, Wire, endpoint_model};
use super::http::{Failed, error_message, join, secret_header, unreadable, unreadable_event};
use super::sse::SseEvent;
use super::stream::{Assembly, Decode, error_event};
use crate::model::{
    Arguments, Message, ModelError, ModelRequest, ModelResponse, SchemaDialect, ToolCall, Usage,
};
use crate::render::{MAX_NAME_LEN, bounded};
use crate::secret::Secret;

/// The key of Gemini's state in [`ToolCall::provider_data`].
const KEY: &str = "gemini";

/// A model behind the Gemini API (`POST {base_url}/models/{model}:generateContent`).
///
/// See the [module docs](self) for how requests are built.
#[derive(Clone)]
pub struct Gemini {
    endpoint: Endpoint<GenerateContent>,
}

endpoint_model!(Gemini);

/// The `generateContent` wire format.
#[derive(Clone, Debug)]
pub(super) struct GenerateContent;

impl Gemini {
    /// Google's endpoint, with the version.
    pub const DEFAULT_BASE_URL: &'static str = "https://generativelanguage.googleapis.com/v1beta";

    /// The model `model` (`gemini-2.5-flash`; a leading `models/` is allowed), with this API
    /// key.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        let model: String = model.into();
        let model = model
            .strip_prefix("models/")
            .map(str::to_owned)
            .unwrap_or(model);
        Self {
            endpoint: Endpoint::new(
                api_key.into(),
                model,
                Self::DEFAULT_BASE_URL,
                GenerateContent,
            ),
        }
    }

    super::endpoint::endpoint_setters!(
        key: "GEMINI_API_KEY",
        base: "GEMINI_BASE_URL",
        key_optional: false,
        endpoint: "The endpoint, up to and including the version: `https://generativelanguage.googleapis.com/v1beta`. Requests go to `{base_url}/models/{model}:generateContent`.",
    );

    super::http::transport_setters!(
        retried: "`408`, `409`, `429` or `5xx`",
        params: "`generationConfig`, `safetySettings` or `toolConfig`",
    );
}

impl Wire for GenerateContent {
    type Events = Chunks;

    fn url(&self, base_url: &str, model: &str, stream: bool) -> String {
        let method = if stream {
            ":streamGenerateContent?alt=sse"
        } else {
            ":generateContent"
        };
        join(base_url, &format!("/models/{model}{method}"))
    }

    fn headers(&self, api_key: &Secret<String>) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("x-goog-api-key"),
            secret_header(api_key.expose().clone())?,
        );
        Ok(headers)
    }

    fn body(&self, _model: &str, request: &ModelRequest, _stream: bool) -> Map<String, Value> {
        let mut contents = Vec::new();
        // parts of the user turn being built: function responses, then any text after them
        let mut user: Vec<Value> = Vec::new();
        // whether each call of the last model turn had an id from the API, by its id
        let mut api_ids: HashMap<&str, bool> = HashMap::new();
        let flush = |contents: &mut Vec<Value>, user: &mut Vec<Value>| {
            if !user.is_empty() {
                contents.push(json!({"role": "user", "parts": std::mem::take(user)}));
            }
        };
        for message in &request.messages {
            match message {
                Message::User { text } => user.push(json!({"text": text})),
                Message::Tool(result) => {
                    let key = if result.is_error { "error" } else { "output" };
                    let mut response = Map::new();
                    response.insert("name".into(), Value::from(result.name.as_str()));
                    if api_ids.get(result.call_id.as_str()) == Some(&true) {
                        response.insert("id".into(), Value::from(result.call_id.as_str()));
                    }
                    response.insert("response".into(), json!({ key: result.content }));
                    user.push(json!({ "functionResponse": response }));
                }
                Message::Assistant { text, tool_calls } => {
                    flush(&mut contents, &mut user);
                    let mut parts = Vec::new();
                    if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                        parts.push(json!({"text": text}));
                    }
                    api_ids.clear();
                    for call in tool_calls {
                        let state = call.provider_data.as_ref().and_then(|d| d.get(KEY));
                        let had_id = state.is_some_and(|s| s.get("id").is_some());
                        api_ids.insert(&call.id, had_id);
                        parts.push(function_call(call, state, had_id));
                    }
                    // the API refuses a turn without parts; an empty turn says nothing anyway
                    if !parts.is_empty() {
                        contents.push(json!({"role": "model", "parts": parts}));
                    }
                }
            }
        }
        flush(&mut contents, &mut user);

        let mut body = Map::new();
        if let Some(system) = &request.system {
            body.insert(
                "systemInstruction".into(),
                json!({"parts": [{"text": system}]}),
            );
        }
        body.insert("contents".into(), Value::Array(contents));
        if !request.tools.is_empty() {
            let declarations: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    let mut declaration = Map::new();
                    declaration.insert("name".into(), Value::from(tool.name.as_str()));
                    declaration
                        .insert("description".into(), Value::from(tool.description.as_str()));
                    let has_properties = tool
                        .parameters
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_some_and(|p| !p.is_empty());
                    if has_properties {
                        declaration.insert("parameters".into(), tool.parameters.clone());
                    }
                    Value::Object(declaration)
                })
                .collect();
            body.insert(
                "tools".into(),
                json!([{ "functionDeclarations": declarations }]),
            );
        }
        body
    }

    fn schema_dialect(&self) -> SchemaDialect {
        SchemaDialect::Gemini
    }
}

/// The `functionCall` part of `call`, with the signature it came with, and its id when the
/// API gave it one.
fn function_call(call: &ToolCall, state: Option<&Value>, had_id: bool) -> Value {
    let args = match call.arguments.value() {
        object @ Value::Object(_) => object.clone(),
        // `args` must be an object; arguments that were not one were already answered as
        // invalid
        _ => Value::Object(Map::new()),
    };
    let mut function = Map::new();
    if had_id {
        function.insert("id".into(), Value::from(call.id.as_str()));
    }
    function.insert("name".into(), Value::from(call.name.as_str()));
    function.insert("args".into(), args);
    let mut part = Map::new();
    part.insert("functionCall".into(), Value::Object(function));
    if let Some(signature) = state.and_then(|s| s.get("thoughtSignature")) {
        part.insert("thoughtSignature".into(), signature.clone());
    }
    Value::Object(part)
}

/// A `GenerateContentResponse`, whole or one chunk of a stream.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    #[serde(default)]
    candidates: Option<Vec<Candidate>>,
    #[serde(default)]
    usage_metadata: Option<WireUsage>,
    #[serde(default)]
    prompt_feedback: Option<PromptFeedback>,
    /// An error in a body with a successful status, or in a stream.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    finish_message: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    parts: Vec<Part>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part {
    #[serde(default)]
    text: Option<String>,
    /// A thought summary, not part of the answer.
    #[serde(default)]
    thought: Option<bool>,
    #[serde(default)]
    thought_signature: Option<String>,
    #[serde(default)]
    function_call: Option<FunctionCall>,
}

#[derive(Deserialize)]
struct FunctionCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    args: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    #[serde(default)]
    block_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    #[serde(default)]
    prompt_token_count: Option<u64>,
    #[serde(default)]
    candidates_token_count: Option<u64>,
    #[serde(default)]
    thoughts_token_count: Option<u64>,
    #[serde(default)]
    cached_content_token_count: Option<u64>,
}

impl WireUsage {
    fn usage(&self) -> Usage {
        let output = self
            .candidates_token_count
            .unwrap_or(0)
            .saturating_add(self.thoughts_token_count.unwrap_or(0));
        Usage::new(self.prompt_token_count.unwrap_or(0), output)
            .with_cache(self.cached_content_token_count.unwrap_or(0), 0)
    }
}

/// Why a response is not an answer: a blocked prompt, an error in the body, or a finish
/// reason other than `STOP`. `None` for an answer (or a chunk of one).
fn refusal(response: &Response) -> Option<String> {
    if let Some(reason) = response
        .prompt_feedback
        .as_ref()
        .and_then(|f| f.block_reason.as_deref())
    {
        return Some(format!(
            "the prompt was blocked ({})",
            bounded(reason, MAX_NAME_LEN)
        ));
    }
    let candidate = response.candidates.as_ref()?.first()?;
    let reason = candidate.finish_reason.as_deref()?;
    if reason == "STOP" || reason == "FINISH_REASON_UNSPECIFIED" {
        return None;
    }
    let what = match reason {
        "MAX_TOKENS" => "the answer was cut off at the token limit",
        "SAFETY" | "PROHIBITED_CONTENT" | "SPII" | "BLOCKLIST" | "IMAGE_SAFETY" => {
            "the answer was blocked for safety"
        }
        "RECITATION" => "the answer was blocked for reciting training data",
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" => {
            "the model produced a function call the API could not read"
        }
        _ => "the model stopped without an answer",
    };
    let mut message = format!("{what} (finishReason {})", bounded(reason, MAX_NAME_LEN));
    if let Some(detail) = candidate.finish_message.as_deref() {
        message.push_str(": ");
        message.push_str(&bounded(detail, 512));
    }
    Some(message)
}

/// The call of a `functionCall` part: its id (or `call_{index}`), and what must go back with
/// it.
fn call_of(function: FunctionCall, signature: Option<String>, index: usize) -> ToolCall {
    let mut state = Map::new();
    if let Some(signature) = signature {
        state.insert("thoughtSignature".into(), Value::from(signature));
    }
    let id = match function.id.filter(|id| !id.is_empty()) {
        Some(id) => {
            state.insert("id".into(), Value::from(id.as_str()));
            id
        }
        None => format!("call_{index}"),
    };
    let arguments = match function.args {
        None | Some(Value::Null) => Arguments::empty(),
        Some(args) => Arguments::from(args),
    };
    let call = ToolCall::new(id, function.name, arguments);
    if state.is_empty() {
        call
    } else {
        call.with_provider_data(json!({ KEY: state }))
    }
}

pub(super) fn parse(body: &[u8]) -> Result<ModelResponse, ModelError> {
    let response: Response =
        serde_json::from_slice(body).map_err(|e| unreadable("Gemini response", e))?;
    if let Some(reason) = refusal(&response) {
        return Err(ModelError::new(reason));
    }
    let usage = response
        .usage_metadata
        .as_ref()
        .map(WireUsage::usage)
        .unwrap_or_default();
    let Some(candidate) = response.candidates.and_then(|c| c.into_iter().next()) else {
        let error = response.error.map(|error| json!({ "error": error }));
        return Err(match error.as_ref().and_then(error_message) {
            Some(message) => ModelError::new(format!(
                "the Gemini response has no candidates; it is an error: {message}"
            )),
            None => ModelError::new("the Gemini response has no candidates"),
        });
    };
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
        if part.thought == Some(true) {
            continue;
        }
        if let Some(function) = part.function_call {
            let index = tool_calls.len();
            tool_calls.push(call_of(function, part.thought_signature, index));
        } else if let Some(t) = part.text {
            text.push_str(&t);
        }
    }
    Ok(ModelResponse {
        text: (!text.is_empty()).then_some(text),
        tool_calls,
        usage,
    })
}

/// Reads the chunks of a streamed response: text parts are deltas, a `functionCall` part is a
/// whole call (started, its arguments in one fragment), each chunk's `usageMetadata` holds the
/// usage so far, and the chunk with a `finishReason` is the last one (the stream then closes).
#[derive(Default)]
pub(super) struct Chunks {
    finished: bool,
}

impl Decode for Chunks {
    fn event(&mut self, event: SseEvent, answer: &mut Assembly) -> Result<bool, Failed> {
        let chunk: Response = serde_json::from_str(&event.data)
            .map_err(|e| unreadable_event("Gemini response chunk", e))?;
        if let Some(error) = &chunk.error {
            // `{"code": 503, "message": .., "status": "UNAVAILABLE"}`: the status is its kind
            let mut error = error.clone();
            if let Some(status) = error.get("status").cloned()
                && let Some(fields) = error.as_object_mut()
            {
                fields.insert("type".into(), status);
            }
            return Err(error_event(&json!({ "error": error })));
        }
        if let Some(reason) = refusal(&chunk) {
            return Err(Failed::new(reason, false));
        }
        if let Some(usage) = &chunk.usage_metadata {
            answer.usage = usage.usage();
        }
        let Some(candidate) = chunk.candidates.and_then(|c| c.into_iter().next()) else {
            return Ok(false);
        };
        for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
            if part.thought == Some(true) {
                continue;
            }
            if let Some(function) = part.function_call {
                let call = call_of(function, part.thought_signature, answer.calls());
                let arguments = call.arguments.to_json_text();
                let index = answer.start_call(call.id, call.name)?;
                if let Some(data) = call.provider_data {
                    answer.provider_data(index, data);
                }
                answer.arguments(index, &arguments)?;
            } else if let Some(text) = part.text {
                answer.text(&text)?;
            }
        }
        if candidate.finish_reason.is_some() {
            self.finished = true;
        }
        Ok(false)
    }

    fn may_end(&self) -> bool {
        self.finished
    }

    fn parse_whole(body: &[u8]) -> Result<ModelResponse, ModelError> {
        parse(body)
    }
}
