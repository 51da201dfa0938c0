//! The model side: the [`Model`] trait, what the agent sends a model and what it gets back, the
//! offline models ([`ScriptedModel`], [`ReplayModel`] and the [`Trajectory`] it replays), and
//! the schema dialects providers need ([`SchemaDialect`]).

use std::error::Error as StdError;
use std::fmt;
use std::ops::{Add, AddAssign};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use crate::tool::ToolDefinition;

mod dialect;
mod replay;
mod scripted;
mod trajectory;

pub use dialect::{SchemaDialect, SchemaError};
pub use replay::ReplayModel;
pub use scripted::ScriptedModel;
pub use trajectory::Trajectory;
pub(crate) use trajectory::TrajectoryTurn;

/// A language model the agent talks to.
///
/// Providers implement it over HTTP; [`ScriptedModel`] and
/// [`ReplayModel`](crate::ReplayModel) implement it offline.
pub trait Model: Send + Sync + 'static {
    /// Completes one turn of the conversation.
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;

    /// The JSON Schema dialect this model's API accepts for tool parameters.
    ///
    /// [`AgentBuilder::build`](crate::AgentBuilder::build) converts every tool's schema to it
    /// once, and refuses a schema the dialect cannot express with
    /// [`BuildError::UnsupportedSchema`](crate::BuildError::UnsupportedSchema); requests then
    /// carry the converted definitions. Default: [`SchemaDialect::Standard`], which changes
    /// nothing.
    fn schema_dialect(&self) -> SchemaDialect {
        SchemaDialect::Standard
    }
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete(request)
    }

    fn schema_dialect(&self) -> SchemaDialect {
        (**self).schema_dialect()
    }
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete(request)
    }

    fn schema_dialect(&self) -> SchemaDialect {
        (**self).schema_dialect()
    }
}

/// One request to the model: everything it sees.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools the model may call in this turn (none in a final, tool-less turn).
    pub tools: Vec<ToolDefinition>,
}

/// The model's answer to one request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// Text for the user, if any.
    pub text: Option<String>,
    /// Tools the model wants to call; empty when it is done.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// Tokens used by this request.
    #[serde(default)]
    pub usage: Usage,
}

impl ModelResponse {
    /// A response with text and no tool calls.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// A response with one tool call.
    pub fn tool_call(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: serde_json::Value,
    ) -> Self {
        Self::tool_calls(vec![ToolCall::new(id, name, arguments)])
    }

    /// A response with several tool calls, run concurrently.
    pub fn tool_calls(calls: Vec<ToolCall>) -> Self {
        Self {
            tool_calls: calls,
            ..Self::default()
        }
    }

    /// The same response, reporting `usage`.
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// The same response, with text beside its tool calls.
    #[must_use]
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }
}

/// A tool call the model asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id the model gave the call; its result carries the same id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments: a JSON object, or the raw text when a provider could not parse it.
    pub arguments: serde_json::Value,
}

impl ToolCall {
    /// A tool call.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: serde_json::Value,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// One message of the conversation, as the model saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// The user's words (and notes the agent adds for the model).
    User {
        /// The text.
        text: String,
    },
    /// The model's turn.
    Assistant {
        /// Its text, if any.
        text: Option<String>,
        /// The tools it called.
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    Tool(ToolResult),
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User { text: text.into() }
    }

    /// The text of the message, if it has any.
    pub fn text(&self) -> Option<&str> {
        match self {
            Self::User { text } => Some(text),
            Self::Assistant { text, .. } => text.as_deref(),
            Self::Tool(result) => Some(&result.content),
        }
    }
}

/// The result of one tool call, as the model is shown it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The output, or the model-visible text of the failure.
    pub content: String,
    /// Whether the call failed.
    pub is_error: bool,
}

/// Token counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens sent to the model.
    pub input_tokens: u64,
    /// Tokens the model produced.
    pub output_tokens: u64,
}

impl Usage {
    /// Usage of `input_tokens` in and `output_tokens` out.
    pub const fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
        }
    }

    /// Input plus output.
    pub const fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

impl Add for Usage {
    type Output = Self;
    fn add(self, rhs: Self) -> Self {
        Self {
            input_tokens: self.input_tokens.saturating_add(rhs.input_tokens),
            output_tokens: self.output_tokens.saturating_add(rhs.output_tokens),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}

/// A model call that failed. It goes to the caller, never into the conversation.
#[derive(Clone)]
pub struct ModelError {
    message: String,
    status: Option<u16>,
    retryable: bool,
    source: Option<Arc<dyn StdError + Send + Sync + 'static>>,
}

impl ModelError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            status: None,
            retryable: false,
            source: None,
        }
    }

    /// The HTTP status the provider answered with.
    #[must_use]
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Marks the error as worth retrying (rate limits, overload).
    #[must_use]
    pub fn retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// The underlying error.
    #[must_use]
    pub fn with_source(mut self, source: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        self.source = Some(Arc::from(source.into()));
        self
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The HTTP status, for provider errors.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// Whether retrying may succeed.
    pub fn is_retryable(&self) -> bool {
        self.retryable
    }
}

impl fmt::Debug for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelError")
            .field("message", &self.message)
            .field("status", &self.status)
            .field("retryable", &self.retryable)
            .field("source", &self.source)
            .finish()
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "model error (HTTP {status}): {}", self.message),
            None => write!(f, "model error: {}", self.message),
        }
    }
}

impl StdError for ModelError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}
