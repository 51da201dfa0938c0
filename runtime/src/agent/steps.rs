//! [`StepExecutor`]: where a run's steps run. The loop hands each model call ([`ModelStep`]) and
//! each tool call ([`ToolStep`]) to an executor, which runs it — or, when it has a record of
//! the step from an earlier attempt, returns the record instead. A durable executor (such as
//! `restate::Journal`, feature `restate`) journals each step, so a run cut off by a crash
//! replays from its journal without calling the model or any tool again.
//!
//! Without an executor (`Agent::run`, `Agent::resume`) every step runs in process.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::Inner;
use super::call::CallStage;
use super::reconcile::{Again, run_call};
use super::state::CallRecord;
use crate::error::ToolFailure;
use crate::model::{Model, ModelError, ModelRequest, ModelResponse, ToolCall};
use crate::tool::idempotency::KeySource;

/// Where a run's steps run: each model call and each tool call of a run started with
/// [`Agent::run_on`](crate::Agent::run_on) or [`Agent::resume_on`](crate::Agent::resume_on) is
/// handed to the executor, which runs it and returns its result — or returns the result it
/// recorded for the same step in an earlier attempt.
///
/// What an executor records is what the model saw: a model step's response, and a tool
/// step's [`CallRecord`] (the text the model is shown, never a withheld error message). A
/// failed call replayed from a record carries [`ErrorNotKept`](crate::failures::ErrorNotKept) in place of
/// its full error, which was reported where the call ran.
///
/// A run makes its steps in the same order whenever it is given the same results, so a journal
/// replays by position. The calls of one turn are handed over in call order and may run
/// concurrently.
///
/// ```
/// use futures::future::BoxFuture;
/// use reticent::{
///     Agent, ModelResponse, RunOptions, ScriptedModel,
///     agent::{CallRecord, ModelStep, StepError, StepExecutor, ToolStep},
/// };
///
/// /// Runs every step in process, and says what it runs.
/// struct Logged;
///
/// impl StepExecutor for Logged {
///     fn model_call(&self, step: ModelStep) -> BoxFuture<'_, Result<ModelResponse, StepError>> {
///         println!("model turn {}", step.turn());
///         Box::pin(async move { step.run().await.map_err(StepError::Model) })
///     }
///
///     fn tool_call(&self, step: ToolStep) -> BoxFuture<'_, Result<CallRecord, StepError>> {
///         println!("tool {} ({})", step.call().name, step.call().id);
///         Box::pin(async move { Ok(step.run().await) })
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let agent = Agent::builder(ScriptedModel::new(vec![ModelResponse::text("Hi!")])).build()?;
/// let result = agent.run_on("Hello", RunOptions::default(), &Logged).await?;
/// assert_eq!(result.output, "Hi!");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub trait StepExecutor: Send + Sync {
    /// Runs one model call, or returns the response recorded for it.
    fn model_call(&self, step: ModelStep) -> BoxFuture<'_, Result<ModelResponse, StepError>>;

    /// Runs one tool call, or returns the record kept of it.
    fn tool_call(&self, step: ToolStep) -> BoxFuture<'_, Result<CallRecord, StepError>>;

    /// The calls of a turn that have no outcome yet are about to be handed over, in this order.
    ///
    /// A durable executor records here which attempt started them, so that it can tell a call
    /// an earlier attempt started and never finished (and return
    /// [`ToolStep::interrupted`] for it) from one it is to run now. The default does nothing.
    fn calls_starting<'a>(&'a self, calls: &'a [ToolCall]) -> BoxFuture<'a, Result<(), StepError>> {
        let _ = calls;
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Why a step did not give a result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StepError {
    /// The model call failed (after any retries the executor made): the run ends with
    /// [`AgentError::Model`](crate::AgentError::Model).
    #[error(transparent)]
    Model(ModelError),
    /// The executor stopped the run, e.g. the durable invocation was cancelled: the run ends
    /// with [`AgentError::Cancelled`](crate::AgentError::Cancelled).
    #[error("the step was cancelled")]
    Cancelled,
}

/// One model call of a run, for a [`StepExecutor`].
pub struct ModelStep {
    pub(super) turn: u32,
    pub(super) model: Arc<dyn Model>,
    pub(super) request: ModelRequest,
    pub(super) span: tracing::Span,
}

impl fmt::Debug for ModelStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelStep")
            .field("turn", &self.turn)
            .finish_non_exhaustive()
    }
}

impl ModelStep {
    /// The turn, from 1.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// What the model is sent.
    pub fn request(&self) -> &ModelRequest {
        &self.request
    }

    /// Calls the model, on the turn's `chat` span.
    pub fn run(self) -> BoxFuture<'static, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let Self {
                model,
                request,
                span,
                ..
            } = self;
            let call = span
                .in_scope(|| model.complete(&request))
                .instrument(span.clone());
            let mut response = call.await?;
            // Before a journal serializes them: arguments nested too deep to handle.
            for call in &mut response.tool_calls {
                if let Some(arguments) = call.arguments.value_mut() {
                    crate::tool::cut_too_deep(arguments);
                }
            }
            Ok(response)
        })
    }
}

/// One tool call of a run, for a [`StepExecutor`].
pub struct ToolStep {
    pub(super) inner: Arc<Inner>,
    pub(super) call: ToolCall,
    /// The rule that refuses the call, if one does.
    pub(super) refused: Option<ToolFailure>,
    pub(super) token: CancellationToken,
    pub(super) cancellable: bool,
    /// Where the full error of a failure goes when the call runs here.
    pub(super) live: Arc<Mutex<Option<ToolFailure>>>,
    /// Where the call's idempotency key comes from.
    pub(super) key: KeySource,
    /// Whether the call runs again after its effect was unknown.
    pub(super) again: Again,
}

impl fmt::Debug for ToolStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolStep")
            .field("call", &self.call)
            .finish_non_exhaustive()
    }
}

impl ToolStep {
    /// The call, as the model made it.
    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// Whether running the call may change the world: its tool is registered, not `read_only`,
    /// and no rule refuses the call. An executor that cannot tell whether an earlier attempt of
    /// such a call took effect should return [`ToolStep::interrupted`] rather than run it again.
    pub fn changes_world(&self) -> bool {
        self.refused.is_none()
            && self
                .inner
                .tools
                .get(&self.call.name)
                .is_some_and(|(_, tool)| !tool.definition().annotations.read_only)
    }

    /// Runs the call (or records its refusal) on its `execute_tool` span. The full error of a
    /// failure goes to the run that made the step; the record holds what the model is shown.
    ///
    /// A call that runs again after its effect was unknown (the caller approved running it
    /// again) asks its tool's reconcile hook first, if it has one: a call the hook says took
    /// effect does not run, and is recorded as applied.
    pub fn run(self) -> BoxFuture<'static, CallRecord> {
        Box::pin(async move {
            let stage = run_call(
                &self.inner,
                &self.call,
                self.refused,
                &self.token,
                self.cancellable,
                None,
                self.key,
                self.again,
            )
            .await;
            let CallStage::Finished(executed) = stage else {
                return CallRecord::interrupted();
            };
            let record = CallRecord::of(&executed);
            if let Err(failure) = executed.outcome {
                *self.live.lock().unwrap_or_else(PoisonError::into_inner) = Some(failure);
            }
            record
        })
    }

    /// For a call an earlier attempt started and never recorded the end of, whose effect is
    /// unknown: asks its tool's reconcile hook (`#[tool(reconcile = path)]`) whether it took
    /// effect. Applied: the record of the applied call, which does not run again; not applied:
    /// the call runs, as [`run`](Self::run) runs it; unknown, or a tool without a hook: the
    /// record [`interrupted`](Self::interrupted) gives. The hook's answer is on the call's
    /// [`Effect`](crate::agent::Effect).
    pub fn reconcile(mut self) -> BoxFuture<'static, CallRecord> {
        if self.again == Again::No {
            self.again = Again::Undecided;
        }
        self.run()
    }

    /// The record of a call an earlier attempt started and never recorded the end of: its
    /// effect is unknown. The run does not tell the model anything about it; it stops, with
    /// the call pending ([`PendingReason::Unknown`](crate::agent::PendingReason::Unknown)), once the
    /// other calls of its turn have finished, for the caller to reconcile.
    pub fn interrupted(self) -> CallRecord {
        CallRecord::interrupted()
    }
}
