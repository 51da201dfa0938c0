//! The agent loop: talk to a model, run its tool calls, apply the failure policy, and give the
//! caller the full record.
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | [`Agent`] and its ways to run |
//! | `builder.rs` | [`AgentBuilder`] |
//! | `call_limit.rs` | the most tool calls one response may ask for (`max_calls_per_turn`) |
//! | `policy.rs` | [`ToolFailureMode`], [`ToolFailureOptions`] |
//! | `result.rs` | [`AgentResult`], [`AgentError`], [`StopReason`], [`RunOptions`], [`WholeOutput`] |
//! | `event.rs` | [`AgentEvent`] |
//! | `run.rs` | the loop: one model turn after another |
//! | `call_ids.rs` | the calls of one model response under distinct ids |
//! | `turn.rs` | the tool calls of one turn, run concurrently and recorded in call order |
//! | `call.rs` | one tool call as the loop runs it, and how far each call of a turn got |
//! | `record.rs` | what a run gathers for the caller, and the result made from it |
//! | `fence.rs` | the fence around untrusted output, and the run's boundary |
//! | `gates.rs` | what a call is checked against before it runs: prerequisites, taint rules |
//! | `approval.rs` | calls a person must approve, and the calls a run waits on: [`PendingCall`] |
//! | `decision.rs` | the caller's answers: [`Decision`], [`Verdict`], [`Decisions`], and what is wrong with them |
//! | `digest.rs` | what a decision is bound to: [`CallDigest`] of a call's tool and arguments |
//! | `state.rs` | what a stopped run goes on from: [`RunState`], [`CallRecord`], [`ResumeError`] |
//! | `resume.rs` | going on from a [`RunState`] with the caller's decisions |
//! | `save.rs` | writing a [`RunState`] from a run, and reading one back |
//! | `steps.rs` | where each model call and tool call runs: [`StepExecutor`] |
//! | `stepped.rs` | a run's model and tool calls handed to its [`StepExecutor`] |
//! | `repeats.rs` | recognising an exact repeat of a failed call |
//! | `ledger.rs` | the effects ledger: [`Effect`] |
//! | `stats.rs` | per-tool counts: [`ToolStats`] |
//! | `spans.rs` | the `invoke_agent` and `chat` spans |

use std::fmt;
use std::sync::Arc;

use futures::Stream;

use crate::model::Model;
use crate::tool::{ToolDefinition, ToolSet};

pub(crate) mod approval;
mod builder;
mod call;
mod call_ids;
mod call_limit;
mod decision;
mod digest;
mod event;
pub(crate) mod fence;
pub(crate) mod gates;
mod ledger;
mod policy;
mod record;
mod repeats;
mod result;
mod resume;
mod run;
mod save;
mod spans;
pub(crate) mod state;
mod stats;
mod stepped;
mod steps;
pub(crate) mod turn;

pub use approval::{PendingCall, PendingReason};
pub use builder::AgentBuilder;
pub use decision::{Decision, Decisions, Verdict};
pub use digest::{CallDigest, NotADigest};
pub use event::AgentEvent;
pub use ledger::Effect;
pub use policy::{ToolFailureMode, ToolFailureOptions};
pub use result::{AgentError, AgentResult, RunOptions, StopReason, WholeOutput};
pub use state::{CallRecord, ResumeError, RunState};
pub use stats::ToolStats;
pub use steps::{ModelStep, StepError, StepExecutor, ToolStep};

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
    pub(crate) tools: ToolSet,
    /// The tools' definitions in the model's schema dialect, in the order they were added.
    pub(crate) definitions: Vec<ToolDefinition>,
    pub(crate) failure_mode: ToolFailureMode,
    pub(crate) failure_options: ToolFailureOptions,
    pub(crate) max_consecutive_failures: u32,
    pub(crate) max_turns: u32,
    pub(crate) max_parallel_tools: usize,
    /// The most calls one response may ask for.
    pub(crate) max_calls_per_turn: usize,
    /// The output budget of a tool that sets none.
    pub(crate) max_tool_output: usize,
    /// Prerequisites and taint rules.
    pub(crate) rules: gates::Rules,
    /// The calls a person must approve.
    pub(crate) approvals: approval::ApprovalRules,
    pub(crate) record_content: bool,
    /// Whether the output of tools whose output is untrusted is fenced.
    pub(crate) fence_untrusted_output: bool,
    /// How a turn whose stream broke off is retried; `None`: it is not.
    pub(crate) turn_retry: Option<crate::model::RetryPolicy>,
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
            .field("max_calls_per_turn", &inner.max_calls_per_turn)
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
        run::run(Arc::clone(&self.inner), input.into(), options, None, None).await
    }

    /// Runs the agent with each model call and each tool call handed to `steps`, such as a
    /// durable executor that journals them (see [`StepExecutor`]).
    pub async fn run_on(
        &self,
        input: impl Into<String>,
        options: RunOptions,
        steps: &dyn StepExecutor,
    ) -> Result<AgentResult, AgentError> {
        run::run(
            Arc::clone(&self.inner),
            input.into(),
            options,
            None,
            Some(steps),
        )
        .await
    }

    /// Continues a stopped run from its `state`, with the caller's `decisions` for the calls
    /// it waits on ([`RunState::pending`]): approved calls run, rejected ones are refused and
    /// the model is told so, and calls that finished before the run stopped are not run again.
    ///
    /// The agent need not be the one that started the run — another process can resume a
    /// state read from storage — but it supplies the system prompt, the tools and the
    /// policies, so it should be built the same way.
    ///
    /// Refused, with the state handed back and nothing run
    /// ([`ResumeError::Refused`]), when a call that waits has no decision — a call awaiting
    /// approval, or a call cut off mid-flight whose effect is unknown (reconcile it first:
    /// approve it to run it again, reject it, or say it was applied) — when a decision names
    /// a call that does not wait for one, when a call is decided twice, when a decision was
    /// made for another call than the one that waits under its id (its
    /// [`CallDigest`] differs: the state says another tool or other arguments than the call
    /// the person decided on), when an approval does not say which call it approves (it was
    /// given by id alone), and when two calls of the state's unfinished turn share an id.
    pub async fn resume(
        &self,
        state: RunState,
        decisions: Decisions,
    ) -> Result<AgentResult, ResumeError> {
        self.resume_with(state, decisions, RunOptions::default())
            .await
    }

    /// [`Agent::resume`] with options: a cancellation token, a checkpoint. A history is not
    /// used: the state has the transcript.
    pub async fn resume_with(
        &self,
        state: RunState,
        decisions: Decisions,
        options: RunOptions,
    ) -> Result<AgentResult, ResumeError> {
        resume::resume(Arc::clone(&self.inner), state, decisions, options, None).await
    }

    /// [`Agent::resume_with`], with each step handed to `steps` (see [`Agent::run_on`]).
    pub async fn resume_on(
        &self,
        state: RunState,
        decisions: Decisions,
        options: RunOptions,
        steps: &dyn StepExecutor,
    ) -> Result<AgentResult, ResumeError> {
        resume::resume(
            Arc::clone(&self.inner),
            state,
            decisions,
            options,
            Some(steps),
        )
        .await
    }

    /// Runs the agent and reports what happens as it happens. The last item is always
    /// [`AgentEvent::Finished`]. Nothing runs until the stream is polled.
    pub fn run_stream(
        &self,
        input: impl Into<String>,
    ) -> impl Stream<Item = AgentEvent> + Send + Unpin + 'static {
        self.run_stream_with(input, RunOptions::default())
    }

    /// [`Agent::run_stream`] with options.
    pub fn run_stream_with(
        &self,
        input: impl Into<String>,
        options: RunOptions,
    ) -> impl Stream<Item = AgentEvent> + Send + Unpin + 'static {
        use futures::{FutureExt, StreamExt};
        // No backlog: the run hands over each event as it happens (see `Run::emit`).
        let (mut tx, rx) = futures::channel::mpsc::channel(0);
        let inner = Arc::clone(&self.inner);
        let input = input.into();
        let driver = async move {
            let result = run::run(inner, input, options, Some(tx.clone()), None).await;
            let _ = futures::SinkExt::send(&mut tx, AgentEvent::Finished(result)).await;
        };
        // Boxed, so that the stream is `Unpin` and `events.next().await` works without pinning.
        let driver = Box::pin(driver)
            .into_stream()
            .filter_map(|()| std::future::ready(None));
        futures::stream::select(driver, rx)
    }
}
