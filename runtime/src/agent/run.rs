//! The loop itself.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use futures::SinkExt;
use futures::StreamExt;
use futures::channel::mpsc::Sender;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use tracing::field::Empty;

use super::exec::{Executed, Gate, Outcome, execute};
use super::{
    AgentError, AgentEvent, AgentResult, Effect, EffectOutcome, Inner, RunOptions, StopReason,
    ToolFailure, ToolFailureMode, ToolStats,
};
use crate::model::{Message, ModelRequest, ModelResponse, ToolResult, Usage};
use crate::render;
use crate::trajectory::{Trajectory, TrajectoryTurn};

/// A failed call, remembered to recognize an exact repeat of it.
struct FailedCall {
    tool: String,
    /// Compared as JSON values: the same arguments in another key order are the same call.
    arguments: serde_json::Value,
    /// The full model-visible text of its failure.
    text: String,
    call_id: String,
}

/// The state of one run.
struct Run {
    inner: Arc<Inner>,
    events: Option<Sender<AgentEvent>>,
    token: CancellationToken,
    /// The request of the next turn; its `messages` are the transcript.
    request: ModelRequest,
    turns: Vec<TrajectoryTurn>,
    failures: Vec<ToolFailure>,
    usage: Usage,
    /// Tools that succeeded in this run, for prerequisites.
    succeeded: HashSet<String>,
    /// The latest failure of each distinct (tool, arguments), to collapse exact repeats.
    failed_calls: Vec<FailedCall>,
    consecutive_failures: u32,
    /// Calls of tools that are not `read_only`, in call order.
    effects: Vec<Effect>,
    /// Calls whose untrusted output entered the transcript.
    tainted_by: Vec<String>,
    tool_stats: BTreeMap<String, ToolStats>,
}

pub(crate) async fn run(
    inner: Arc<Inner>,
    input: String,
    options: RunOptions,
    events: Option<Sender<AgentEvent>>,
) -> Result<AgentResult, AgentError> {
    let span = tracing::info_span!(
        "invoke_agent",
        otel.name = "invoke_agent",
        otel.status_code = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
        reticent.turns = Empty,
        reticent.tool_failures = Empty,
        reticent.stop_reason = Empty,
        reticent.tool_stats = Empty,
        reticent.tainted = Empty,
    );
    let mut messages = options.history;
    // Untrusted output in the history is in the transcript as much as output of this run.
    let tainted_by = history_taint(&inner, &messages);
    messages.push(Message::User { text: input });
    let run = Run {
        request: ModelRequest {
            system: inner.system.clone(),
            messages,
            tools: inner.definitions.clone(),
        },
        inner,
        events,
        token: options.cancellation.unwrap_or_default(),
        turns: Vec::new(),
        failures: Vec::new(),
        usage: Usage::default(),
        succeeded: HashSet::new(),
        failed_calls: Vec::new(),
        consecutive_failures: 0,
        effects: Vec::new(),
        tainted_by,
        tool_stats: BTreeMap::new(),
    };
    let result = run.drive().instrument(span.clone()).await;
    let (usage, turns, failures) = match &result {
        Ok(r) => (r.usage, r.turns, r.tool_failures.len()),
        Err(e) => {
            let p = e.partial();
            (p.usage, p.turns, p.tool_failures.len())
        }
    };
    span.record("gen_ai.usage.input_tokens", usage.input_tokens);
    span.record("gen_ai.usage.output_tokens", usage.output_tokens);
    span.record("reticent.turns", turns);
    span.record("reticent.tool_failures", failures);
    let record = match &result {
        Ok(r) => r,
        Err(e) => e.partial(),
    };
    if !record.tool_stats.is_empty() {
        span.record(
            "reticent.tool_stats",
            tracing::field::display(stats_text(&record.tool_stats)),
        );
    }
    span.record("reticent.tainted", !record.tainted_by.is_empty());
    match &result {
        Ok(r) => {
            span.record("reticent.stop_reason", tracing::field::debug(r.stop_reason));
        }
        Err(error) => {
            span.record("otel.status_code", "ERROR");
            let kind = match error {
                AgentError::Cancelled { .. } => "cancelled",
                AgentError::ToolFailed { .. } => "tool_failed",
                AgentError::Model { .. } => "model",
            };
            span.record("error.type", kind);
        }
    }
    result
}

impl Run {
    /// Sends an event to the stream, if there is one. The channel holds no backlog: the run
    /// waits until the consumer takes the event, so events arrive as things happen and a slow
    /// consumer slows the run instead of growing a queue.
    async fn emit(&mut self, event: AgentEvent) {
        if let Some(events) = &mut self.events {
            let _ = events.send(event).await;
        }
    }

    async fn drive(mut self) -> Result<AgentResult, AgentError> {
        let max_turns = self.inner.max_turns;
        let mut last_turn: Option<StopReason> = None;
        loop {
            if self.token.is_cancelled() {
                return Err(AgentError::Cancelled {
                    partial: Box::new(self.into_result(StopReason::Completed, None)),
                });
            }
            let turn = self.turn_count() + 1;
            if last_turn.is_none() && turn > 1 {
                if self.consecutive_failures >= self.inner.max_consecutive_failures {
                    last_turn = Some(StopReason::FailureLimit);
                    self.request
                        .messages
                        .push(Message::user(render::tools_disabled(
                            self.consecutive_failures,
                        )));
                } else if turn >= max_turns {
                    last_turn = Some(StopReason::TurnLimit);
                    self.request
                        .messages
                        .push(Message::user(render::turn_limit()));
                }
                if last_turn.is_some() {
                    self.request.tools.clear();
                }
            }

            let response = match self.complete(turn).await {
                Ok(response) => response,
                Err(error) => return Err(error),
            };
            self.request.messages.push(Message::Assistant {
                text: response.text.clone(),
                tool_calls: response.tool_calls.clone(),
            });
            // The response goes to the event stream whole, if there is one; otherwise its
            // text and calls are taken, not copied again.
            let (text, calls) = if self.events.is_some() {
                let parts = (response.text.clone(), response.tool_calls.clone());
                self.emit(AgentEvent::ModelResponded { turn, response })
                    .await;
                parts
            } else {
                (response.text, response.tool_calls)
            };

            if let Some(reason) = last_turn {
                return Ok(self.into_result(reason, text));
            }
            if calls.is_empty() {
                return Ok(self.into_result(StopReason::Completed, text));
            }
            if turn >= max_turns {
                return Ok(self.into_result(StopReason::TurnLimit, text));
            }
            self.run_tools(calls).await?;
        }
    }

    fn turn_count(&self) -> u32 {
        u32::try_from(self.turns.len()).unwrap_or(u32::MAX)
    }

    /// One model call, cancellable, on a `chat` span.
    async fn complete(&mut self, turn: u32) -> Result<ModelResponse, AgentError> {
        let span = tracing::info_span!(
            "chat",
            otel.name = "chat",
            otel.status_code = Empty,
            gen_ai.operation.name = "chat",
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
            error.type = Empty,
            reticent.turn = turn,
        );
        let model = Arc::clone(&self.inner.model);
        // A provider may do work (and open spans) before it returns its future: that belongs
        // to the `chat` span as much as the future does.
        let call = span
            .in_scope(|| model.complete(&self.request))
            .instrument(span.clone());
        let result = tokio::select! {
            biased;
            () = self.token.cancelled() => None,
            result = call => Some(result),
        };
        match result {
            None => Err(AgentError::Cancelled {
                partial: Box::new(self.snapshot(StopReason::Completed, None)),
            }),
            Some(Err(error)) => {
                span.record("otel.status_code", "ERROR");
                span.record("error.type", "model");
                Err(AgentError::Model {
                    error,
                    partial: Box::new(self.snapshot(StopReason::Completed, None)),
                })
            }
            Some(Ok(mut response)) => {
                // Before anything clones or compares them: arguments nested too deep to
                // handle without exhausting the stack, which the call is refused for anyway.
                for call in &mut response.tool_calls {
                    crate::__private::cut_too_deep(&mut call.arguments);
                }
                span.record("gen_ai.usage.input_tokens", response.usage.input_tokens);
                span.record("gen_ai.usage.output_tokens", response.usage.output_tokens);
                self.usage += response.usage;
                self.turns.push(TrajectoryTurn {
                    messages: self.request.messages.len(),
                    tools_offered: !self.request.tools.is_empty(),
                    response: response.clone(),
                });
                Ok(response)
            }
        }
    }

    /// Runs the calls of one turn concurrently and appends their results in call order.
    async fn run_tools(&mut self, calls: Vec<crate::model::ToolCall>) -> Result<(), AgentError> {
        // Where each call got to, for the ledger if the turn is cancelled: a call cut off
        // after it started may have taken effect, and one that finished is known, also when
        // the stream holds its result behind an earlier call that is still running.
        let progress: Vec<Mutex<Progress>> = calls
            .iter()
            .map(|_| Mutex::new(Progress::NotStarted))
            .collect();
        let executed = {
            let inner = &*self.inner;
            let gate = Gate {
                succeeded: &self.succeeded,
                tainted: !self.tainted_by.is_empty(),
            };
            let gate = &gate;
            let token = &self.token;
            let events = self.events.clone();
            // `buffered` polls a call's future first when the call gets its turn under
            // `max_parallel_tools`: that is when it is reported started.
            let mut pending = Vec::with_capacity(calls.len());
            for (call, progress) in calls.iter().zip(&progress) {
                let mut events = events.clone();
                pending.push(async move {
                    set_progress(progress, Progress::Running);
                    if let Some(events) = &mut events {
                        let _ = events
                            .send(AgentEvent::ToolStarted { call: call.clone() })
                            .await;
                    }
                    let done = execute(inner, call, gate, token).await;
                    set_progress(progress, Progress::Finished(effect_outcome(&done.outcome)));
                    done
                });
            }
            let mut stream = futures::stream::iter(pending).buffered(inner.max_parallel_tools);
            let mut executed: Vec<Executed> = Vec::with_capacity(calls.len());
            let cancelled = loop {
                tokio::select! {
                    biased;
                    () = token.cancelled() => break true,
                    next = stream.next() => match next {
                        Some(done) => executed.push(done),
                        None => break false,
                    },
                }
            };
            (executed, cancelled)
        };
        let (executed, cancelled) = executed;
        if cancelled {
            // The turn is abandoned: its results never reach the model. The ledger keeps
            // what may have happened: calls that finished, and calls cut off mid-flight.
            for (call, progress) in calls.iter().zip(&progress) {
                let outcome = match *progress.lock().unwrap_or_else(PoisonError::into_inner) {
                    Progress::Finished(outcome) => outcome,
                    Progress::Running => EffectOutcome::Unknown,
                    Progress::NotStarted => continue,
                };
                self.record_effect(call, outcome);
            }
            return Err(AgentError::Cancelled {
                partial: Box::new(self.snapshot(StopReason::Completed, None)),
            });
        }

        let collapse = self.inner.failure_options.collapse_repeats;
        let propagate = self.inner.failure_mode == ToolFailureMode::Propagate;
        // The first failure (in call order) that ends the run, under `Propagate` or because it
        // is fatal, ends it after the whole turn is recorded: the other calls ran
        // concurrently, and their effects and errors are the caller's to know. Every call
        // keeps its result, so the partial transcript stays a valid history.
        let mut ending_failure: Option<ToolFailure> = None;
        for (call, Executed { outcome, elapsed }) in calls.into_iter().zip(executed) {
            self.record_effect(&call, effect_outcome(&outcome));
            self.tool_stats.entry(call.name.clone()).or_default().calls += 1;
            match outcome {
                Outcome::Success { content } => {
                    self.consecutive_failures = 0;
                    self.succeeded.insert(call.name.clone());
                    if self.is_untrusted(&call.name) {
                        self.tainted_by.push(call.id.clone());
                    }
                    self.emit(AgentEvent::ToolSucceeded {
                        tool: call.name.clone(),
                        call_id: call.id.clone(),
                        output: content.clone(),
                        elapsed,
                    })
                    .await;
                    self.request.messages.push(Message::Tool(ToolResult {
                        call_id: call.id,
                        name: call.name,
                        content,
                        is_error: false,
                    }));
                }
                Outcome::Failure {
                    kind,
                    error,
                    timed_out,
                    fatal,
                    message_shown,
                    text,
                    ..
                } => {
                    // The error's own message may carry what the tool read from elsewhere.
                    if message_shown && self.is_untrusted(&call.name) {
                        self.tainted_by.push(call.id.clone());
                    }
                    let stats = self.tool_stats.entry(call.name.clone()).or_default();
                    stats.failures += 1;
                    stats.timeouts += u32::from(timed_out);
                    self.consecutive_failures += 1;
                    let earlier = self
                        .failed_calls
                        .iter_mut()
                        .find(|f| f.tool == call.name && f.arguments == call.arguments);
                    let shown = match earlier {
                        Some(earlier) if collapse && earlier.text == text => {
                            render::failed_again(&call.name, &earlier.call_id)
                        }
                        Some(earlier) => {
                            earlier.text.clone_from(&text);
                            earlier.call_id.clone_from(&call.id);
                            text
                        }
                        None => {
                            self.failed_calls.push(FailedCall {
                                tool: call.name.clone(),
                                arguments: call.arguments.clone(),
                                text: text.clone(),
                                call_id: call.id.clone(),
                            });
                            text
                        }
                    };
                    let failure = ToolFailure {
                        tool: call.name.clone(),
                        call_id: call.id.clone(),
                        arguments: call.arguments,
                        kind,
                        error,
                        timed_out,
                        elapsed,
                        shown_to_model: shown.clone(),
                    };
                    self.failures.push(failure.clone());
                    self.emit(AgentEvent::ToolFailed(failure.clone())).await;
                    if (propagate || fatal) && ending_failure.is_none() {
                        ending_failure = Some(failure);
                    }
                    self.request.messages.push(Message::Tool(ToolResult {
                        call_id: call.id,
                        name: call.name,
                        content: shown,
                        is_error: true,
                    }));
                }
            }
        }
        match ending_failure {
            Some(failure) => Err(AgentError::ToolFailed {
                failure,
                partial: Box::new(self.snapshot(StopReason::Completed, None)),
            }),
            None => Ok(()),
        }
    }

    fn tool(&self, name: &str) -> Option<&dyn crate::tool::Tool> {
        let index = *self.inner.index.get(name)?;
        Some(&*self.inner.tools[index])
    }

    fn is_untrusted(&self, name: &str) -> bool {
        self.tool(name).is_some_and(|tool| tool.untrusted_output())
    }

    /// Adds a call to the ledger if its tool can change the world.
    fn record_effect(&mut self, call: &crate::model::ToolCall, outcome: EffectOutcome) {
        let Some(tool) = self.tool(&call.name) else {
            return;
        };
        if tool.definition().annotations.read_only {
            return;
        }
        self.effects.push(Effect {
            tool: call.name.clone(),
            call_id: call.id.clone(),
            arguments: call.arguments.clone(),
            outcome,
        });
    }

    /// The result so far, leaving the run as it is.
    fn snapshot(&self, stop_reason: StopReason, output: Option<String>) -> AgentResult {
        AgentResult {
            output: output.unwrap_or_default(),
            messages: self.request.messages.clone(),
            tool_failures: self.failures.clone(),
            usage: self.usage,
            turns: self.turn_count(),
            stop_reason,
            trajectory: Trajectory::new(
                self.request.system.clone(),
                self.inner.definitions.clone(),
                self.request.messages.clone(),
                self.turns.clone(),
            ),
            effects: self.effects.clone(),
            tainted_by: self.tainted_by.clone(),
            tool_stats: self.tool_stats.clone(),
        }
    }

    fn into_result(self, stop_reason: StopReason, output: Option<String>) -> AgentResult {
        let turns = self.turn_count();
        let trajectory = Trajectory::new(
            self.request.system,
            self.inner.definitions.clone(),
            self.request.messages.clone(),
            self.turns,
        );
        AgentResult {
            output: output.unwrap_or_default(),
            messages: self.request.messages,
            tool_failures: self.failures,
            usage: self.usage,
            turns,
            stop_reason,
            trajectory,
            effects: self.effects,
            tainted_by: self.tainted_by,
            tool_stats: self.tool_stats,
        }
    }
}

/// The ids of the calls in `history` whose untrusted output is in it: results of this agent's
/// untrusted tools, by the rule that applies to calls of the run (a successful result, or an
/// error result when error messages are shown).
fn history_taint(inner: &Inner, history: &[Message]) -> Vec<String> {
    let shows_messages = inner.failure_options.include_error_message;
    history
        .iter()
        .filter_map(|message| match message {
            Message::Tool(result) if !result.is_error || shows_messages => Some(result),
            _ => None,
        })
        .filter(|result| {
            inner
                .index
                .get(result.name.as_str())
                .is_some_and(|&i| inner.tools[i].untrusted_output())
        })
        .map(|result| result.call_id.clone())
        .collect()
}

/// Whether a finished call took effect.
fn effect_outcome(outcome: &Outcome) -> EffectOutcome {
    match outcome {
        Outcome::Success { .. } => EffectOutcome::Applied,
        Outcome::Failure { effect, .. } => *effect,
    }
}

/// How far one call of a turn got, for the ledger of a turn that is cancelled.
#[derive(Clone, Copy)]
enum Progress {
    NotStarted,
    Running,
    Finished(EffectOutcome),
}

fn set_progress(slot: &Mutex<Progress>, progress: Progress) {
    *slot.lock().unwrap_or_else(PoisonError::into_inner) = progress;
}

/// `name: calls/failures/timeouts` for each tool, for the `invoke_agent` span. A name is cut
/// to the length of a valid tool name: a call of an unknown tool counts under whatever name the
/// model sent.
fn stats_text(stats: &BTreeMap<String, ToolStats>) -> String {
    stats
        .iter()
        .map(|(tool, s)| {
            format!(
                "{}: {} calls, {} failed, {} timed out",
                render::bounded(tool, render::MAX_NAME_LEN),
                s.calls,
                s.failures,
                s.timeouts
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}
