//! The loop: one model turn after another until the model answers without calling tools, or a
//! limit gives it one last turn without tools.

use std::sync::Arc;
use std::time::Duration;

use futures::channel::mpsc::Sender;
use futures::{SinkExt, StreamExt};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::call_ids;
use super::call_limit;
use super::fence::Fence;
use super::gates::{Gates, Taint};
use super::record::Record;
use super::repeats::Repeats;
use super::result::Checkpoint;
use super::state::{OpenCall, RunState};
use super::steps::StepExecutor;
use super::{AgentError, AgentEvent, AgentResult, Inner, RunOptions, StopReason, spans};
use crate::model::{
    Message, Model, ModelError, ModelEvent, ModelRequest, ModelResponse, RetryPolicy,
    TrajectoryTurn, retryable_status,
};
use crate::render;

/// The state of one run.
pub(super) struct Run<'e> {
    pub(super) inner: Arc<Inner>,
    /// Where events go, when the caller streams them.
    pub(super) events: Option<Sender<AgentEvent>>,
    pub(super) token: CancellationToken,
    /// Whether the caller can cancel the run (it gave a token).
    pub(super) cancellable: bool,
    /// What the caller gets.
    pub(super) record: Record,
    pub(super) gates: Gates,
    pub(super) repeats: Repeats,
    /// Failed calls since the last success.
    pub(super) consecutive_failures: u32,
    /// The next model call is the last, offered no tools, for this reason.
    pub(super) final_turn: Option<StopReason>,
    /// Where the steps run; `None`: here.
    pub(super) steps: Option<&'e dyn StepExecutor>,
    /// Where the state goes at every step, when the caller wants it.
    pub(super) checkpoint: Option<Checkpoint>,
}

pub(super) async fn run(
    inner: Arc<Inner>,
    input: String,
    options: RunOptions,
    events: Option<Sender<AgentEvent>>,
    steps: Option<&dyn StepExecutor>,
) -> Result<AgentResult, AgentError> {
    let span = spans::invoke_agent();
    let mut messages = options.history;
    // Untrusted output in the history is in the transcript as much as output of this run.
    let taint = Taint::of_history(
        &inner.tools,
        &messages,
        inner.failure_options.include_error_message,
    );
    messages.push(Message::User { text: input });
    let run = Run {
        record: Record {
            request: ModelRequest {
                system: inner.system.clone(),
                messages,
                tools: inner.definitions.clone(),
            },
            turns: Vec::new(),
            usage: Default::default(),
            failures: Vec::new(),
            whole_outputs: Vec::new(),
            ledger: Default::default(),
            taint,
            stats: Default::default(),
            // A durable executor's boundary, or a replayed recording's.
            fence: Fence::new(
                options
                    .fence_boundary
                    .or_else(|| inner.model.fence_boundary()),
            ),
        },
        inner,
        events,
        cancellable: options.cancellation.is_some(),
        token: options.cancellation.unwrap_or_default(),
        gates: Gates::default(),
        repeats: Repeats::default(),
        consecutive_failures: 0,
        final_turn: None,
        steps,
        checkpoint: options.checkpoint,
    };
    let result = run.drive().instrument(span.clone()).await;
    spans::record_run(&span, &result);
    result
}

impl Run<'_> {
    /// Sends an event to the stream, if there is one. The channel holds no backlog: the run
    /// waits until the consumer takes the event, so events arrive as things happen and a slow
    /// consumer slows the run instead of growing a queue.
    pub(super) async fn emit(&mut self, event: AgentEvent) {
        if let Some(events) = &mut self.events {
            let _ = events.send(event).await;
        }
    }

    /// Whether someone streams events.
    pub(super) fn streaming(&self) -> bool {
        self.events.is_some()
    }

    /// A sender for the calls of a turn, which report their start as they start.
    pub(super) fn event_sender(&self) -> Option<Sender<AgentEvent>> {
        self.events.clone()
    }

    /// The result so far, leaving the run as it is; `state`: the run can go on from it.
    pub(super) fn snapshot(&self, state: Option<RunState>) -> AgentResult {
        self.record
            .clone()
            .into_result(&self.inner.definitions, StopReason::Completed, None, state)
    }

    pub(super) fn into_result(
        self,
        stop_reason: StopReason,
        output: Option<String>,
        state: Option<RunState>,
    ) -> AgentResult {
        self.record
            .into_result(&self.inner.definitions, stop_reason, output, state)
    }

    pub(super) async fn drive(mut self) -> Result<AgentResult, AgentError> {
        let max_turns = self.inner.max_turns;
        loop {
            if self.token.is_cancelled() {
                let state = self.state(Vec::new());
                return Err(AgentError::Cancelled {
                    partial: Box::new(self.into_result(StopReason::Completed, None, Some(state))),
                });
            }
            let turn = self.record.turn_count().saturating_add(1);
            if self.final_turn.is_none() {
                self.final_turn = self.last_turn(turn, max_turns);
            }

            let response = self.complete(turn).await?;
            self.record.request.messages.push(Message::Assistant {
                text: response.text.clone(),
                tool_calls: response.tool_calls.clone(),
            });
            // The response goes to the event stream whole, if there is one; otherwise its
            // text and calls are taken, not copied again.
            let (text, calls) = if self.streaming() {
                let parts = (response.text.clone(), response.tool_calls.clone());
                self.emit(AgentEvent::ModelResponded { turn, response })
                    .await;
                parts
            } else {
                (response.text, response.tool_calls)
            };

            if let Some(reason) = self.final_turn {
                // Calls made in a turn offered no tools are answered, not run: every call in
                // the transcript has its result.
                self.refuse_calls(calls).await;
                return Ok(self.into_result(reason, text, None));
            }
            if calls.is_empty() {
                return Ok(self.into_result(StopReason::Completed, text, None));
            }
            if let Some(open) = self.awaiting_approval(&calls) {
                return Ok(self.pause(open, text));
            }
            let plans = calls.iter().map(|_| None).collect();
            if let Some(open) = self.run_tools(calls, plans).await? {
                return Ok(self.pause(open, text));
            }
            self.save(Vec::new());
        }
    }

    /// Stops the run to wait for the caller's decisions on the calls of `open`. The calls of
    /// the turn that ran are on the result's ledger; the state keeps them with their turn.
    pub(super) fn pause(mut self, open: Vec<OpenCall>, text: Option<String>) -> AgentResult {
        let state = self.state(open);
        self.save_state(&state);
        self.ledger_open(state.open_calls());
        self.into_result(StopReason::AwaitingApproval, text, Some(state))
    }

    /// Whether turn `turn` is the last, and why: the failure guard tripped, or the turn limit
    /// is reached. The last turn offers no tools, with a note that says why (a run whose only
    /// turn is its last needs none).
    fn last_turn(&mut self, turn: u32, max_turns: u32) -> Option<StopReason> {
        let request = &mut self.record.request;
        let (reason, note) =
            if turn > 1 && self.consecutive_failures >= self.inner.max_consecutive_failures {
                (
                    StopReason::FailureLimit,
                    Some(render::tools_disabled(self.consecutive_failures)),
                )
            } else if turn >= max_turns {
                (StopReason::TurnLimit, (turn > 1).then(render::turn_limit))
            } else {
                return None;
            };
        if let Some(note) = note {
            request.messages.push(Message::user(note));
        }
        request.tools.clear();
        Some(reason)
    }

    /// One model call, cancellable, on a `chat` span; through the step executor, if any.
    /// When someone streams the run's events (and no executor journals the call), the model
    /// is asked to stream too, and its text reaches them as it is produced.
    async fn complete(&mut self, turn: u32) -> Result<ModelResponse, AgentError> {
        let span = spans::chat(turn);
        let model = Arc::clone(&self.inner.model);
        // The text streamed so far: kept for the caller if the turn does not complete.
        let mut streamed = String::new();
        let result = if let Some(steps) = self.steps {
            self.model_step(steps, turn, &span).await
        } else {
            let request = &self.record.request;
            let events = self.event_sender();
            let streamed = &mut streamed;
            let max_calls = self.inner.max_calls_per_turn;
            let retry = self.inner.turn_retry;
            let call = async move {
                match events {
                    None => model.complete(request).await,
                    Some(events) => {
                        let turn = StreamedTurn {
                            model: &*model,
                            request,
                            turn,
                            max_calls,
                        };
                        turn.read_retrying(events, streamed, retry).await
                    }
                }
            };
            // A provider may do work (and open spans) before it returns its future: that
            // belongs to the `chat` span as much as the future does.
            let call = call.instrument(span.clone());
            tokio::select! {
                biased;
                () = self.token.cancelled() => None,
                result = call => Some(result),
            }
        };
        // As it comes from the model (`complete`, its stream or the step executor): a
        // response over the limit is refused whole, before anything of it is recorded or run.
        let max_calls = self.inner.max_calls_per_turn;
        let result = result.map(|r| r.and_then(|r| call_limit::within(r, max_calls)));
        // What the run had, with the text the model had streamed of this turn as its output.
        let partial = |run: &Self| {
            let mut partial = run.snapshot(Some(run.state(Vec::new())));
            partial.output = streamed;
            Box::new(partial)
        };
        match result {
            None => Err(AgentError::Cancelled {
                partial: partial(self),
            }),
            Some(Err(error)) => {
                span.record("otel.status_code", "ERROR");
                span.record("error.type", "model");
                Err(AgentError::Model {
                    error,
                    partial: partial(self),
                })
            }
            Some(Ok(mut response)) => {
                // Before anything clones or compares them: arguments nested too deep to
                // handle without exhausting the stack, which the call is refused for anyway.
                for call in &mut response.tool_calls {
                    if let Some(arguments) = call.arguments.value_mut() {
                        crate::tool::cut_too_deep(arguments);
                    }
                }
                // Before the gates, the approvals and the transcript see them.
                call_ids::make_distinct(&mut response.tool_calls, &span);
                span.record("gen_ai.usage.input_tokens", response.usage.input_tokens);
                span.record("gen_ai.usage.output_tokens", response.usage.output_tokens);
                self.record.usage += response.usage;
                self.record.turns.push(TrajectoryTurn {
                    messages: self.record.request.messages.len(),
                    tools_offered: !self.record.request.tools.is_empty(),
                    response: response.clone(),
                });
                Ok(response)
            }
        }
    }
}

/// One turn to read from the model's stream.
struct StreamedTurn<'a> {
    model: &'a dyn Model,
    request: &'a ModelRequest,
    turn: u32,
    max_calls: usize,
}

impl StreamedTurn<'_> {
    /// The turn, asked again with `retry` while its stream breaks off after passing events on
    /// (see [`AgentBuilder::retry_broken_turns`](crate::AgentBuilder::retry_broken_turns)):
    /// each restart is announced with [`AgentEvent::TurnRestarted`] before the wait. `streamed`
    /// holds the text of the last attempt.
    async fn read_retrying(
        &self,
        mut events: Sender<AgentEvent>,
        streamed: &mut String,
        retry: Option<RetryPolicy>,
    ) -> Result<ModelResponse, ModelError> {
        // the requests made for the turn so far, the model's own retries included
        let mut spent: u32 = 0;
        let mut attempt: u32 = 1;
        loop {
            streamed.clear();
            let mut passed_on = false;
            let error = match self.read(&mut events, streamed, &mut passed_on).await {
                Ok(response) => return Ok(response),
                Err(error) => error,
            };
            spent = spent.saturating_add(error.attempts());
            let delay = retry.and_then(|policy| restart_delay(&policy, &error, passed_on, spent));
            let Some(delay) = delay else {
                return Err(error);
            };
            attempt = attempt.saturating_add(1);
            tracing::warn!(
                turn = self.turn,
                attempt,
                delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                error = %error,
                "the model's stream broke off; asking the turn again"
            );
            let _ = events
                .send(AgentEvent::TurnRestarted {
                    turn: self.turn,
                    attempt,
                    reason: error,
                    delay,
                })
                .await;
            tokio::time::sleep(delay).await;
        }
    }

    /// One attempt: each text delta and each tool call the model begins is sent as it
    /// arrives, the text kept in `streamed`; the turn is the stream's `Completed`.
    /// `passed_on` is set once the stream yielded an event. The call past `max_calls` ends
    /// the turn with the refusal, and the stream is dropped unread (a provider closes the
    /// connection).
    async fn read(
        &self,
        events: &mut Sender<AgentEvent>,
        streamed: &mut String,
        passed_on: &mut bool,
    ) -> Result<ModelResponse, ModelError> {
        let turn = self.turn;
        let mut stream = self.model.stream(self.request);
        while let Some(event) = stream.next().await {
            let event = event?;
            *passed_on = true;
            let event = match event {
                ModelEvent::TextDelta(text) => {
                    streamed.push_str(&text);
                    AgentEvent::TextDelta { turn, text }
                }
                ModelEvent::ToolCallStarted { index, .. } if index >= self.max_calls => {
                    return Err(call_limit::too_many(self.max_calls, None));
                }
                ModelEvent::ToolCallStarted { index, id, name } => AgentEvent::ToolCallRequested {
                    turn,
                    index,
                    id,
                    name,
                },
                ModelEvent::Completed(response) => return Ok(response),
                _ => continue,
            };
            let _ = events.send(event).await;
        }
        Err(ModelError::new(
            "the model's stream ended without its complete response",
        ))
    }
}

/// The wait before a broken turn is asked again, or `None` when it is not: the stream failed
/// before it passed anything on (the model retried that itself), the error is not worth
/// retrying (a `4xx` other than `408`, `409` and `429` never is), the `spent` attempts used
/// up the budget, or the server asks for a longer wait than the policy allows.
fn restart_delay(
    policy: &RetryPolicy,
    error: &ModelError,
    passed_on: bool,
    spent: u32,
) -> Option<Duration> {
    let client_error = error
        .status()
        .is_some_and(|s| (400..500).contains(&s) && !retryable_status(s));
    if !passed_on || !error.is_retryable() || client_error || spent > policy.max_retries {
        return None;
    }
    policy.delay(spent.saturating_sub(1), error.retry_after())
}
