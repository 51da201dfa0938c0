//! What a run hands back: [`AgentResult`] when it ends, [`AgentError`] when it does not
//! finish, with everything gathered either way; [`StopReason`]; and [`RunOptions`].

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::{Effect, PendingCall, RunState, ToolStats};
use crate::error::ToolFailure;
use crate::model::{Message, ModelError, Trajectory, Usage};

/// Options for one run.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct RunOptions {
    pub(crate) cancellation: Option<CancellationToken>,
    pub(crate) history: Vec<Message>,
    pub(crate) checkpoint: Option<Checkpoint>,
    /// The boundary to fence untrusted output with, when the executor must keep it the same in
    /// every attempt of the run (a durable one's).
    pub(crate) fence_boundary: Option<String>,
    pub(crate) run_id: Option<String>,
}

/// Where a run hands its state at every step.
#[derive(Clone)]
pub(crate) struct Checkpoint(Arc<dyn Fn(&RunState) + Send + Sync>);

impl Checkpoint {
    pub(crate) fn save(&self, state: &RunState) {
        (self.0)(state);
    }
}

impl fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Checkpoint(..)")
    }
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
    /// [`AgentBuilder::forbid_after_untrusted`](crate::AgentBuilder::forbid_after_untrusted)).
    #[must_use]
    pub fn history(mut self, messages: Vec<Message>) -> Self {
        self.history = messages;
        self
    }

    /// Hands the run's state to `save` at every step, so that a run cut off by a crash can go
    /// on from the last one with [`Agent::resume`](crate::Agent::resume): after each model
    /// response, as each tool call finishes, after each turn is recorded, and when the run
    /// stops to wait for approval.
    ///
    /// The run waits for `save` to return before it takes the next step: store the state
    /// durably before returning, and a crash never loses a step that took effect. A state
    /// saved while calls run lists the calls that have not finished as cut off: resuming from
    /// it hands the ones that may change the world to you to reconcile, and never runs a call
    /// the state says finished. To stop the run when the state cannot be stored, cancel its
    /// token from `save`.
    #[must_use]
    pub fn checkpoint(mut self, save: impl Fn(&RunState) + Send + Sync + 'static) -> Self {
        self.checkpoint = Some(Checkpoint(Arc::new(save)));
        self
    }

    /// Names the run `id`: each call's [idempotency key](crate::ToolContext::idempotency_key)
    /// is made from it. Without one a run gets a random id. Its [`RunState`] keeps it, so a
    /// resumed run has its calls' keys.
    ///
    /// Give one when the run itself may start again from the beginning and its calls must
    /// keep their keys: a durable executor replaying the run from its journal
    /// ([`Journal`](crate::restate::Journal) names it after the invocation), or a job queue
    /// that redelivers a job (its job id). Two runs with one id give their calls the same keys.
    #[must_use]
    pub fn run_id(mut self, id: impl Into<String>) -> Self {
        self.run_id = Some(id.into());
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
    /// The run waits for the caller's decisions on [`AgentResult::pending`]: calls a person
    /// must approve (none of their turn has run), or calls an executor found cut off in an
    /// earlier attempt. Continue it with [`Agent::resume`](crate::Agent::resume) and
    /// [`AgentResult::state`].
    AwaitingApproval,
}

/// Everything a run produced.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AgentResult {
    /// The model's final text: empty when it gave none (see [`AgentResult::answered`]). On the
    /// `partial` of a run cancelled or failed while a streamed turn was arriving, the text the
    /// model had streamed of that turn (it is not in `messages`: the turn never completed).
    pub output: String,
    /// Whether the model's last response had text for the user. A run that ends at a limit
    /// can end without one, when the model ignored the note that tools were disabled and
    /// called tools anyway (those calls are answered with an error result and not run): then
    /// `output` is empty and there is no answer to show — say so to the user plainly.
    pub answered: bool,
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
    /// The whole output of each successful call the model was shown otherwise, in call order:
    /// its output was past its budget (see
    /// [`AgentBuilder::max_tool_output`](crate::AgentBuilder::max_tool_output)), content
    /// blocks the model was shown a description of ([`content`](crate::content)), or untrusted
    /// and shown in its fence
    /// ([`AgentBuilder::fence_untrusted_output`](crate::AgentBuilder::fence_untrusted_output)).
    /// Every other
    /// successful call's output is its result in `messages`, as it is;
    /// [`tool_output`](Self::tool_output) finds either.
    ///
    /// A [`RunState`] keeps what the model saw, not these: a run resumed from one holds the
    /// whole outputs of the calls it recorded itself (the earlier ones were on the result and
    /// the events of the run that made them).
    pub whole_outputs: Vec<WholeOutput>,
    /// Calls, failures and timeouts per tool.
    pub tool_stats: BTreeMap<String, ToolStats>,
    /// The calls the run waits on before it can go on, in call order: calls awaiting approval
    /// ([`StopReason::AwaitingApproval`]), and, on the `partial` result of a cancelled run,
    /// calls cut off mid-flight that may have taken effect. Each needs a
    /// [`Decision`](crate::Decision) for [`Agent::resume`](crate::Agent::resume).
    pub pending: Vec<PendingCall>,
    /// What the run can go on from with [`Agent::resume`](crate::Agent::resume): set when it
    /// waits for approval, and on the `partial` result of a cancelled run or of a failed
    /// model call; `None` when the run ended (it completed, hit a limit, or a tool failure
    /// ended it).
    pub state: Option<RunState>,
}

impl AgentResult {
    /// The whole output of the successful call `call_id` of this run, as text: from
    /// [`whole_outputs`](Self::whole_outputs) when the model was shown it otherwise, otherwise
    /// its result in [`messages`](Self::messages). `None` for a call that failed or is not in
    /// this result.
    pub fn tool_output(&self, call_id: &str) -> Option<&str> {
        if let Some(whole) = self.whole_outputs.iter().find(|w| w.call_id == call_id) {
            return Some(&whole.output);
        }
        self.messages
            .iter()
            .rev()
            .find_map(|message| match message {
                Message::Tool(result) if result.call_id == call_id && !result.is_error => {
                    Some(result.content.as_str())
                }
                _ => None,
            })
    }
}

/// The whole output of a successful call whose result the model was shown otherwise: cut to
/// its budget, in the fence of untrusted output, or described (a content tool's blocks).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WholeOutput {
    /// The tool.
    pub tool: String,
    /// The call's id.
    pub call_id: String,
    /// The whole output, as text: a string output as it is, any other as compact JSON.
    pub output: String,
}

/// A run that did not finish. Each variant keeps what the run had gathered.
pub enum AgentError {
    /// The caller cancelled the run.
    Cancelled {
        /// What the run had when it was cancelled.
        partial: Box<AgentResult>,
    },
    /// A tool failed under [`ToolFailureMode::Propagate`](crate::ToolFailureMode::Propagate), or failed fatally under any mode
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
    /// The tool's full error; for a model error, the first of its sources whose message the
    /// model error's (which `Display` already says) does not hold.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Cancelled { .. } => None,
            Self::ToolFailed { failure, .. } => Some(&*failure.error),
            Self::Model { error, .. } => {
                crate::error::chain::first_new_source(&error.to_string(), error)
            }
        }
    }
}
