//! [`Anthropic`]: the Messages API.
//!
//! ```no_run
//! use reticent::providers::anthropic::Anthropic;
//!
//! let model = Anthropic::new(std::env::var("ANTHROPIC_API_KEY")?, "claude-sonnet-4-5")
//!     .max_tokens(2048);
//! # let _ = model;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! How the conversation maps onto the API:
//!
//! - the system prompt is the top-level `system` field;
//! - the model's tool calls are `tool_use` blocks of its `assistant` message;
//! - tool results are `tool_result` blocks with `is_error: true` for a failed call, and the
//!   results of one turn (with any note the agent adds after them) form one `user` message;
//! - tool schemas are sent as they are ([`SchemaDialect::Standard`]) as `input_schema`;
//! - the system prompt and the last tool definition are cache breakpoints
//!   (`cache_control: {"type": "ephemeral"}`) unless [`Anthropic::cache`] turns them off, so
//!   the turns of a run read the prompt's unchanging start from the cache;
//! - with [`Anthropic::strict`], tools whose schema qualifies carry `"strict": true`;
//! - usage: `input_tokens` counts cached input too, and the cache reads and writes
//!   (`cache_read_input_tokens`, `cache_creation_input_tokens`) are reported apart;
//! - [`Model::stream`](crate::Model::stream) asks for `"stream": true` and reads the events from `message_start` to
//!   `message_stop`: `text_delta`s are text, `input_json_delta` fragments are the arguments of
//!   the `tool_use` block they name, thinking blocks and `ping`s are skipped, and an `error`
//!   event is an error.
//!
//! One file per wire format, longer than most: the request encoding, the response decoding and
//! the streamed events of one API change together when the API does, and are read together.

use std::collections::HashMap;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::endpoint::{Endpoint, Wire, endpoint_model};
use super::http::{Failed, error_message, join, secret_header, unreadable, unreadable_event};
use super::sse::SseEvent;
use super::stream::{Assembly, Decode, error_event};
use crate::model::SchemaDialect;
use crate::model::{Arguments, Message, ModelError, ModelRequest, ModelResponse, ToolCall, Usage};
use crate::secret::Secret;

/// The API version this provider speaks (`anthropic-version`).
pub const API_VERSION: &str = "2023-06-01";

/// A model behind the Anthropic Messages API (`POST {base_url}/v1/messages`).
///
/// See the [module docs](self) for how requests are built.
#[derive(Clone)]
pub struct Anthropic {
    endpoint: Endpoint<Messages>,
}

endpoint_model!(Anthropic);

/// The Messages API wire format.
#[derive(Clone, Debug)]
pub(super) struct Messages {
    max_tokens: u32,
    cache: bool,
    strict: bool,
}

impl Anthropic {
    /// Anthropic's own endpoint.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.anthropic.com";

    /// The most tokens one response may have unless set with [`Anthropic::max_tokens`].
    pub const DEFAULT_MAX_TOKENS: u32 = 4096;

    /// The model `model`, with this API key.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        let wire = Messages {
            max_tokens: Self::DEFAULT_MAX_TOKENS,
            cache: true,
            strict: false,
        };
        Self {
            endpoint: Endpoint::new(api_key.into(), model.into(), Self::DEFAULT_BASE_URL, wire),
        }
    }

    /// The most tokens one response may have (`max_tokens`, which the API requires).
    /// Default 4096.
    #[must_use]
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.endpoint.wire.max_tokens = max_tokens;
        self
    }

    /// Marks the system prompt and the last tool definition as cache breakpoints
    /// (`cache_control: {"type": "ephemeral"}`), so that every turn after the first reads them
    /// from Anthropic's prompt cache instead of paying for them in full; the usage reports
    /// the tokens read from and written to the cache. On by default. A prefix shorter than
    /// the model's minimum for caching (about 1024 tokens) is simply not cached.
    #[must_use]
    pub fn cache(mut self, cache: bool) -> Self {
        self.endpoint.wire.cache = cache;
        self
    }

    /// Sends `"strict": true` on every tool whose schema strict tool use can take, so that
    /// the model's arguments always match the schema: objects closed with
    /// `"additionalProperties": false` and no numeric, length or count constraints
    /// (`minimum`, `maxLength`, `maxItems`, ...), which the agent keeps checking itself. Off
    /// by default: models before Claude Sonnet 4.5, Opus 4.5 and Haiku 4.5 refuse it.
    #[must_use]
    pub fn strict(mut self, strict: bool) -> Self {
        self.endpoint.wire.strict = strict;
        self
    }

    super::endpoint::endpoint_setters!(
        key: "ANTHROPIC_API_KEY",
        base: "ANTHROPIC_BASE_URL",
        key_optional: false,
        endpoint: "The endpoint, without the version: `https://api.anthropic.com`. Requests go to `{base_url}/v1/messages`.",
    );

    super::http::transport_setters!(
        retried: "`408`, `409`, `429` or `5xx` (including `529 overloaded`)",
        params: "`temperature`, `top_p` or `thinking`",
    );
}

impl Wire for Messages {
    type Events = Events;

    fn url(&self, base_url: &str, _model: &str, _stream: bool) -> String {
        join(base_url, "/v1/messages")
    }

    fn headers(&self, api_key: &Secret<String>) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("x-api-key"),
            secret_header(api_key.expose().clone())?,
        );
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        Ok(headers)
    }

    /// The body of the request for `request`; `stream` asks for server-sent events.
    fn body(&self, model: &str, request: &ModelRequest, stream: bool) -> Map<String, Value> {
        let mut messages = Vec::new();
        // blocks of the user turn being built: tool results, then any text after them
        let mut user: Vec<Value> = Vec::new();
        let flush = |messages: &mut Vec<Value>, user: &mut Vec<Value>| {
            if user.is_empty() {
                return;
            }
            let content = match user.as_slice() {
                [only] if only["type"] == "text" => only["text"].clone(),
                _ => Value::Array(std::mem::take(user)),
            };
            user.clear();
            messages.push(json!({"role": "user", "content": content}));
        };
        for message in &request.messages {
            match message {
                Message::User { text } => {
                    user.push(json!({"type": "text", "text": text}));
                }
                Message::Tool(result) => {
                    let mut block = Map::new();
                    block.insert("type".into(), "tool_result".into());
                    block.insert("tool_use_id".into(), Value::from(result.call_id.as_str()));
                    block.insert("content".into(), Value::from(result.content.as_str()));
                    if result.is_error {
                        block.insert("is_error".into(), Value::Bool(true));
                    }
                    user.push(Value::Object(block));
                }
                Message::Assistant { text, tool_calls } => {
                    flush(&mut messages, &mut user);
                    let mut content = Vec::new();
                    if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                        content.push(json!({"type": "text", "text": text}));
                    }
                    content.extend(tool_calls.iter().map(tool_use));
                    // the API refuses empty content; an empty turn says nothing anyway
                    if !content.is_empty() {
                        messages.push(json!({"role": "assistant", "content": content}));
                    }
                }
            }
        }
        flush(&mut messages, &mut user);

        let mut body = Map::new();
        body.insert("model".into(), Value::from(model));
        body.insert("max_tokens".into(), Value::from(self.max_tokens));
        if let Some(system) = &request.system {
            let system = if self.cache {
                json!([{"type": "text", "text": system, "cache_control": ephemeral()}])
            } else {
                Value::from(system.as_str())
            };
            body.insert("system".into(), system);
        }
        body.insert("messages".into(), Value::Array(messages));
        if !request.tools.is_empty() {
            let mut tools: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    let mut definition = Map::new();
                    definition.insert("name".into(), Value::from(tool.name.as_str()));
                    definition.insert("description".into(), Value::from(tool.description.as_str()));
                    definition.insert("input_schema".into(), tool.parameters.clone());
                    if self.strict && strict_schema(&tool.parameters) {
                        definition.insert("strict".into(), Value::Bool(true));
                    }
                    Value::Object(definition)
                })
                .collect();
            if self.cache
                && let Some(Value::Object(last)) = tools.last_mut()
            {
                last.insert("cache_control".into(), ephemeral());
            }
            body.insert("tools".into(), Value::Array(tools));
        }
        if stream {
            body.insert("stream".into(), Value::Bool(true));
        }
        body
    }

    fn schema_dialect(&self) -> SchemaDialect {
        SchemaDialect::Standard
    }
}

/// A cache breakpoint: the prompt up to here is cached for five minutes.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Keywords strict tool use does not take.
const NOT_STRICT: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "patternProperties",
];

/// Whether strict tool use can take `schema`: every object closed, none of [`NOT_STRICT`],
/// `minItems` 0 or 1 only, and no `$ref` inside a definition (which could be recursive).
fn strict_schema(schema: &Value) -> bool {
    fn walk(schema: &Value, in_definition: bool, depth: usize) -> bool {
        if depth > 64 {
            return false;
        }
        match schema {
            Value::Array(items) => items.iter().all(|s| walk(s, in_definition, depth + 1)),
            Value::Object(map) => {
                if NOT_STRICT.iter().any(|k| map.contains_key(*k))
                    || map
                        .get("minItems")
                        .and_then(Value::as_u64)
                        .is_some_and(|n| n > 1)
                    || (in_definition && map.contains_key("$ref"))
                {
                    return false;
                }
                let is_object =
                    map.get("type") == Some(&json!("object")) || map.contains_key("properties");
                if is_object && map.get("additionalProperties") != Some(&Value::Bool(false)) {
                    return false;
                }
                map.iter().all(|(key, value)| match key.as_str() {
                    // names and literal values, not schemas
                    "properties" | "$defs" | "definitions" => value
                        .as_object()
                        .into_iter()
                        .flat_map(|m| m.values())
                        .all(|s| walk(s, in_definition || key != "properties", depth + 1)),
                    "enum" | "const" | "default" | "examples" | "required" | "description"
                    | "title" => true,
                    _ => walk(value, in_definition, depth + 1),
                })
            }
            _ => true,
        }
    }
    walk(schema, false, 0)
}

fn tool_use(call: &ToolCall) -> Value {
    let input = match call.arguments.value() {
        object @ Value::Object(_) => object.clone(),
        // `input` must be an object; arguments that were not one (text from another provider
        // that was not JSON) were already answered as invalid
        _ => Value::Object(Map::new()),
    };
    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input})
}

#[derive(Deserialize)]
struct Response {
    /// Always present in a message, if empty; a body without it is not a message.
    #[serde(default)]
    content: Option<Vec<Block>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// `{"type": "error", "error": {..}}`, in a body with a successful status.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    /// Thinking, server tools and blocks added later: not part of the answer.
    #[serde(other)]
    Other,
}

#[derive(Clone, Copy, Default, Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Input counts cached tokens too, which are also reported as cache reads and writes.
    fn usage(&self) -> Usage {
        let write = self.cache_creation_input_tokens.unwrap_or(0);
        let read = self.cache_read_input_tokens.unwrap_or(0);
        Usage::new(
            self.input_tokens
                .unwrap_or(0)
                .saturating_add(write)
                .saturating_add(read),
            self.output_tokens.unwrap_or(0),
        )
        .with_cache(read, write)
    }

    /// `self` with the counts `later` has: a stream's `message_delta` carries cumulative
    /// counts, some or all of them.
    fn update(&mut self, later: WireUsage) {
        let fields = [
            (&mut self.input_tokens, later.input_tokens),
            (&mut self.output_tokens, later.output_tokens),
            (
                &mut self.cache_creation_input_tokens,
                later.cache_creation_input_tokens,
            ),
            (
                &mut self.cache_read_input_tokens,
                later.cache_read_input_tokens,
            ),
        ];
        for (field, later) in fields {
            if later.is_some() {
                *field = later;
            }
        }
    }
}

pub(super) fn parse(body: &[u8]) -> Result<ModelResponse, ModelError> {
    let response: Response = serde_json::from_slice(body).map_err(|e| unreadable("message", e))?;
    let Some(content) = response.content else {
        let error = response.error.map(|error| json!({ "error": error }));
        return Err(match error.as_ref().and_then(error_message) {
            Some(message) => ModelError::new(format!(
                "the message has no content; it is an error: {message}"
            )),
            None => ModelError::new("the message has no content"),
        });
    };
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in content {
        match block {
            Block::Text { text: t } => text.push_str(&t),
            Block::ToolUse { id, name, input } => tool_calls.push(ToolCall::new(
                id,
                name,
                if input.is_null() {
                    Arguments::empty()
                } else {
                    Arguments::from(input)
                },
            )),
            Block::Other => {}
        }
    }
    let usage = response.usage.map(|u| u.usage()).unwrap_or_default();
    Ok(ModelResponse {
        text: (!text.is_empty()).then_some(text),
        tool_calls,
        usage,
    })
}

/// One event of a streamed message, by its `type`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: u64,
        content_block: Block,
    },
    ContentBlockDelta {
        index: u64,
        delta: BlockDelta,
    },
    MessageDelta {
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Error {
        #[serde(default)]
        error: Value,
    },
    /// `ping`, `content_block_stop` and events added later.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    /// Thinking, signatures, citations and deltas added later.
    #[serde(other)]
    Other,
}

/// Reads the events of a streamed message: `message_start` and `message_delta` carry the
/// usage, `content_block_start` begins text or a `tool_use` call, `content_block_delta` adds
/// text or a fragment of a call's input JSON (the call looked up by its block, not searched
/// for), `message_stop` ends the stream, and `error` is the provider's error.
#[derive(Default)]
pub(super) struct Events {
    /// The calls started so far: index in the answer by content block index (the first call
    /// of a block that is started twice).
    calls: HashMap<u64, usize>,
    usage: WireUsage,
}

impl Decode for Events {
    fn event(&mut self, event: SseEvent, answer: &mut Assembly) -> Result<bool, Failed> {
        let event: StreamEvent =
            serde_json::from_str(&event.data).map_err(|e| unreadable_event("message event", e))?;
        match event {
            StreamEvent::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.usage.update(usage);
                }
            }
            StreamEvent::MessageDelta { usage } => {
                if let Some(usage) = usage {
                    self.usage.update(usage);
                }
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => match content_block {
                Block::Text { text } => answer.text(&text)?,
                Block::ToolUse { id, name, input } => {
                    let call = answer.start_call(id, name)?;
                    self.calls.entry(index).or_insert(call);
                    // the input arrives in deltas; one given here up front is kept
                    if input.as_object().is_some_and(|o| !o.is_empty()) {
                        answer.arguments(call, &input.to_string())?;
                    }
                }
                Block::Other => {}
            },
            StreamEvent::ContentBlockDelta { index, delta } => match delta {
                BlockDelta::TextDelta { text } => answer.text(&text)?,
                BlockDelta::InputJsonDelta { partial_json } => {
                    let Some(&call) = self.calls.get(&index) else {
                        return Err(Failed::new(
                            format!(
                                "the message stream sent tool input for content block {index}, \
                                 which is not a tool call"
                            ),
                            false,
                        ));
                    };
                    answer.arguments(call, &partial_json)?;
                }
                BlockDelta::Other => {}
            },
            StreamEvent::MessageStop => {
                answer.usage = self.usage.usage();
                return Ok(true);
            }
            StreamEvent::Error { error } => {
                return Err(error_event(&json!({ "error": error })));
            }
            StreamEvent::Other => {}
        }
        answer.usage = self.usage.usage();
        Ok(false)
    }

    fn parse_whole(body: &[u8]) -> Result<ModelResponse, ModelError> {
        parse(body)
    }
}
