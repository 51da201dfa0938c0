//! [`RunState`]: everything a stopped run needs to go on, in another task or another process —
//! the transcript, the ledger, the taint record, the counts, the guards' state, the calls of a
//! turn that did not finish and the boundary untrusted output is fenced with — and never more
//! than the model saw of a failure.
//!
//! A state keeps each failed call as the model saw it (its text, kind and flags): the full
//! error stays with the result it was reported on (and the `execute_tool` span), so a state
//! written to a file or a database holds no withheld message. A failure restored from a state
//! carries [`ErrorNotKept`] in place of its error.
//!
//! One file, longer than most: it is the saved format. What a state holds, its version, and how
//! each call and failure record is written and read back change together (a change to any of
//! them is a change to what is on disk), so they are kept where one reading finds them all.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::approval::{PendingCall, PendingReason};
use super::call::Executed;
use super::decision::{Decisions, Refusal, shared_ids};
use super::repeats::FailedCall;
use super::{AgentError, Effect, StopReason, ToolStats};
use crate::error::{EffectOutcome, ToolFailure};
use crate::model::{Message, ToolCall, TrajectoryTurn, Usage};

/// The version of the state format this build reads and writes.
const VERSION: u32 = 1;

/// Everything a stopped run needs to go on: give it to
/// [`Agent::resume`](crate::Agent::resume), in this process or another.
///
/// A run hands one out when it stops and can go on: on the result of a run that waits for
/// approvals ([`StopReason::AwaitingApproval`]), on the `partial` result of a cancelled run or
/// of a failed model call ([`AgentResult::state`](crate::AgentResult::state)), and at every
/// step to a checkpoint ([`RunOptions::checkpoint`](crate::RunOptions::checkpoint)), so that a
/// run cut off by a crash can go on from its last checkpoint.
///
/// It serializes with serde (JSON round-trips it exactly) and holds what the model saw — the
/// transcript, and each failure's text and kind — never a failure's full error, which stays
/// with the result it was reported on. The system prompt, the tools and the policies are the
/// agent's: the agent that resumes supplies them.
///
/// ```
/// use reticent::{Agent, Decisions, ModelResponse, RunState, ScriptedModel, StopReason};
/// use serde_json::json;
///
/// /// Refund an order.
/// #[reticent::tool]
/// fn refund(order_id: String) -> String {
///     format!("refunded {order_id}")
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let model = ScriptedModel::new(vec![
///     ModelResponse::tool_call("call_1", "refund", json!({"order_id": "ORD-7"})),
///     ModelResponse::text("Refunded."),
/// ]);
/// let agent = Agent::builder(model).tool(Refund).require_approval("refund").build()?;
///
/// let paused = agent.run("Refund ORD-7").await?;
/// assert_eq!(paused.stop_reason, StopReason::AwaitingApproval);
/// assert_eq!(paused.pending[0].call_id, "call_1");
///
/// // Saved, and read back later, maybe by another process.
/// let json = serde_json::to_string(&paused.state.unwrap())?;
/// let state: RunState = serde_json::from_str(&json)?;
///
/// // The person approves the call as they saw it: the decision carries its digest.
/// let decisions = Decisions::new().approve(&paused.pending[0]);
/// let done = agent.resume(state, decisions).await?;
/// assert_eq!(done.output, "Refunded.");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Versioned", into = "Versioned")]
pub struct RunState(pub(super) Box<State>);

/// The fields of a [`RunState`], behind one pointer: results and errors carry a state.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct State {
    pub(super) messages: Vec<Message>,
    pub(super) turns: Vec<TrajectoryTurn>,
    pub(super) usage: Usage,
    pub(super) effects: Vec<Effect>,
    pub(super) tainted_by: Vec<String>,
    pub(super) tool_stats: BTreeMap<String, ToolStats>,
    pub(super) failures: Vec<FailureRecord>,
    pub(super) consecutive_failures: u32,
    /// The tools that succeeded, for prerequisites.
    pub(super) succeeded: Vec<String>,
    /// The failed calls remembered to recognise a repeat.
    pub(super) repeats: Vec<FailedCall>,
    /// The next model call is the last, offered no tools, for this reason; its note is in the
    /// transcript already.
    pub(super) final_turn: Option<StopReason>,
    /// The calls of the last model response, when they are not all recorded.
    pub(super) open_turn: Vec<OpenCall>,
    /// The boundary the run fences untrusted output with, once it has fenced one.
    pub(super) fence_boundary: Option<String>,
}

impl RunState {
    /// The conversation as the model last saw it (the last assistant message's calls may
    /// still wait for their results: see [`RunState::pending`]).
    pub fn messages(&self) -> &[Message] {
        &self.0.messages
    }

    /// How many model calls the run made.
    pub fn turns(&self) -> u32 {
        u32::try_from(self.0.turns.len()).unwrap_or(u32::MAX)
    }

    /// The calls that need a decision before the run can go on, in call order: calls waiting
    /// for approval, and calls cut off mid-flight whose effect is unknown.
    pub fn pending(&self) -> Vec<PendingCall> {
        self.0
            .open_turn
            .iter()
            .filter_map(|open| {
                open.pending()
                    .map(|reason| PendingCall::new(&open.call, reason))
            })
            .collect()
    }

    /// The effects ledger as far as the run knows: the recorded calls, then the calls of an
    /// unfinished turn that finished (with their outcome) or were cut off (`Unknown`).
    pub fn effects(&self) -> Vec<Effect> {
        let mut effects = self.0.effects.clone();
        for open in &self.0.open_turn {
            if !open.changes_world {
                continue;
            }
            let outcome = match &open.status {
                CallStatus::Finished(record) => record.effect,
                CallStatus::InFlight => EffectOutcome::Unknown,
                CallStatus::AwaitingApproval | CallStatus::NotStarted => continue,
            };
            effects.push(Effect {
                tool: open.call.name.clone(),
                call_id: open.call.id.clone(),
                arguments: open.call.arguments.clone(),
                outcome,
            });
        }
        effects
    }

    /// The calls of the last model response, when they are not all recorded.
    pub(super) fn open_calls(&self) -> &[OpenCall] {
        &self.0.open_turn
    }

    /// Checks `decisions` against the calls that wait on one; `needs_approval` says whether
    /// the resuming agent's rules ask approval for a call that did not run yet.
    ///
    /// A turn whose calls share an id is refused whatever the decisions: a decision, and the
    /// outcome of a call that finished, are found by id. (A run gives the calls of each
    /// response distinct ids; such a state was written otherwise, or changed.)
    pub(super) fn check(
        &self,
        decisions: &Decisions,
        needs_approval: impl Fn(&ToolCall) -> bool,
    ) -> Result<(), Refusal> {
        let shared = shared_ids(self.0.open_turn.iter().map(|open| open.call.id.as_str()));
        if !shared.is_empty() {
            return Err(Refusal {
                undecided: Vec::new(),
                invalid: shared,
            });
        }
        let waiting: Vec<PendingCall> = self
            .0
            .open_turn
            .iter()
            .filter_map(|open| {
                let reason = open.pending().or_else(|| {
                    let not_run =
                        matches!(open.status, CallStatus::NotStarted | CallStatus::InFlight);
                    (not_run && needs_approval(&open.call)).then_some(PendingReason::Approval)
                })?;
                Some(PendingCall::new(&open.call, reason))
            })
            .collect();
        let refusal = Refusal::of(decisions, &waiting);
        if refusal.is_empty() {
            Ok(())
        } else {
            Err(refusal)
        }
    }
}

/// The serialized form: the fields with the format's version.
#[derive(Serialize, Deserialize)]
struct Versioned {
    version: u32,
    messages: Vec<Message>,
    turns: Vec<TrajectoryTurn>,
    usage: Usage,
    effects: Vec<Effect>,
    tainted_by: Vec<String>,
    tool_stats: BTreeMap<String, ToolStats>,
    failures: Vec<FailureRecord>,
    consecutive_failures: u32,
    succeeded: Vec<String>,
    repeats: Vec<FailedCall>,
    #[serde(default)]
    final_turn: Option<StopReason>,
    #[serde(default)]
    open_turn: Vec<OpenCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fence_boundary: Option<String>,
}

impl TryFrom<Versioned> for RunState {
    type Error = String;

    fn try_from(v: Versioned) -> Result<Self, String> {
        if v.version != VERSION {
            return Err(format!(
                "a run state of version {} cannot be read by this version of reticent, which \
                 reads version {VERSION}",
                v.version
            ));
        }
        Ok(Self(Box::new(State {
            messages: v.messages,
            turns: v.turns,
            usage: v.usage,
            effects: v.effects,
            tainted_by: v.tainted_by,
            tool_stats: v.tool_stats,
            failures: v.failures,
            consecutive_failures: v.consecutive_failures,
            succeeded: v.succeeded,
            repeats: v.repeats,
            final_turn: v.final_turn,
            open_turn: v.open_turn,
            fence_boundary: v.fence_boundary,
        })))
    }
}

impl From<RunState> for Versioned {
    fn from(s: RunState) -> Self {
        let s = *s.0;
        Self {
            version: VERSION,
            messages: s.messages,
            turns: s.turns,
            usage: s.usage,
            effects: s.effects,
            tainted_by: s.tainted_by,
            tool_stats: s.tool_stats,
            failures: s.failures,
            consecutive_failures: s.consecutive_failures,
            succeeded: s.succeeded,
            repeats: s.repeats,
            final_turn: s.final_turn,
            open_turn: s.open_turn,
            fence_boundary: s.fence_boundary,
        }
    }
}

/// One call of a turn that was not recorded as a whole, and how far it got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct OpenCall {
    pub(super) call: ToolCall,
    /// The tool is registered and not `read_only`: the call may change the world.
    pub(super) changes_world: bool,
    pub(super) status: CallStatus,
}

impl OpenCall {
    /// Why the call waits for a decision, if it does.
    fn pending(&self) -> Option<PendingReason> {
        match self.status {
            CallStatus::AwaitingApproval => Some(PendingReason::Approval),
            CallStatus::InFlight if self.changes_world => Some(PendingReason::Unknown),
            _ => None,
        }
    }
}

/// How far a call of an unfinished turn got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum CallStatus {
    /// It waits for a person's approval; it has not run.
    AwaitingApproval,
    /// It has not started: it waits with its turn for the calls awaiting approval, or its
    /// run stopped before its turn came.
    NotStarted,
    /// It may have started and did not finish: its effect is unknown.
    InFlight,
    /// It finished.
    Finished(CallRecord),
}

/// What a run keeps of one finished tool call: what the model is shown, and whether and how it
/// failed — never the failure's full error.
///
/// A [`StepExecutor`](crate::agent::StepExecutor) journals it for each tool call and hands it back
/// when the call is replayed. It serializes with serde; its fields are the run's business.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The text the model is shown (for a failure, before an exact repeat is shortened).
    pub(super) content: String,
    pub(super) is_error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) kind: Option<String>,
    pub(super) effect: EffectOutcome,
    #[serde(default, skip_serializing_if = "is_false")]
    pub(super) timed_out: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub(super) fatal: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub(super) message_shown: bool,
    pub(super) elapsed: Duration,
    /// An earlier attempt started the call and never recorded its end.
    #[serde(default, skip_serializing_if = "is_false")]
    pub(super) interrupted: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl CallRecord {
    /// The text the model is shown for the call.
    pub fn content(&self) -> &str {
        &self.content
    }

    /// Whether the call failed (or was refused).
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// Whether the call took effect.
    pub fn effect(&self) -> EffectOutcome {
        self.effect
    }

    /// Whether an earlier attempt started the call and never recorded how it ended (see
    /// [`ToolStep::interrupted`](crate::agent::ToolStep::interrupted)).
    pub fn is_interrupted(&self) -> bool {
        self.interrupted
    }

    /// The record of a call that ended with `outcome` after `elapsed`.
    pub(super) fn of(outcome: &Result<String, ToolFailure>, elapsed: Duration) -> Self {
        match outcome {
            Ok(content) => Self {
                content: content.clone(),
                is_error: false,
                kind: None,
                effect: EffectOutcome::Applied,
                timed_out: false,
                fatal: false,
                message_shown: false,
                elapsed,
                interrupted: false,
            },
            Err(failure) => Self {
                content: failure.shown_to_model.clone(),
                is_error: true,
                kind: Some(failure.kind.clone()),
                effect: failure.effect,
                timed_out: failure.timed_out,
                fatal: failure.fatal,
                message_shown: failure.message_shown,
                elapsed,
                interrupted: false,
            },
        }
    }

    /// The record of a call an earlier attempt started and never finished.
    pub(super) fn interrupted() -> Self {
        Self {
            content: String::new(),
            is_error: true,
            kind: None,
            effect: EffectOutcome::Unknown,
            timed_out: false,
            fatal: false,
            message_shown: false,
            elapsed: Duration::ZERO,
            interrupted: true,
        }
    }

    /// The call's outcome again, for `call`: a failure gets `live`, its full error, when the
    /// call ran in this process, and [`ErrorNotKept`] when it was restored.
    pub(super) fn into_executed(self, call: &ToolCall, live: Option<ToolFailure>) -> Executed {
        let elapsed = self.elapsed;
        if !self.is_error {
            return Executed {
                outcome: Ok(self.content),
                elapsed,
            };
        }
        let failure = live.unwrap_or_else(|| {
            let kind = self.kind.unwrap_or_default();
            let mut failure = ToolFailure::new(
                &call.name,
                &call.id,
                kind.clone(),
                Arc::new(ErrorNotKept {
                    tool: call.name.clone(),
                    call_id: call.id.clone(),
                    kind,
                }),
                self.content,
            );
            failure.effect = self.effect;
            failure.timed_out = self.timed_out;
            failure.fatal = self.fatal;
            failure.message_shown = self.message_shown;
            failure.elapsed = elapsed;
            failure.arguments = call.arguments.value().clone();
            failure
        });
        Executed {
            outcome: Err(failure),
            elapsed,
        }
    }
}

/// A failed call as a state keeps it: everything but the full error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct FailureRecord {
    tool: String,
    call_id: String,
    arguments: serde_json::Value,
    kind: String,
    shown_to_model: String,
    effect: EffectOutcome,
    timed_out: bool,
    fatal: bool,
    message_shown: bool,
    elapsed: Duration,
}

impl FailureRecord {
    pub(super) fn of(failure: &ToolFailure) -> Self {
        Self {
            tool: failure.tool.clone(),
            call_id: failure.call_id.clone(),
            arguments: failure.arguments.clone(),
            kind: failure.kind.clone(),
            shown_to_model: failure.shown_to_model.clone(),
            effect: failure.effect,
            timed_out: failure.timed_out,
            fatal: failure.fatal,
            message_shown: failure.message_shown,
            elapsed: failure.elapsed,
        }
    }

    /// The failure again, with [`ErrorNotKept`] for its error.
    pub(super) fn restore(self) -> ToolFailure {
        let mut failure = ToolFailure::new(
            &self.tool,
            &self.call_id,
            self.kind.clone(),
            Arc::new(ErrorNotKept {
                tool: self.tool.clone(),
                call_id: self.call_id.clone(),
                kind: self.kind,
            }),
            self.shown_to_model,
        );
        failure.arguments = self.arguments;
        failure.effect = self.effect;
        failure.timed_out = self.timed_out;
        failure.fatal = self.fatal;
        failure.message_shown = self.message_shown;
        failure.elapsed = self.elapsed;
        failure
    }
}

/// The full error of a failed call restored from a [`RunState`] or replayed from a journal,
/// which keep only what the model was shown. The full error was handed over where the call
/// ran: on that run's result, its events and its `execute_tool` span.
#[derive(Clone, Debug, thiserror::Error)]
#[error(
    "the full error of call `{call_id}` of `{tool}` ({kind}) is not kept with a saved or \
     journaled run; it was reported where the call ran"
)]
pub struct ErrorNotKept {
    /// The tool.
    pub tool: String,
    /// The call's id.
    pub call_id: String,
    /// The failure's kind.
    pub kind: String,
}

/// Why [`Agent::resume`](crate::Agent::resume) did not continue a run.
#[derive(Debug)]
#[non_exhaustive]
pub enum ResumeError {
    /// The decisions do not fit the state: nothing ran, and the state is handed back.
    Refused(ResumeRefused),
    /// The resumed run did not finish.
    Run(AgentError),
}

impl ResumeError {
    /// The resumed run's error, if it ran.
    pub fn into_run_error(self) -> Option<AgentError> {
        match self {
            Self::Run(error) => Some(error),
            Self::Refused(_) => None,
        }
    }
}

impl From<AgentError> for ResumeError {
    fn from(error: AgentError) -> Self {
        Self::Run(error)
    }
}

impl fmt::Display for ResumeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused(refused) => refused.fmt(f),
            Self::Run(error) => write!(f, "the resumed run did not finish: {error}"),
        }
    }
}

impl std::error::Error for ResumeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Refused(_) => None,
            // `Display` says the run's error: its source is what it does not say
            Self::Run(error) => crate::error::chain::first_new_source(&error.to_string(), error),
        }
    }
}

/// The decisions given to resume a state do not fit it; nothing ran.
#[derive(Debug)]
#[non_exhaustive]
pub struct ResumeRefused {
    /// Calls that wait for a decision and have none: calls awaiting approval, and calls cut off
    /// mid-flight whose effect is unknown — reconcile those (find out whether they happened),
    /// then approve (run again), reject, or say they were applied.
    pub undecided: Vec<PendingCall>,
    /// Everything else that is wrong, each said in a sentence: a decision for a call that does
    /// not wait, a call decided twice, a decision made for another call than the one that
    /// waits under its id (its digest differs), an approval given by id alone, `applied` for a
    /// call that never ran, calls of the unfinished turn that share an id.
    pub invalid: Vec<String>,
    /// The state, as it was given.
    pub state: RunState,
}

impl ResumeRefused {
    pub(super) fn new(refusal: Refusal, state: RunState) -> Self {
        Self {
            undecided: refusal.undecided,
            invalid: refusal.invalid,
            state,
        }
    }

    /// Each thing wrong with the decisions, in a sentence.
    pub fn problems(&self) -> Vec<String> {
        Refusal {
            undecided: self.undecided.clone(),
            invalid: self.invalid.clone(),
        }
        .sentences()
    }
}

impl fmt::Display for ResumeRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot resume the run: {}", self.problems().join("; "))
    }
}

impl std::error::Error for ResumeRefused {}
