//! The model side: the [`Model`] trait, what the agent sends a model and what it gets back, the
//! offline models ([`ScriptedModel`], [`ReplayModel`] and the [`Trajectory`] it replays), and
//! the schema dialects providers need ([`SchemaDialect`]).
//!
//! A [`Model`] answers one request at a time, whole with [`Model::complete`] or as it is
//! produced with [`Model::stream`]: text deltas, tool calls starting and their arguments
//! arriving in fragments, then [`ModelEvent::Completed`] with the whole response. Every model
//! streams: the provided [`Model::stream`] tells the response of `complete` as events, and
//! the HTTP [providers](crate::providers) read the API's server-sent events as they arrive.
//!
//! Longer than most files: the model-facing types (`Model`, requests, responses, tool calls and
//! results, usage, `ModelError`) are the contract every provider and custom model is written
//! against, and are kept together so that it reads as one page.

use std::error::Error as StdError;
use std::fmt;
use std::ops::{Add, AddAssign};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

use crate::tool::ToolDefinition;

mod arguments;
mod dialect;
mod replay;
mod retry;
mod scripted;
mod stream;
mod trajectory;

pub use arguments::Arguments;
pub(crate) use dialect::{Normaliser, integer_format_range};
pub use dialect::{SchemaDialect, SchemaError};
pub use replay::ReplayModel;
pub use retry::RetryPolicy;
pub(crate) use retry::retryable_status;
pub use scripted::ScriptedModel;
pub use stream::ModelEvent;
#[cfg_attr(
    not(any(feature = "openai", feature = "anthropic", feature = "gemini")),
    allow(unused_imports)
)]
pub(crate) use stream::events as stream_events;
pub use trajectory::Trajectory;
pub(crate) use trajectory::TrajectoryTurn;

/// A language model the agent talks to.
///
/// Providers implement it over HTTP; [`ScriptedModel`] and
/// [`ReplayModel`] implement it offline.
pub trait Model: Send + Sync + 'static {
    /// Completes one turn of the conversation.
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;

    /// Answers one turn as it is produced: the same answer as [`Model::complete`], told as
    /// [`ModelEvent`]s.
    ///
    /// What a consumer can rely on:
    ///
    /// - **A stream that succeeds** yields [`TextDelta`](ModelEvent::TextDelta),
    ///   [`ToolCallStarted`](ModelEvent::ToolCallStarted) and
    ///   [`ToolCallDelta`](ModelEvent::ToolCallDelta) events in the order the model produced
    ///   them, then exactly one [`Completed`](ModelEvent::Completed), and then ends.
    /// - **`Completed` is the whole answer**, assembled from the events before it: its text is
    ///   the text deltas concatenated (`None` when there were none); its `tool_calls[i]` is the
    ///   call started with `index: i`, with that event's id and name and the arguments
    ///   concatenated from its deltas (parsed as JSON; an empty text is `{}`, a text that is not
    ///   JSON is kept as [`serde_json::Value::String`], as `complete` does); its usage is the
    ///   request's.
    /// - **Tool calls** are numbered `0, 1, 2, …` in the order they start; each is started
    ///   once, before any delta of it. Deltas of calls started earlier may arrive interleaved
    ///   with those of later ones (parallel tool calls).
    /// - **An `Err` ends the stream**: nothing follows it, and there is no `Completed`. When it
    ///   comes first, it is the error `complete` would have returned (the request may have been
    ///   retried before it). When events came before it, they were real output, but the answer
    ///   is incomplete: treat what was shown as interrupted, never as a response. The stream
    ///   never retries then; [`ModelError::is_retryable`] says whether asking the whole turn
    ///   again may succeed, which the agent loop does
    ///   ([`AgentBuilder::retry_broken_turns`](crate::AgentBuilder::retry_broken_turns)).
    /// - **Dropping the stream cancels the request**: a provider closes the connection and
    ///   reads no more. Polling after the end yields `None`.
    ///
    /// The provided method tells the response of `complete` as events: its text as one
    /// delta, each tool call as a start and one delta holding all its arguments, then
    /// `Completed` with the response itself; an error of `complete` is the only item. So
    /// [`ScriptedModel`], [`ReplayModel`] and models that only complete
    /// stream too. The HTTP [providers](crate::providers) stream from the API.
    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxStream<'a, Result<ModelEvent, ModelError>> {
        stream::from_complete(self.complete(request))
    }

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

    /// How this model retries a failed call itself, if it does: the HTTP
    /// [providers](crate::providers) report their `max_retries`, `retry_delay` and
    /// `max_retry_delay`. Default: `None`.
    ///
    /// The agent loop retries a turn whose stream broke off with this policy, counting the
    /// attempts the model reports in [`ModelError::attempts`] against the same budget (see
    /// [`AgentBuilder::retry_broken_turns`](crate::AgentBuilder::retry_broken_turns)); for a
    /// model that reports none it uses [`RetryPolicy::default`].
    fn retry_policy(&self) -> Option<RetryPolicy> {
        None
    }

    /// The boundary a run on this model must fence untrusted output with
    /// ([`AgentBuilder::fence_untrusted_output`](crate::AgentBuilder::fence_untrusted_output)),
    /// when it must use a given one. Default: `None`, and each run draws a random one when it
    /// first fences an output.
    ///
    /// [`ReplayModel`] returns the boundary of the run it replays
    /// ([`Trajectory::fence_boundary`]), so that the replayed requests are the recorded ones
    /// byte for byte; a model that wraps a `ReplayModel` should pass it on. A boundary is
    /// 32 lowercase hex digits; anything else is ignored, and the run draws its own.
    fn fence_boundary(&self) -> Option<String> {
        None
    }
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete(request)
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxStream<'a, Result<ModelEvent, ModelError>> {
        (**self).stream(request)
    }

    fn schema_dialect(&self) -> SchemaDialect {
        (**self).schema_dialect()
    }

    fn retry_policy(&self) -> Option<RetryPolicy> {
        (**self).retry_policy()
    }

    fn fence_boundary(&self) -> Option<String> {
        (**self).fence_boundary()
    }
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).complete(request)
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxStream<'a, Result<ModelEvent, ModelError>> {
        (**self).stream(request)
    }

    fn schema_dialect(&self) -> SchemaDialect {
        (**self).schema_dialect()
    }

    fn retry_policy(&self) -> Option<RetryPolicy> {
        (**self).retry_policy()
    }

    fn fence_boundary(&self) -> Option<String> {
        (**self).fence_boundary()
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
        arguments: impl Into<Arguments>,
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
///
/// Built with [`ToolCall::new`]; fields may be added, so it is not built with a struct
/// literal outside reticent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCall {
    /// The id the model gave the call; its result carries the same id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments: the JSON text the model wrote, or a JSON value (see [`Arguments`]).
    pub arguments: Arguments,
    /// What the provider that produced the call must get back with it next turn, under that
    /// provider's own key: Gemini's thought signature (`{"gemini": {"thoughtSignature":
    /// ..}}`), the reasoning items of OpenAI's Responses API (`{"openai_responses": ..}`).
    /// Opaque to the agent, which keeps it with the call in the conversation, so it is saved
    /// with a [`RunState`](crate::RunState) and a [`Trajectory`], and a provider ignores the
    /// keys of others. `None` for most calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_data: Option<serde_json::Value>,
}

impl ToolCall {
    /// A tool call with these arguments: a JSON value (`json!({..})`) or
    /// [`Arguments::from_text`].
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<Arguments>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            provider_data: None,
        }
    }

    /// The same call, with what its provider must get back with it
    /// ([`ToolCall::provider_data`]).
    #[must_use]
    pub fn with_provider_data(mut self, data: serde_json::Value) -> Self {
        self.provider_data = Some(data);
        self
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
///
/// Built with [`Usage::new`] (and [`Usage::with_cache`]); fields may be added, so it is not
/// built with a struct literal outside reticent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens sent to the model, cached ones included.
    pub input_tokens: u64,
    /// Tokens the model produced.
    pub output_tokens: u64,
    /// Of the input tokens, those read from the provider's prompt cache (Anthropic's
    /// `cache_read_input_tokens`, OpenAI's `cached_tokens`, Gemini's
    /// `cachedContentTokenCount`).
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Of the input tokens, those written to the provider's prompt cache (Anthropic's
    /// `cache_creation_input_tokens`).
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Usage of `input_tokens` in and `output_tokens` out, none of it cached.
    pub const fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        }
    }

    /// The same usage, of which `read` input tokens were read from the prompt cache and
    /// `write` written to it.
    #[must_use]
    pub const fn with_cache(mut self, read: u64, write: u64) -> Self {
        self.cache_read_tokens = read;
        self.cache_write_tokens = write;
        self
    }

    /// Input plus output, saturating at `u64::MAX` (a stored state may hold any count).
    pub const fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

impl Add for Usage {
    type Output = Self;
    fn add(self, rhs: Self) -> Self {
        Self {
            input_tokens: self.input_tokens.saturating_add(rhs.input_tokens),
            output_tokens: self.output_tokens.saturating_add(rhs.output_tokens),
            cache_read_tokens: self.cache_read_tokens.saturating_add(rhs.cache_read_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_add(rhs.cache_write_tokens),
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
    attempts: u32,
    retry_after: Option<Duration>,
    source: Option<Arc<dyn StdError + Send + Sync + 'static>>,
}

impl ModelError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            status: None,
            retryable: false,
            attempts: 1,
            retry_after: None,
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

    /// The number of requests the call made, retries included (at least 1).
    #[must_use]
    pub fn with_attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts.max(1);
        self
    }

    /// The wait the server asked for before a retry (`retry-after`).
    #[must_use]
    pub fn with_retry_after(mut self, wait: Duration) -> Self {
        self.retry_after = Some(wait);
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

    /// How many requests the call made, retries included: 1 unless the model says otherwise.
    /// The agent loop counts them against its budget for retrying a broken turn.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The wait the server asked for before a retry, when it asked.
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
}

impl fmt::Debug for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelError")
            .field("message", &self.message)
            .field("status", &self.status)
            .field("retryable", &self.retryable)
            .field("attempts", &self.attempts)
            .field("retry_after", &self.retry_after)
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
    /// The underlying error, past those whose message the message already holds: the chain
    /// says each message once.
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        let source = self.source.as_deref()?;
        crate::error::chain::first_new_source(&self.message, source)
    }
}
