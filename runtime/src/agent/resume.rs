//! Resuming a run from a [`RunState`]: the caller's decisions are checked against the calls
//! that wait on one, the run is restored, the turn that did not finish is finished — calls
//! that finished are not run again, rejected calls are refused, approved calls run — and the
//! loop goes on.

use std::sync::Arc;

use tracing::Instrument;

use super::approval::{NotApproved, NotRunAgain};
use super::call::Executed;
use super::decision::{Decision, Decisions, Verdict};
use super::fence::Fence;
use super::gates::{Gates, Taint};
use super::ledger::Ledger;
use super::record::Record;
use super::repeats::Repeats;
use super::run::Run;
use super::state::{CallStatus, OpenCall, ResumeError, ResumeRefused, RunState, State};
use super::stats::Stats;
use super::steps::StepExecutor;
use super::{AgentError, AgentResult, Inner, RunOptions, spans};
use crate::error::{EffectOutcome, ToolFailure, kinds};
use crate::model::{Message, ModelRequest, ToolCall};
use crate::render;
use crate::tool::text_of;

pub(super) async fn resume(
    inner: Arc<Inner>,
    state: RunState,
    decisions: Decisions,
    options: RunOptions,
    steps: Option<&dyn StepExecutor>,
) -> Result<AgentResult, ResumeError> {
    // A call that has not run needs approval if the resuming agent's rules ask for it, as if
    // the model made it now; a rule that refuses it anyway asks for none.
    let gates = Gates::with_succeeded(state.0.succeeded.clone());
    let tainted = !state.0.tainted_by.is_empty();
    let checked = state.check(&decisions, |call| {
        let tool = inner.tools.get(&call.name).map(|(_, tool)| &**tool);
        inner.approvals.needs_approval(tool, call)
            && gates.check(&inner.rules, call, tainted).is_none()
    });
    if let Err(refusal) = checked {
        return Err(ResumeError::Refused(ResumeRefused::new(refusal, state)));
    }
    let span = spans::invoke_agent();
    let (run, open) = Run::restore(inner, state, options, steps);
    let result = run.go_on(open, &decisions).instrument(span.clone()).await;
    spans::record_run(&span, &result);
    result.map_err(ResumeError::Run)
}

impl<'e> Run<'e> {
    /// The run `state` describes, and the calls of its turn that did not finish.
    fn restore(
        inner: Arc<Inner>,
        state: RunState,
        options: RunOptions,
        steps: Option<&'e dyn StepExecutor>,
    ) -> (Self, Vec<OpenCall>) {
        let State {
            messages,
            turns,
            usage,
            effects,
            tainted_by,
            tool_stats,
            failures,
            consecutive_failures,
            succeeded,
            repeats,
            final_turn,
            open_turn,
            fence_boundary,
        } = *state.0;
        // A last turn offers no tools; its note is in the transcript already.
        let tools = if final_turn.is_some() {
            Vec::new()
        } else {
            inner.definitions.clone()
        };
        let run = Run {
            record: Record {
                request: ModelRequest {
                    system: inner.system.clone(),
                    messages,
                    tools,
                },
                turns,
                usage,
                failures: failures.into_iter().map(|f| f.restore()).collect(),
                whole_outputs: Vec::new(),
                ledger: Ledger(effects),
                taint: Taint { tainted_by },
                stats: Stats(tool_stats),
                fence: Fence::new(
                    fence_boundary
                        .or(options.fence_boundary)
                        .or_else(|| inner.model.fence_boundary()),
                ),
            },
            inner,
            events: None,
            cancellable: options.cancellation.is_some(),
            token: options.cancellation.unwrap_or_default(),
            gates: Gates::with_succeeded(succeeded),
            repeats: Repeats::from_records(repeats),
            consecutive_failures,
            final_turn,
            steps,
            checkpoint: options.checkpoint,
        };
        (run, open_turn)
    }

    /// Finishes the turn of `open` with `decisions` (checked), then goes on as any run.
    async fn go_on(
        mut self,
        open: Vec<OpenCall>,
        decisions: &Decisions,
    ) -> Result<AgentResult, AgentError> {
        if !open.is_empty() {
            let (calls, known): (Vec<ToolCall>, Vec<Option<Executed>>) = open
                .into_iter()
                .map(|open| {
                    let known = decided(&open, decisions.get(&open.call.id));
                    (open.call, known)
                })
                .unzip();
            if let Some(open) = self.run_tools(calls, known).await? {
                let text = self
                    .record
                    .request
                    .messages
                    .iter()
                    .rev()
                    .find_map(|m| match m {
                        Message::Assistant { text, .. } => Some(text.clone()),
                        _ => None,
                    });
                return Ok(self.pause(open, text.flatten()));
            }
            self.save(Vec::new());
        }
        self.drive().await
    }
}

/// The outcome of `open` without running it, when it has one: it finished before the run
/// stopped, or the caller decided it; `None` when it is to run.
fn decided(open: &OpenCall, decision: Option<&Decision>) -> Option<Executed> {
    let call = &open.call;
    // Checked: a decision here was made for this very call.
    match (&open.status, decision.map(|decision| &decision.verdict)) {
        (CallStatus::Finished(record), _) => Some(record.clone().into_executed(call, None)),
        (_, None | Some(Verdict::Approve)) => None,
        (CallStatus::InFlight, Some(Verdict::Reject)) => {
            let mut failure = ToolFailure::new(
                &call.name,
                &call.id,
                kinds::INTERRUPTED,
                Arc::new(NotRunAgain {
                    tool: call.name.clone(),
                    call_id: call.id.clone(),
                }),
                render::not_run_again(&call.name),
            );
            // Nobody knows whether it happened: the ledger says so.
            failure.effect = EffectOutcome::Unknown;
            Some(refused(failure))
        }
        (_, Some(Verdict::Reject)) => Some(refused(ToolFailure::new(
            &call.name,
            &call.id,
            kinds::NOT_APPROVED,
            Arc::new(NotApproved {
                tool: call.name.clone(),
                call_id: call.id.clone(),
            }),
            render::not_approved(&call.name),
        ))),
        // Checked: only a call whose effect was unknown can be applied.
        (_, Some(Verdict::Applied(output))) => Some(Executed {
            outcome: Ok(text_of(output).into_owned()),
            elapsed: std::time::Duration::ZERO,
        }),
    }
}

fn refused(failure: ToolFailure) -> Executed {
    Executed {
        outcome: Err(failure),
        elapsed: std::time::Duration::ZERO,
    }
}
