//! The tool calls of one turn: checked against the rules as the run stood when the model made
//! them, run concurrently (at most `max_parallel_tools` at once), and recorded in call order —
//! the transcript, the failures, the ledger, the taint record, the counts and the events.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::{SinkExt, StreamExt};

use super::call::{CallStage, Executed};
use super::fence::Fence;
use super::reconcile::{Again, run_call};
use super::run::Run;
use super::state::{CallStatus, OpenCall};
use super::{AgentError, AgentEvent, Inner, ToolFailureMode, WholeOutput};
use crate::content;
use crate::error::{ToolFailure, kinds};
use crate::model::{Message, ToolCall, ToolResult};
use crate::render;
use crate::tool::idempotency::KeySource;
use crate::tool::{Tool, bounded_view};

/// What the model is shown of `content`, a successful output of `tool`, when it is not the
/// output itself (the caller then keeps the whole output): a content tool's blocks are
/// described, never shown as their data; past its budget, the model is shown the output's head
/// and tail; and an untrusted output is shown in its fence (`fence.rs`).
fn shown_for(
    inner: &Inner,
    fence: &mut Fence,
    tool: Option<&dyn Tool>,
    untrusted: bool,
    content: &str,
) -> Option<String> {
    let described = tool
        .filter(|tool| tool.definition().content_output)
        .and_then(|_| content::describe_output(content));
    let budget = tool
        .and_then(Tool::max_output)
        .unwrap_or(inner.max_tool_output);
    let cut = bounded_view(described.as_deref().unwrap_or(content), budget).or(described);
    if untrusted && inner.fence_untrusted_output {
        Some(fence.fence(cut.as_deref().unwrap_or(content)))
    } else {
        cut
    }
}

fn set_progress(slot: &Mutex<CallStage>, progress: CallStage) {
    *slot.lock().unwrap_or_else(PoisonError::into_inner) = progress;
}

impl Run<'_> {
    /// Runs the calls of one turn concurrently and appends their results in call order. A
    /// call whose outcome is `known` (decided by the caller, or finished before the run
    /// stopped) does not run again.
    ///
    /// `Some`: the turn stopped before all its calls finished, because an executor reported a
    /// call interrupted in an earlier attempt; nothing of the turn is recorded, and the calls
    /// say how far each got.
    pub(super) async fn run_tools(
        &mut self,
        calls: Vec<ToolCall>,
        known: Vec<Option<Executed>>,
        again: &[Again],
    ) -> Result<Option<Vec<OpenCall>>, AgentError> {
        // Where each call got to, for the ledger and the state if the turn is cut off: a call
        // cut off after it started may have taken effect, and one that finished is known,
        // also when the stream holds its result behind an earlier call that is still running.
        let progress: Vec<Mutex<CallStage>> = known
            .into_iter()
            .map(|known| Mutex::new(known.map_or(CallStage::NotStarted, CallStage::Finished)))
            .collect();
        self.save_turn(&calls, &progress);
        let finished = self.calls_starting(&calls, &progress).await
            && self.execute_all(&calls, &progress, again).await;
        let progress: Vec<CallStage> = progress
            .into_iter()
            .map(|slot| slot.into_inner().unwrap_or_else(PoisonError::into_inner))
            .collect();
        if !finished {
            // The turn is abandoned: its results never reach the model. The state keeps what
            // may have happened, and so does the ledger: calls that finished, and calls cut
            // off mid-flight.
            let open = self.open_calls(&calls, &progress);
            let state = self.state(open.clone());
            self.ledger_open(&open);
            return Err(AgentError::Cancelled {
                partial: Box::new(self.snapshot(Some(state))),
            });
        }
        if progress.iter().any(|p| matches!(p, CallStage::Interrupted)) {
            return Ok(Some(self.open_calls(&calls, &progress)));
        }

        // The first failure (in call order) that ends the run, under `Propagate` or because it
        // is fatal, ends it after the whole turn is recorded: the other calls ran
        // concurrently, and their effects and errors are the caller's to know. Every call
        // keeps its result, so the partial transcript stays a valid history.
        let mut ending: Option<ToolFailure> = None;
        for (call, progress) in calls.into_iter().zip(progress) {
            let CallStage::Finished(executed) = progress else {
                unreachable!("every call of a turn that was not cut off finished");
            };
            if let Some(failure) = self.record_call(call, executed).await
                && ending.is_none()
            {
                ending = Some(failure);
            }
        }
        match ending {
            Some(failure) => Err(AgentError::ToolFailed {
                failure,
                partial: Box::new(self.snapshot(None)),
            }),
            None => Ok(None),
        }
    }

    /// Answers the calls of a turn that offered no tools: none runs, each gets a fixed error
    /// result, so that the transcript stays a valid history.
    pub(super) async fn refuse_calls(&mut self, calls: Vec<ToolCall>) {
        for call in calls {
            let failure = ToolFailure::new(
                &call.name,
                &call.id,
                kinds::TOOLS_DISABLED,
                Arc::new(ToolsDisabled {
                    tool: call.name.clone(),
                }),
                render::tools_unavailable(&call.name),
            );
            let executed = Executed {
                outcome: Err(failure),
                elapsed: Duration::ZERO,
                reconciled: None,
            };
            // A refusal never ends the run: this is its last turn anyway.
            let _ = self.record_call(call, executed).await;
        }
    }

    /// Runs the calls of `calls` that have not finished, concurrently, each through the step
    /// executor if there is one; each call's outcome goes to its slot of `progress`. `false`
    /// when the run was cancelled before they all finished.
    /// `again` says which calls run again after their effect was unknown (none, when empty).
    async fn execute_all(
        &self,
        calls: &[ToolCall],
        progress: &[Mutex<CallStage>],
        again: &[Again],
    ) -> bool {
        let inner = &*self.inner;
        let gates = &self.gates;
        let tainted = self.record.taint.is_tainted();
        // Cancelled with the run, or by a step executor that stops it.
        let token = &match self.steps {
            Some(_) => self.token.child_token(),
            None => self.token.clone(),
        };
        let cancellable = self.cancellable;
        // `buffered` polls a call's future first when the call gets its turn under
        // `max_parallel_tools`: that is when it is reported started.
        // (A loop, not a closure: a closure's future would not be `Send` for every lifetime.)
        let mut pending = Vec::with_capacity(calls.len());
        // The turn's response is recorded: its number is the count of turns.
        let turn = self.record.turn_count();
        for (index, (call, slot)) in calls.iter().zip(progress).enumerate() {
            if matches!(
                *slot.lock().unwrap_or_else(PoisonError::into_inner),
                CallStage::Finished(_)
            ) {
                continue;
            }
            let mut events = self.event_sender();
            let key = KeySource::Run {
                run: Arc::clone(&self.id),
                turn,
                index: u32::try_from(index).unwrap_or(u32::MAX),
            };
            let again = again.get(index).copied().unwrap_or_default();
            pending.push(async move {
                set_progress(slot, CallStage::Running);
                if let Some(events) = &mut events {
                    let _ = events
                        .send(AgentEvent::ToolStarted { call: call.clone() })
                        .await;
                }
                let refused = gates.check(&inner.rules, call, tainted);
                let done = match self.steps {
                    Some(steps) => {
                        self.tool_step(steps, call, refused, token, key, again)
                            .await
                    }
                    None => {
                        run_call(
                            inner,
                            call,
                            refused,
                            token,
                            cancellable,
                            events.as_mut(),
                            key,
                            again,
                        )
                        .await
                    }
                };
                if matches!(done, CallStage::Running) {
                    // The executor stopped the run.
                    token.cancel();
                    return;
                }
                set_progress(slot, done);
                self.save_turn(calls, progress);
            });
        }
        let mut stream = futures::stream::iter(pending).buffered(inner.max_parallel_tools);
        loop {
            tokio::select! {
                biased;
                () = token.cancelled() => return false,
                next = stream.next() => if next.is_none() {
                    return true;
                },
            }
        }
    }

    /// Records one finished call in call order; the failure, if it ends the run.
    async fn record_call(&mut self, call: ToolCall, executed: Executed) -> Option<ToolFailure> {
        let tool = self.inner.tools.get(&call.name).map(|(_, tool)| &**tool);
        let untrusted = tool.is_some_and(|tool| tool.untrusted_output());
        let reconciled = executed.reconciled.clone();
        self.record
            .ledger
            .record(tool, &call, executed.effect(), reconciled);
        match executed.outcome {
            Ok(content) => {
                self.record.stats.count(&call.name, false, false);
                self.consecutive_failures = 0;
                self.gates.succeeded(&call.name);
                if untrusted {
                    self.record.taint.add(&call.id);
                }
                let shown = shown_for(
                    &self.inner,
                    &mut self.record.fence,
                    tool,
                    untrusted,
                    &content,
                );
                // The event copies the output: made only for a run someone streams.
                if self.streaming() {
                    self.emit(AgentEvent::ToolSucceeded {
                        tool: call.name.clone(),
                        call_id: call.id.clone(),
                        output: content.clone(),
                        shown_to_model: shown.clone(),
                        elapsed: executed.elapsed,
                    })
                    .await;
                }
                let content = match shown {
                    None => content,
                    Some(shown) => {
                        self.record.whole_outputs.push(WholeOutput {
                            tool: call.name.clone(),
                            call_id: call.id.clone(),
                            output: content,
                        });
                        shown
                    }
                };
                self.record.request.messages.push(Message::Tool(ToolResult {
                    call_id: call.id,
                    name: call.name,
                    content,
                    is_error: false,
                }));
                None
            }
            Err(mut failure) => {
                self.record.stats.count(&call.name, true, failure.timed_out);
                // The error's own message may carry what the tool read from elsewhere.
                if failure.message_shown && untrusted {
                    self.record.taint.add(&call.id);
                }
                // Saturates: a stored state may hold any count.
                self.consecutive_failures = self.consecutive_failures.saturating_add(1);
                // A call that was not run did not fail again: it is never collapsed.
                if failure.kind != kinds::TOOLS_DISABLED {
                    let collapse = self.inner.failure_options.collapse_repeats;
                    let text = std::mem::take(&mut failure.shown_to_model);
                    failure.shown_to_model = self.repeats.shown(&call, text, collapse);
                }
                failure.arguments = call.arguments.into_value();
                self.record.failures.push(failure.clone());
                self.emit(AgentEvent::ToolFailed(failure.clone())).await;
                self.record.request.messages.push(Message::Tool(ToolResult {
                    call_id: call.id,
                    name: call.name,
                    content: failure.shown_to_model.clone(),
                    is_error: true,
                }));
                let ends_run =
                    self.inner.failure_mode == ToolFailureMode::Propagate || failure.fatal;
                ends_run.then_some(failure)
            }
        }
    }
}

/// The model called a tool in a turn that offered none.
#[derive(Clone, Debug, thiserror::Error)]
#[error("the model called `{tool}` in its last turn, which offered no tools; the call was not run")]
pub struct ToolsDisabled {
    /// The tool the model called.
    pub tool: String,
}

impl Run<'_> {
    /// The calls of a turn as they wait for approval, when one of them needs it: none of the
    /// turn's calls runs until the caller decides. A call a rule refuses anyway needs none.
    pub(super) fn awaiting_approval(&self, calls: &[ToolCall]) -> Option<Vec<OpenCall>> {
        let tainted = self.record.taint.is_tainted();
        let needs: Vec<bool> = calls
            .iter()
            .map(|call| {
                let tool = self.inner.tools.get(&call.name).map(|(_, tool)| &**tool);
                self.inner.approvals.needs_approval(tool, call)
                    && self.gates.check(&self.inner.rules, call, tainted).is_none()
            })
            .collect();
        if !needs.contains(&true) {
            return None;
        }
        let open = calls
            .iter()
            .zip(needs)
            .map(|(call, needs)| {
                let status = if needs {
                    CallStatus::AwaitingApproval
                } else {
                    CallStatus::NotStarted
                };
                self.open_call(call, status)
            })
            .collect();
        Some(open)
    }
}
