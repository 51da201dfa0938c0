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
//!   [`OpenAi::strict`] turns it off.

use std::fmt;

use futures::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::ConfigError;
use super::http::{Transport, error_message, join, secret_header, unreadable};
use crate::model::SchemaDialect;
use crate::model::{Message, Model, ModelError, ModelRequest, ModelResponse, ToolCall, Usage};
use crate::secret::Secret;

/// A model behind the OpenAI Chat Completions API (`POST {base_url}/chat/completions`).
///
/// Works with OpenAI and with compatible servers: Ollama (`http://localhost:11434/v1`), vLLM,
/// llama.cpp's server and others. See the [module docs](self) for how requests are built.
#[derive(Clone)]
pub struct OpenAi {
    api_key: Secret<String>,
    model: String,
    base_url: String,
    strict: bool,
    params: Map<String, Value>,
    transport: Transport,
}

impl fmt::Debug for OpenAi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAi")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key)
            .field("strict", &self.strict)
            .field("params", &self.params.keys().collect::<Vec<_>>())
            .field("transport", &self.transport)
            .finish()
    }
}

impl OpenAi {
    /// OpenAI's own endpoint.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// Ollama's OpenAI-compatible endpoint on this machine.
    pub const OLLAMA_BASE_URL: &'static str = "http://localhost:11434/v1";

    /// The model `model` at OpenAI, with this API key. An empty key sends no `Authorization`
    /// header (for local servers).
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            api_key: Secret::new(api_key.into()),
            model: model.into(),
            base_url: Self::DEFAULT_BASE_URL.to_owned(),
            strict: true,
            params: Map::new(),
            transport: Transport::new(),
        }
    }

    /// The model `model`, with the key from `OPENAI_API_KEY` and the endpoint from
    /// `OPENAI_BASE_URL` (default [`OpenAi::DEFAULT_BASE_URL`]). The key may be missing only
    /// when a base URL is set, for servers that need none.
    pub fn from_env(model: impl Into<String>) -> Result<Self, ConfigError> {
        Self::from_lookup(&model.into(), &|name: &str| {
            std::env::var(name).ok().filter(|v| !v.trim().is_empty())
        })
    }

    pub(super) fn from_lookup(
        model: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let base_url = lookup("OPENAI_BASE_URL");
        let api_key = match (lookup("OPENAI_API_KEY"), &base_url) {
            (Some(key), _) => key,
            (None, Some(_)) => String::new(),
            (None, None) => {
                return Err(ConfigError::MissingEnv {
                    var: "OPENAI_API_KEY".to_owned(),
                });
            }
        };
        let model = Self::new(api_key, model);
        Ok(match base_url {
            Some(url) => model.base_url(url),
            None => model,
        })
    }

    pub(super) fn ollama_from_lookup(model: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Self {
        let base_url = match lookup("OLLAMA_HOST") {
            Some(host) => {
                let host = host.trim().trim_end_matches('/');
                let host = if host.contains("://") {
                    host.to_owned()
                } else {
                    format!("http://{host}")
                };
                format!("{host}/v1")
            }
            None => Self::OLLAMA_BASE_URL.to_owned(),
        };
        Self::new("", model).base_url(base_url).strict(false)
    }

    /// The endpoint, up to and including the version: `https://api.openai.com/v1`,
    /// `http://localhost:11434/v1`. Requests go to `{base_url}/chat/completions`.
    #[must_use]
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }

    /// Sends tool schemas in OpenAI's strict mode (`"strict": true`, schemas converted with
    /// [`SchemaDialect::OpenAiStrict`]). On by default; turn it off for servers or models
    /// without strict mode, or for tools whose parameters strict mode cannot express (free-form
    /// maps, values of any type).
    #[must_use]
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    super::http::transport_setters!(
        retried: "`408`, `429` or `5xx`",
        params: "`temperature`, `max_completion_tokens`, `seed` or `reasoning_effort`",
    );

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The body of the request for `request`.
    fn body(&self, request: &ModelRequest) -> Value {
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
        body.insert("model".into(), Value::from(self.model.as_str()));
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
        for (name, value) in &self.params {
            body.insert(name.clone(), value.clone());
        }
        Value::Object(body)
    }

    async fn send(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let mut headers = HeaderMap::new();
        if !self.api_key.expose().is_empty() {
            let value = secret_header(format!("Bearer {}", self.api_key.expose()))?;
            headers.insert(AUTHORIZATION, value);
        }
        let body = serde_json::to_vec(&self.body(request))
            .map_err(|e| ModelError::new("could not encode the request").with_source(e))?;
        let url = join(&self.base_url, "/chat/completions");
        let response = self
            .transport
            .post_json(&url, headers, body, &self.api_key)
            .await?;
        parse(&response)
    }
}

impl Model for OpenAi {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(self.send(request))
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
    let arguments = match &call.arguments {
        // the text the model produced, when it was not JSON
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
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
}

pub(super) fn parse(body: &[u8]) -> Result<ModelResponse, ModelError> {
    let completion: Completion =
        serde_json::from_slice(body).map_err(|e| unreadable("chat completion", e))?;
    let usage = completion
        .usage
        .map(|u| {
            Usage::new(
                u.prompt_tokens.unwrap_or(0),
                u.completion_tokens.unwrap_or(0),
            )
        })
        .unwrap_or_default();
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
        .map(|(i, call)| ToolCall {
            id: call.id.unwrap_or_else(|| format!("call_{i}")),
            name: call.function.name,
            arguments: arguments(call.function.arguments),
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
fn arguments(raw: Option<Value>) -> Value {
    match raw {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Map::new()),
        Some(Value::String(text)) => serde_json::from_str(&text).unwrap_or(Value::String(text)),
        // some compatible servers send an object
        Some(other) => other,
    }
}
