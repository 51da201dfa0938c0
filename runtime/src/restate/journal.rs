//! [`Journal`]: a [`StepExecutor`] that makes each model call and each tool call a journaled
//! step of a Restate workflow (`ctx.run`).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use futures::future::BoxFuture;
use restate_sdk::prelude::*;

use crate::agent::{CallRecord, ModelStep, StepError, StepExecutor, ToolStep};
use crate::model::{ModelResponse, ToolCall};
use crate::render;

/// A [`StepExecutor`] over a Restate workflow's journal: each model call and each tool call of
/// a run is a journaled step (`ctx.run`), so an invocation that Restate retries after a crash
/// replays the steps that finished from the journal — without calling the model or any tool
/// again — and goes on from the first one that did not.
///
/// What is journaled is what the model saw: a model call's response, and for a tool call its
/// [`CallRecord`] (the text the model is shown — for a failure, its kind and never its withheld
/// message). A failed call replayed from the journal carries
/// [`ErrorNotKept`](crate::failures::ErrorNotKept); its full error went to the attempt that ran it (its
/// result and `execute_tool` span).
///
/// A tool call that may change the world and was cut off mid-flight — started by an earlier
/// attempt, its end never journaled — is not run again: its tool's reconcile hook, if it has
/// one, is asked whether it took effect ([`ToolStep::reconcile`], in the journaled step), and
/// unless it knows, the run stops with the call pending
/// ([`PendingReason::Unknown`](crate::agent::PendingReason::Unknown)) for a person to reconcile, as
/// [`Agent::resume`](crate::Agent::resume) does in process. Read-only calls run again.
pub struct Journal<'a, 'ctx> {
    pub(super) ctx: &'a WorkflowContext<'ctx>,
    /// This attempt's id: random, never journaled except to mark the calls it starts.
    attempt: String,
    /// The attempt that started the calls being handed over now, as journaled.
    started_by: Mutex<Option<String>>,
    model_retry: Option<RunRetryPolicy>,
    /// The tool steps in flight, polled together.
    in_flight: Mutex<InFlight<'a>>,
}

impl std::fmt::Debug for Journal<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("attempt", &self.attempt)
            .field("model_retry", &self.model_retry)
            .finish_non_exhaustive()
    }
}

impl<'a, 'ctx> Journal<'a, 'ctx> {
    /// The journal of the workflow invocation `ctx` belongs to.
    pub fn new(ctx: &'a WorkflowContext<'ctx>) -> Self {
        Self {
            ctx,
            attempt: attempt_id(),
            started_by: Mutex::new(None),
            model_retry: None,
            in_flight: Mutex::new(InFlight::default()),
        }
    }

    /// How a failed model call is retried before the run ends with
    /// [`AgentError::Model`](crate::AgentError::Model). Without one, Restate's invoker retry
    /// policy applies (by default it retries with a growing delay, then pauses the
    /// invocation for an operator to resume).
    #[must_use]
    pub fn model_retry(mut self, policy: RunRetryPolicy) -> Self {
        self.model_retry = Some(policy);
        self
    }
}

impl StepExecutor for Journal<'_, '_> {
    fn model_call(&self, step: ModelStep) -> BoxFuture<'_, Result<ModelResponse, StepError>> {
        let name = format!("model turn {}", step.turn());
        let run = self
            .ctx
            .run(|| async move {
                // A failed call is retried (its message goes to Restate as the attempt's
                // failure); the model's error never reaches the journal's entries.
                step.run()
                    .await
                    .map(Json)
                    .map_err(|error| HandlerError::from(error.to_string()))
            })
            .name(name);
        let run = match self.model_retry.clone() {
            Some(policy) => run.retry_policy(policy),
            None => run,
        };
        Box::pin(async move {
            match run.await {
                Ok(Json(response)) => Ok(response),
                Err(error) => Err(stopped(error)),
            }
        })
    }

    fn tool_call(&self, step: ToolStep) -> BoxFuture<'_, Result<CallRecord, StepError>> {
        let call = step.call();
        let name = format!(
            "tool {} {}",
            render::name(&call.name),
            render::bounded(&call.id, render::MAX_NAME_LEN)
        );
        let started_here = self
            .started_by
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_deref()
            == Some(self.attempt.as_str());
        let run = self
            .ctx
            .run(move || async move {
                // This closure runs only when the journal has no result for the step. If an
                // earlier attempt started the call, it was cut off: whether it took effect is
                // for its tool's reconcile hook or a person to find out, not for a second run
                // to find out the hard way.
                let record = if started_here || !step.changes_world() {
                    step.run().await
                } else {
                    step.reconcile().await
                };
                Ok(Json(record))
            })
            .name(name);
        let together = InFlight::add(&self.in_flight, Box::pin(run));
        Box::pin(async move {
            match together.await {
                Ok(Json(record)) => Ok(record),
                Err(error) => Err(stopped(error)),
            }
        })
    }

    fn calls_starting<'b>(&'b self, calls: &'b [ToolCall]) -> BoxFuture<'b, Result<(), StepError>> {
        let attempt = self.attempt.clone();
        let name = format!("start {} tool call(s)", calls.len());
        let run = self.ctx.run(move || async move { Ok(attempt) }).name(name);
        Box::pin(async move {
            let started_by: String = run.await.map_err(stopped)?;
            *self
                .started_by
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(started_by);
            Ok(())
        })
    }
}

type StepFuture<'a> = BoxFuture<'a, Result<Json<CallRecord>, TerminalError>>;

/// The tool steps of a turn in flight. The SDK hands each completion from the server to
/// whichever of its futures reads the input, and wakes only that one: its own combinators
/// (`join!`, `select!`) poll every future they hold whenever one is woken. The calls of a turn
/// run concurrently under the agent loop's own combinator, which polls only the woken one; so
/// every tool step in flight is polled whenever any of them is — in call order, which is the
/// order their steps enter the journal — and a step finished by another's poll wakes its own.
#[derive(Default)]
struct InFlight<'a> {
    next: u64,
    running: Vec<Running<'a>>,
    done: Vec<(u64, Result<Json<CallRecord>, TerminalError>)>,
}

/// A step in flight, and the waker of the future that waits for it.
struct Running<'a> {
    id: u64,
    step: StepFuture<'a>,
    waker: Option<Waker>,
}

impl<'a> InFlight<'a> {
    /// Adds `step`; the future that polls the steps in flight until `step` is done.
    fn add<'j>(set: &'j Mutex<Self>, step: StepFuture<'a>) -> Together<'j, 'a> {
        let mut this = set.lock().unwrap_or_else(PoisonError::into_inner);
        let id = this.next;
        this.next += 1;
        this.running.push(Running {
            id,
            step,
            waker: None,
        });
        Together { set, id }
    }
}

/// One tool step of a [`Journal`], polled with the others in flight.
struct Together<'j, 'a> {
    set: &'j Mutex<InFlight<'a>>,
    id: u64,
}

impl Future for Together<'_, '_> {
    type Output = Result<Json<CallRecord>, TerminalError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut set = self.set.lock().unwrap_or_else(PoisonError::into_inner);
        let mut i = 0;
        while i < set.running.len() {
            let running = &mut set.running[i];
            if running.id == self.id {
                running.waker = Some(cx.waker().clone());
            }
            if let Poll::Ready(output) = running.step.as_mut().poll(cx) {
                // `remove`, not `swap_remove`: a step not yet polled keeps its place.
                let done = set.running.remove(i);
                if let Some(waker) = done.waker.filter(|_| done.id != self.id) {
                    waker.wake();
                }
                set.done.push((done.id, output));
            } else {
                i += 1;
            }
        }
        match set.done.iter().position(|(id, _)| *id == self.id) {
            Some(i) => Poll::Ready(set.done.remove(i).1),
            None => Poll::Pending,
        }
    }
}

impl Drop for Together<'_, '_> {
    fn drop(&mut self) {
        let mut set = self.set.lock().unwrap_or_else(PoisonError::into_inner);
        set.running.retain(|running| running.id != self.id);
        set.done.retain(|(id, _)| *id != self.id);
    }
}

/// A step Restate gave up on: retries exhausted (a model call), or the invocation cancelled.
fn stopped(error: TerminalError) -> StepError {
    if error.code() == 409 {
        StepError::Cancelled
    } else {
        StepError::Model(crate::ModelError::new(error.message()))
    }
}

/// An id for this attempt of the invocation, different in every attempt: random, from the
/// process's hasher keys, its id and the clock. Never from the context's random generator,
/// which replays the same numbers in every attempt.
fn attempt_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(nanos);
    let a = hasher.finish();
    let b = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("{a:016x}{b:016x}")
}
