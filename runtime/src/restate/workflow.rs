//! A run as a Restate workflow: [`Journal::run`] drives it and waits on a durable promise
//! whenever it stops for approval; [`decide`] resolves the promise (a shared handler, called
//! through the ingress) and [`awaiting`] says what the run waits for.

use std::collections::BTreeMap;

use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};

use super::Journal;
use crate::agent::fence::derived_boundary;
use crate::agent::{
    Agent, AgentError, AgentResult, Decisions, Effect, PendingCall, ResumeError, RunOptions,
    StopReason, ToolStats,
};
use crate::model::{Message, Usage};

/// The workflow state key that holds what the run waits for.
const AWAITING: &str = "reticent.awaiting";

/// What a durable run waits for: the decisions on its pending calls. A person reads it with
/// [`awaiting`] (through a shared handler) and answers with [`decide`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Awaiting {
    /// Which wait of the run this is, from 1.
    pub round: u32,
    /// The calls that need a decision, in call order.
    pub pending: Vec<PendingCall>,
    /// Why the decisions of the previous round did not fit, when they did not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
}

impl Awaiting {
    /// The durable promise the run waits on in this round.
    fn promise(&self) -> String {
        format!("reticent.decisions.{}", self.round)
    }
}

impl Journal<'_, '_> {
    /// Runs `agent` on `input` as this workflow's `run` handler: each model call and each tool
    /// call a journaled step. When the run stops for approval, the calls it waits on are
    /// published in the workflow's state ([`awaiting`]) and the run waits on a durable promise
    /// — for hours if need be, the invocation suspended — until [`decide`] resolves it with the
    /// decisions; then it goes on as [`Agent::resume`] does.
    ///
    /// Replayed after a crash, the run takes every finished step from the journal, and each
    /// decision too. It ends with the run's result, or with a terminal error when the run
    /// does not finish: the message says why, never a tool's withheld message.
    pub async fn run(
        &self,
        agent: &Agent,
        input: impl Into<String>,
    ) -> Result<AgentResult, HandlerError> {
        let mut ran = agent
            .run_on(input, self.run_options(), self)
            .await
            .map_err(ResumeError::Run);
        let mut round = 0;
        loop {
            let (state, refused) = match ran {
                Ok(mut result) => match (result.stop_reason, result.state.take()) {
                    (StopReason::AwaitingApproval, Some(state)) => (state, Vec::new()),
                    (_, state) => {
                        result.state = state;
                        return Ok(result);
                    }
                },
                // `decide` checks the decisions before the promise resolves; this is left for
                // an agent whose rules changed between the two.
                Err(ResumeError::Refused(refusal)) => {
                    let problems = refusal.problems();
                    (refusal.state, problems)
                }
                Err(ResumeError::Run(error)) => return Err(terminal(&error)),
            };
            round += 1;
            let awaiting = Awaiting {
                round,
                pending: state.pending(),
                refused,
            };
            let key = awaiting.promise();
            self.ctx.set(AWAITING, Json(awaiting));
            let Json(decisions) = self.ctx.promise::<Json<Decisions>>(&key).await?;
            self.ctx.clear(AWAITING);
            ran = agent
                .resume_on(state, decisions, self.run_options(), self)
                .await;
        }
    }

    /// The options of a run on this journal. The boundary the run fences untrusted output with
    /// is derived from the invocation's id, so it is the same in every attempt and a replayed
    /// attempt shows the model the bytes the first one did; the id is Restate's, random, and
    /// never in what a tool reads.
    fn run_options(&self) -> RunOptions {
        RunOptions {
            fence_boundary: Some(derived_boundary(self.ctx.invocation_id())),
            ..RunOptions::default()
        }
    }
}

/// What the run waits for, for a shared handler of the workflow: `None` when it waits for
/// nothing (it is running, or done).
pub async fn awaiting(ctx: &SharedWorkflowContext<'_>) -> Result<Option<Awaiting>, HandlerError> {
    let awaiting: Option<Json<Awaiting>> = ctx.get(AWAITING).await?;
    Ok(awaiting.map(Json::into_inner))
}

/// Hands a person's `decisions` to the run waiting for them, for a shared handler of the
/// workflow (called through the ingress, e.g. `POST /Workflow/{id}/approve`).
///
/// Refused with a terminal error (HTTP 409) when the run waits for nothing, and (400) when the
/// decisions do not fit the calls it waits on — a call without a decision, a decision for a
/// call that does not wait, one whose digest is not the waiting call's, an approval that does
/// not give the call's digest, `applied` for a call that never ran — saying what is wrong, so
/// that the person can send them again. (Decisions that do not read — a call decided twice,
/// `{"c1": "reject", "c1": "approve"}` — are refused with 400 before the handler runs.)
pub async fn decide(
    ctx: &SharedWorkflowContext<'_>,
    decisions: Decisions,
) -> Result<(), HandlerError> {
    let Some(awaiting) = awaiting(ctx).await? else {
        return Err(
            TerminalError::new_with_code(409, "the run is not waiting for decisions").into(),
        );
    };
    let problems = decisions.problems(&awaiting.pending);
    if !problems.is_empty() {
        return Err(TerminalError::new_with_code(400, problems.join("; ")).into());
    }
    ctx.resolve_promise(&awaiting.promise(), Json(decisions));
    Ok(())
}

/// The terminal error of a run that did not finish: what the error's `Display` says (kinds and
/// call ids, never a tool's message).
fn terminal(error: &AgentError) -> HandlerError {
    let code = if error.is_cancelled() { 409 } else { 500 };
    TerminalError::new_with_code(code, error.to_string()).into()
}

/// A run's result as a workflow returns it (and Restate keeps it): what the model saw and what
/// the run did, never a tool's withheld error message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Outcome {
    /// The model's final text.
    pub output: String,
    /// Whether the model's last response had text for the user.
    pub answered: bool,
    /// Why the run stopped.
    pub stop_reason: StopReason,
    /// How many times the model was called.
    pub turns: u32,
    /// Tokens used over the whole run.
    pub usage: Usage,
    /// The conversation exactly as the model saw it.
    pub messages: Vec<Message>,
    /// Every call of a tool that is not `read_only`, with whether it took effect.
    pub effects: Vec<Effect>,
    /// Every failed call as the model saw it.
    pub failures: Vec<FailureShown>,
    /// The calls whose untrusted output entered the transcript.
    pub tainted_by: Vec<String>,
    /// Calls, failures and timeouts per tool.
    pub tool_stats: BTreeMap<String, ToolStats>,
}

/// A failed call as the model saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FailureShown {
    /// The tool.
    pub tool: String,
    /// The call's id.
    pub call_id: String,
    /// The failure's kind.
    pub kind: String,
    /// What the model was shown.
    pub shown_to_model: String,
}

impl From<&AgentResult> for Outcome {
    fn from(result: &AgentResult) -> Self {
        Self {
            output: result.output.clone(),
            answered: result.answered,
            stop_reason: result.stop_reason,
            turns: result.turns,
            usage: result.usage,
            messages: result.messages.clone(),
            effects: result.effects.clone(),
            failures: result
                .tool_failures
                .iter()
                .map(|f| FailureShown {
                    tool: f.tool.clone(),
                    call_id: f.call_id.clone(),
                    kind: f.kind.clone(),
                    shown_to_model: f.shown_to_model.clone(),
                })
                .collect(),
            tainted_by: result.tainted_by.clone(),
            tool_stats: result.tool_stats.clone(),
        }
    }
}
