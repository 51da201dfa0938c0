//! The agent loop: talk to a model, run its tool calls, apply the failure policy, and give the
//! caller the full record.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use futures::Stream;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::model::{Message, Model, ModelError, ModelResponse, ToolCall, Usage};
use crate::tool::{Tool, ToolDefinition};
use crate::trajectory::Trajectory;

mod builder;
mod effects;
pub(crate) mod exec;
mod failure;
mod run;

#[cfg(feature = "mcp")]
pub(crate) use builder::index_tools;
pub use builder::{AgentBuilder, BuildError, ToolFailureMode, ToolFailureOptions};
pub use effects::{Effect, EffectOutcome, ToolStats};
pub use failure::{
    ForbiddenAfterUntrusted, PrerequisiteNotMet, ToolFailure, ToolPanicked, ToolTimedOut,
    UnknownTool, kinds,
};

/// An agent: a model, its tools and the policies that govern a run. Cheap to clone; one agent
/// can serve many concurrent runs.
///
/// ```
/// use reticent::{Agent, ModelResponse, ScriptedModel, StopReason};
/// use serde_json::json;
///
/// /// Add two numbers.
/// #[reticent::tool]
/// fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let model = ScriptedModel::new(vec![
///     ModelResponse::tool_call("call_1", "add", json!({"a": 2, "b": 3})),
///     ModelResponse::text("2 + 3 = 5"),
/// ]);
/// let agent = Agent::builder(model).tool(Add).build()?;
/// let result = agent.run("What is 2 + 3?").await?;
/// assert_eq!(result.output, "2 + 3 = 5");
/// assert_eq!(result.stop_reason, StopReason::Completed);
/// assert!(result.tool_failures.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) model: Arc<dyn Model>,
    pub(crate) system: Option<String>,
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    /// Each tool's position in `tools`, by its name. A call's context shares the name.
    pub(crate) index: HashMap<Arc<str>, usize>,
    pub(crate) definitions: Vec<ToolDefinition>,
    pub(crate) failure_mode: ToolFailureMode,
    pub(crate) failure_options: ToolFailureOptions,
    pub(crate) max_consecutive_failures: u32,
    pub(crate) max_turns: u32,
    pub(crate) max_parallel_tools: usize,
    pub(crate) requirements: HashMap<String, Vec<String>>,
    pub(crate) forbidden_after_untrusted: HashSet<String>,
    pub(crate) record_content: bool,
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        f.debug_struct("Agent")
            .field(
                "tools",
                &inner
                    .definitions
                    .iter()
                    .map(|d| &d.name)
                    .collect::<Vec<_>>(),
            )
            .field("failure_mode", &inner.failure_mode)
            .field("failure_options", &inner.failure_options)
            .field("max_consecutive_failures", &inner.max_consecutive_failures)
            .field("max_turns", &inner.max_turns)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// Starts building an agent around `model`.
    pub fn builder(model: impl Model) -> AgentBuilder {
        AgentBuilder::new(Arc::new(model))
    }

    /// The definitions of the agent's tools, in the order they were added, with their
    /// parameter schemas in the model's [`SchemaDialect`](crate::SchemaDialect): what the
    /// model is offered.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.inner.definitions
    }

    /// Runs the agent on `input` until the model answers without calling tools, or a limit
    /// stops it.
    ///
    /// Tool failures do not end the run under [`ToolFailureMode::ReportToModel`]: they are on
    /// [`AgentResult::tool_failures`].
    pub async fn run(&self, input: impl Into<String>) -> Result<AgentResult, AgentError> {
        self.run_with(input, RunOptions::default()).await
    }

    /// Runs the agent with options such as a cancellation token.
    pub async fn run_with(
        &self,
        input: impl Into<String>,
        options: RunOptions,
    ) -> Result<AgentResult, AgentError> {
        run::run(Arc::clone(&self.inner), input.into(), options, None).await
    }

    /// Runs the agent and reports what happens as it happens. The last item is always
    /// [`AgentEvent::Finished`]. Nothing runs until the stream is polled.
    pub fn run_stream(
        &self,
        input: impl Into<String>,
    ) -> impl Stream<Item = AgentEvent> + Send + 'static {
        self.run_stream_with(input, RunOptions::default())
    }

    /// [`Agent::run_stream`] with options.
    pub fn run_stream_with(
        &self,
        input: impl Into<String>,
        options: RunOptions,
    ) -> impl Stream<Item = AgentEvent> + Send + 'static {
        use futures::{FutureExt, StreamExt};
        // No backlog: the run hands over each event as it happens (see `Run::emit`).
        let (mut tx, rx) = futures::channel::mpsc::channel(0);
        let inner = Arc::clone(&self.inner);
        let input = input.into();
        let driver = async move {
            let result = run::run(inner, input, options, Some(tx.clone())).await;
            let _ = futures::SinkExt::send(&mut tx, AgentEvent::Finished(result)).await;
        };
        let driver = driver
            .into_stream()
            .filter_map(|()| std::future::ready(None));
        futures::stream::select(driver, rx)
    }
}

/// Options for one run.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct RunOptions {
    pub(crate) cancellation: Option<CancellationToken>,
    pub(crate) history: Vec<Message>,
}

impl RunOptions {
    /// Ends the run with [`AgentError::Cancelled`] when `token` is cancelled, also in the
    /// middle of a model call or a slow tool.
    #[must_use]
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Earlier messages of the conversation, sent before the new input.
    ///
    /// Results of the agent's untrusted tools among them taint the run from its start (see
    /// [`AgentBuilder::forbid_after_untrusted`]).
    #[must_use]
    pub fn history(mut self, messages: Vec<Message>) -> Self {
        self.history = messages;
        self
    }
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StopReason {
    /// The model answered without calling tools.
    Completed,
    /// Too many tool calls failed in a row; the model had a last turn without tools.
    FailureLimit,
    /// The run used all its turns; the model had a last turn without tools.
    TurnLimit,
}

/// Everything a run produced.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AgentResult {
    /// The model's final text.
    pub output: String,
    /// The conversation exactly as the model saw it.
    pub messages: Vec<Message>,
    /// Every failed tool call, with its full error.
    pub tool_failures: Vec<ToolFailure>,
    /// Tokens used over the whole run.
    pub usage: Usage,
    /// How many times the model was called.
    pub turns: u32,
    /// Why the run stopped.
    pub stop_reason: StopReason,
    /// Every request and response, for replay; holds only what the model saw.
    pub trajectory: Trajectory,
    /// Every call of a tool that is not `read_only`, in call order, with whether it took
    /// effect: the ledger to reconcile after any run.
    pub effects: Vec<Effect>,
    /// The ids of the calls whose untrusted output entered the transcript (tools that are
    /// `open_world` or `#[tool(untrusted_output)]`): successful calls, and failed calls whose
    /// error message was shown (`include_error_message`), of this run or in the history it
    /// was given. Empty when the run is not tainted.
    pub tainted_by: Vec<String>,
    /// Calls, failures and timeouts per tool.
    pub tool_stats: BTreeMap<String, ToolStats>,
}

/// A run that did not finish. Each variant keeps what the run had gathered.
pub enum AgentError {
    /// The caller cancelled the run.
    Cancelled {
        /// What the run had when it was cancelled.
        partial: Box<AgentResult>,
    },
    /// A tool failed under [`ToolFailureMode::Propagate`], or failed fatally under any mode
    /// (`#[disclose(fatal)]`, [`Failure::fatal`](crate::Failure::fatal), or an output that
    /// cannot be turned into JSON).
    ToolFailed {
        /// The failure.
        failure: ToolFailure,
        /// What the run had, including this failure and the other calls of its turn.
        partial: Box<AgentResult>,
    },
    /// The model could not be called.
    Model {
        /// The model's error.
        error: ModelError,
        /// What the run had before the failed call.
        partial: Box<AgentResult>,
    },
}

impl AgentError {
    /// What the run had gathered before it ended.
    pub fn partial(&self) -> &AgentResult {
        match self {
            Self::Cancelled { partial }
            | Self::ToolFailed { partial, .. }
            | Self::Model { partial, .. } => partial,
        }
    }

    /// What the run had gathered before it ended.
    pub fn into_partial(self) -> AgentResult {
        match self {
            Self::Cancelled { partial }
            | Self::ToolFailed { partial, .. }
            | Self::Model { partial, .. } => *partial,
        }
    }

    /// Whether the caller cancelled the run.
    pub fn is_cancelled(&self) -> bool {
        matches!(self, Self::Cancelled { .. })
    }
}

impl fmt::Debug for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cancelled { partial } => f
                .debug_struct("Cancelled")
                .field("partial", partial)
                .finish(),
            Self::ToolFailed { failure, partial } => f
                .debug_struct("ToolFailed")
                .field("failure", failure)
                .field("partial", partial)
                .finish(),
            Self::Model { error, partial } => f
                .debug_struct("Model")
                .field("error", error)
                .field("partial", partial)
                .finish(),
        }
    }
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cancelled { .. } => f.write_str("the run was cancelled"),
            Self::ToolFailed { failure, .. } => write!(
                f,
                "the tool `{}` failed with {} (call {})",
                failure.tool, failure.kind, failure.call_id
            ),
            Self::Model { error, .. } => write!(f, "the model call failed: {error}"),
        }
    }
}

impl std::error::Error for AgentError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Cancelled { .. } => None,
            Self::ToolFailed { failure, .. } => Some(&*failure.error),
            Self::Model { error, .. } => Some(error),
        }
    }
}

/// What happens during a run, as it happens (see [`Agent::run_stream`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum AgentEvent {
    /// The model answered.
    ModelResponded {
        /// The turn, from 1.
        turn: u32,
        /// The response.
        response: ModelResponse,
    },
    /// A tool call is starting.
    ToolStarted {
        /// The call.
        call: ToolCall,
    },
    /// A tool call succeeded.
    ToolSucceeded {
        /// The tool.
        tool: String,
        /// The call's id.
        call_id: String,
        /// What the model is shown.
        output: String,
        /// How long it ran.
        elapsed: std::time::Duration,
    },
    /// A tool call failed, with its full error.
    ToolFailed(ToolFailure),
    /// The run ended; always the last event.
    Finished(Result<AgentResult, AgentError>),
}
