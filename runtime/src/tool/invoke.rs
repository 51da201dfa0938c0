//! Running one call of a tool: the arguments, the time limit (the shorter of the caller's and
//! the tool's own), the cancellation token the tool sees, panics — in the tool, in its
//! future's `Drop`, in its error values — and the one [`ToolFailure`] every way of failing
//! becomes. An [`Invocation`] is the one way a call runs, for the agent loop and the MCP server
//! alike, so both apply the same rules. A call starts in place, on its caller's first poll
//! ([`Invocation::first_poll`]: the agent awaits [`invoke`]'s future, whose first poll it is;
//! the MCP server takes that poll itself); one that has to wait goes on boxed,
//! under its time limit; a sync tool a limit or a cancellation can stop runs on the blocking
//! pool (`blocking.rs`).
//!
//! Longer than most files: how a call ends and the failure each ending becomes are read
//! together, and kept together.

use std::any::Any;
use std::borrow::Cow;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, CatchUnwind};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::blocking::{Blocked, run_blocking};
use super::contain::{Contained, drop_contained, payload_message};
use super::errors::{ToolPanicked, ToolTimedOut};
use super::output::Encoding;
use super::progress::Observer;
use super::{Tool, ToolContext, ToolFuture};
use crate::error::{EffectOutcome, ToolError, ToolFailure, kinds};
use crate::in_place::{FirstPoll, InPlace};
use crate::render;

/// The arguments of a call: what the tool is called with, and whether a failure's record keeps
/// them (the tool then gets a copy; the record holds `null` otherwise).
pub(crate) struct CallArguments<'a> {
    sent: Sent<'a>,
    keep: bool,
}

/// Arguments as the model sent them, borrowed from a caller that keeps them or handed over.
enum Sent<'a> {
    Value(Cow<'a, Value>),
    /// JSON text, decoded by the tool straight from the text.
    Text(Cow<'a, str>),
}

impl<'a> CallArguments<'a> {
    /// Arguments as a value; `keep` says whether a failure's record keeps them.
    pub(crate) fn value(value: Cow<'a, Value>, keep: bool) -> Self {
        let sent = Sent::Value(value);
        Self { sent, keep }
    }

    /// Arguments as JSON text, which the tool decodes straight from the text (text that is not
    /// JSON is an argument error); `keep` says whether a failure's record keeps them.
    pub(crate) fn text(text: impl Into<Cow<'a, str>>, keep: bool) -> Self {
        let sent = Sent::Text(text.into());
        Self { sent, keep }
    }
}

/// One call to run, as its caller describes it: what the running call borrows for as long as
/// it runs (`'a`: the tool, the arguments) and who the call is and who may stop or watch it
/// (`'c`: the caller's, only until the first poll). The tool's [`ToolContext`] is made from
/// the latter only for a tool that [reads one](super::Tool::reads_context); any other is
/// called with an empty context.
pub(crate) struct Invocation<'a, 'c> {
    /// The tool.
    pub(crate) tool: &'a Arc<dyn Tool>,
    /// The name as the tool set holds it.
    pub(crate) tool_name: &'c Arc<str>,
    /// The call's id.
    pub(crate) call_id: &'c str,
    /// When the call started, on the runtime's clock: a call stopped at its limit reports the
    /// limit as its elapsed time, also when the clock is paused in tests.
    pub(crate) start: Instant,
    /// The arguments.
    pub(crate) arguments: CallArguments<'a>,
    /// The caller's time limit for any call; the tool's own applies when it is shorter.
    pub(crate) limit: Option<Duration>,
    /// The caller's token (the run's or the request's), whose child the tool's is.
    pub(crate) parent: &'c CancellationToken,
    /// Whether someone can cancel `parent`: a sync tool then runs on the blocking pool, so
    /// that the cancellation does not wait for it.
    pub(crate) cancellable: bool,
    /// Who watches the call's reports, if anyone.
    pub(crate) observer: Option<Arc<Observer>>,
    /// Show the model a failure's message after its kind.
    pub(crate) include_error_message: bool,
    /// The MCP client that made the call, when one did: the tool's context can ask it.
    #[cfg(feature = "mcp")]
    pub(crate) client: Option<&'c rmcp::service::Peer<rmcp::service::RoleServer>>,
}

/// Runs `invocation`: the future the agent loop awaits. Never panics; never returns early
/// because the context's parent token was cancelled (the caller selects on it, and may drop
/// this future at any point: the tool's future is then dropped, a panic in its `Drop`
/// contained).
///
/// The output is made as `E` says: `invoke::<AsValue>` for a `Value`, `invoke::<AsText>`
/// for text.
///
/// The returned future is small: its first poll is [`Invocation::first_poll`], which calls
/// the tool and polls the tool's future once, in place, so a call that is done then (a sync
/// tool, or an async one that never waits) finishes with no state machine around it. A call
/// that has to wait goes on in a boxed future that holds the time limit and the contained
/// tool future.
pub(crate) fn invoke<'a, 'c, E: Encoding>(invocation: Invocation<'a, 'c>) -> Invoke<'a, 'c, E> {
    Invoke(InPlace::Start(invocation))
}

/// The future [`invoke`] returns.
pub(crate) struct Invoke<'a, 'c, E: Encoding>(
    InPlace<'a, Invocation<'a, 'c>, CallOutcome<E::Output>>,
);

impl<'a> Invocation<'a, '_> {
    /// Starts the call and polls it for the first time with `task`, its output made as `E`
    /// says: the first poll of [`invoke`]'s future, for a caller that polls the call in place
    /// itself (the MCP server). It hands over the outcome of a call done then, or the rest of
    /// the call, boxed, which no longer borrows the caller's scope.
    #[inline(always)]
    pub(crate) fn first_poll<E: Encoding>(
        self,
        task: &mut Context<'_>,
    ) -> FirstPoll<'a, CallOutcome<E::Output>> {
        start::<E>(self, task)
    }
}

/// A call's outcome, its failure boxed as it is passed on: most calls succeed, and a
/// `ToolFailure` is ten times the size of most outputs.
pub(crate) type CallOutcome<T> = Result<T, Box<ToolFailure>>;

/// What a call's failure needs of the call, kept until it ends. The tool's name and the
/// call's id are the caller's while the call runs in place, copies once the call goes on
/// without the caller ([`owned`](Self::owned)).
struct Call<'a, 'b> {
    include_error_message: bool,
    call_id: Cow<'b, str>,
    /// The name as the tool set holds it, shared rather than copied.
    tool_name: Cow<'b, Arc<str>>,
    /// The tool's context, for a tool that reads one: kept to tell the tool when the call is
    /// abandoned.
    cx: Option<ToolContext>,
    record: Kept<'a>,
    start: Instant,
}

impl<E: Encoding> Future for Invoke<'_, '_, E> {
    type Output = Result<E::Output, ToolFailure>;

    fn poll(self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<Self::Output> {
        let outcome = self
            .get_mut()
            .0
            .poll_with(task, |invocation, task| invocation.first_poll::<E>(task));
        match outcome {
            Poll::Ready(outcome) => Poll::Ready(outcome.map_err(|failure| *failure)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// A call [`start`] started: done when first polled, or still running.
type Started<'a, T> = FirstPoll<'a, CallOutcome<T>>;

/// Starts the call: the time limit (the shorter of the caller's and the tool's), the tool
/// called with its context (made from the invocation for a tool that reads one, empty for
/// any other) and its future polled once with `task`, under `catch_unwind`: what [`invoke`]'s
/// future does when first polled. A call done then is
/// answered without the record a failure or a running call needs; only a call that goes on
/// has its future wrapped to contain what it does later.
#[inline(always)]
fn start<'a, E: Encoding>(
    invocation: Invocation<'a, '_>,
    task: &mut Context<'_>,
) -> Started<'a, E::Output> {
    let Invocation {
        tool,
        tool_name,
        call_id,
        start,
        arguments,
        limit,
        parent,
        cancellable,
        observer,
        include_error_message,
        #[cfg(feature = "mcp")]
        client,
    } = invocation;
    let limit = match (limit, tool.timeout()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let blocking = tool.is_blocking()
        && (limit.is_some() || cancellable)
        && tokio::runtime::Handle::try_current().is_ok();
    let (given, record) = arguments.split();
    let cx = tool.reads_context().then(|| {
        let cx = ToolContext::child_of(call_id, tool_name, parent.clone(), observer);
        #[cfg(feature = "mcp")]
        let cx = cx.with_client(client);
        cx
    });
    // What a failure needs of the call, made only when the call fails or goes on.
    let call = move |cx, record| Call {
        include_error_message,
        call_id: Cow::Borrowed(call_id),
        tool_name: Cow::Borrowed(tool_name),
        cx,
        record,
        start,
    };
    if blocking {
        return FirstPoll::Running(run_blocking_call::<E>(
            Arc::clone(tool),
            given,
            call(cx, record),
            limit,
        ));
    }
    let tool_cx = tool_context(&cx);
    let mut future = match catch_unwind(AssertUnwindSafe(|| given.call::<E>(&**tool, tool_cx))) {
        Ok(future) => future,
        Err(payload) => {
            return FirstPoll::Done(call(cx, record).conclude(Err(Ending::Panicked(payload))));
        }
    };
    // Polled here, before any timer: a call that is done at once is done within any limit,
    // as `tokio::time::timeout` would also find, polling the future before its timer. A
    // future that panics as it is polled or dropped is a panic of the tool's, contained.
    let ending = match catch_unwind(AssertUnwindSafe(|| Pin::new(&mut future).poll(task))) {
        Ok(Poll::Ready(Ok(output))) => {
            drop_contained(future);
            return FirstPoll::Done(Ok(output));
        }
        Ok(Poll::Ready(Err(error))) => Ending::Error(error),
        Err(payload) => Ending::Panicked(payload),
        Ok(Poll::Pending) => {
            let call = call(cx, record).owned();
            let future = Contained::new(AssertUnwindSafe(future).catch_unwind());
            return FirstPoll::Running(Box::pin(async move {
                let ran = wait(future, limit.map(|limit| (start + limit, limit))).await;
                call.conclude(ran)
            }));
        }
    };
    drop_contained(future);
    FirstPoll::Done(call(cx, record).conclude(Err(ending)))
}

/// Runs a sync tool's call on the blocking pool, under `limit`.
fn run_blocking_call<'a, E: Encoding>(
    tool: Arc<dyn Tool>,
    given: Given<'_>,
    call: Call<'a, '_>,
    limit: Option<Duration>,
) -> BoxFuture<'a, CallOutcome<E::Output>> {
    let call = call.owned();
    let (given, cx) = (given.into_owned(), call.tool_cx());
    // A sync tool's future is ready when `call` returns; `block_on` takes its result (and
    // would run any other future to its end on this thread).
    let work = move || futures::executor::block_on(given.call::<E>(&*tool, cx));
    Box::pin(async move {
        let ran = match run_blocking(work, limit).await {
            Blocked::Returned(result) => returned(result),
            Blocked::Panicked(payload) => Err(Ending::Panicked(payload)),
            Blocked::TimedOut(limit) => Err(Ending::TimedOut(limit)),
        };
        call.conclude(ran)
    })
}

impl<'a> Call<'a, '_> {
    /// The same, with its own copies of the call's id and name: for a call that goes on after
    /// its caller's first poll.
    fn owned(self) -> Call<'a, 'static> {
        Call {
            include_error_message: self.include_error_message,
            call_id: Cow::Owned(self.call_id.into_owned()),
            tool_name: Cow::Owned(self.tool_name.into_owned()),
            cx: self.cx,
            record: self.record,
            start: self.start,
        }
    }

    /// The context the tool is called with ([`tool_context`]).
    #[inline]
    fn tool_cx(&self) -> ToolContext {
        tool_context(&self.cx)
    }

    /// Tells a tool that reads its context that the call was abandoned.
    fn abandon(&self) {
        if let Some(cx) = &self.cx {
            cx.abandon();
        }
    }

    /// The outcome of a call that ended as `ran`: the output, or the one [`ToolFailure`].
    #[inline]
    fn conclude<T>(self, ran: Ran<T>) -> CallOutcome<T> {
        ran.map_err(|ending| self.failed(ending))
    }

    /// The one [`ToolFailure`] of a call that ended as `ending`.
    #[cold]
    fn failed(self, ending: Ending) -> Box<ToolFailure> {
        if matches!(
            ending,
            Ending::TimedOut(_) | Ending::PanickedWhenStopped(..)
        ) {
            self.abandon();
        }
        let Self {
            include_error_message,
            call_id,
            tool_name,
            record,
            start,
            ..
        } = self;
        let (name, call_id) = (&**tool_name, &*call_id);
        let failure = |failure: ToolFailure| {
            let mut failure = Box::new(failure);
            failure.arguments = record.into_value();
            failure.elapsed = start.elapsed();
            failure
        };
        match ending {
            Ending::Error(error) => failure(ToolFailure::from_tool_error(
                name,
                call_id,
                error,
                include_error_message,
            )),
            Ending::Panicked(payload) => failure(panicked(name, call_id, payload_message(payload))),
            Ending::PanickedWhenStopped(limit, message) => {
                let message = format!(
                    "{message} (as it was stopped after its time limit of {})",
                    render::format_duration(limit)
                );
                let mut panicked = panicked(name, call_id, message);
                panicked.timed_out = true;
                failure(panicked)
            }
            Ending::TimedOut(limit) => {
                let mut timed_out = ToolFailure::new(
                    name,
                    call_id,
                    kinds::TIMEOUT,
                    Arc::new(ToolTimedOut {
                        tool: name.to_string(),
                        limit,
                    }),
                    render::timeout(name, limit),
                );
                timed_out.timed_out = true;
                timed_out.effect = EffectOutcome::Unknown;
                failure(timed_out)
            }
        }
    }
}

/// The context a tool is called with: a clone of the call's `cx`, or an empty one (made without
/// allocating) for a tool that does not read it.
#[inline]
fn tool_context(cx: &Option<ToolContext>) -> ToolContext {
    cx.clone().unwrap_or_default()
}

/// How running the tool ended: its output, or how it did not give one.
type Ran<T> = Result<T, Ending>;

/// How a call ended without an output.
enum Ending {
    /// The tool returned an error.
    Error(ToolError),
    Panicked(Box<dyn Any + Send>),
    TimedOut(Duration),
    /// Timed out, and panicked as it was stopped (in its future's `Drop`).
    PanickedWhenStopped(Duration, String),
}

/// What the tool returned, as a [`Ran`].
#[inline]
fn returned<T>(result: Result<T, ToolError>) -> Ran<T> {
    result.map_err(Ending::Error)
}

/// What the tool is called with.
enum Given<'a> {
    Value(Value),
    Text(Cow<'a, str>),
}

impl Given<'_> {
    fn into_owned(self) -> Given<'static> {
        match self {
            Self::Value(value) => Given::Value(value),
            Self::Text(text) => Given::Text(Cow::Owned(text.into_owned())),
        }
    }

    /// Calls `tool` with these arguments, its output made as `F` says.
    #[inline(always)]
    fn call<E: Encoding>(self, tool: &dyn Tool, cx: ToolContext) -> ToolFuture<'_, E::Output> {
        match self {
            Self::Value(value) => E::call(tool, value, cx),
            Self::Text(text) => E::call_text(tool, &text, cx),
        }
    }
}

/// What a failure's record keeps of the arguments.
enum Kept<'a> {
    Value(Cow<'a, Value>),
    Text(Cow<'a, str>),
    Nothing,
}

impl<'a> CallArguments<'a> {
    /// What the tool is called with, and what a failure's record keeps.
    #[inline(always)]
    fn split(self) -> (Given<'a>, Kept<'a>) {
        match (self.sent, self.keep) {
            (Sent::Value(value), true) => (Given::Value((*value).clone()), Kept::Value(value)),
            (Sent::Value(value), false) => (Given::Value(value.into_owned()), Kept::Nothing),
            (Sent::Text(text), true) => (Given::Text(text.clone()), Kept::Text(text)),
            (Sent::Text(text), false) => (Given::Text(text), Kept::Nothing),
        }
    }
}

impl Kept<'_> {
    fn into_value(self) -> Value {
        match self {
            Self::Value(value) => value.into_owned(),
            // Text that is not JSON is kept as text.
            Self::Text(text) => {
                serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.into_owned()))
            }
            Self::Nothing => Value::Null,
        }
    }
}

/// Waits for a call that was not done when first polled, until `deadline` if it has one (the
/// instant, and the limit it stands for).
async fn wait<T>(
    mut future: Contained<CatchUnwind<AssertUnwindSafe<ToolFuture<'_, T>>>>,
    deadline: Option<(Instant, Duration)>,
) -> Ran<T> {
    match deadline {
        Some((deadline, limit)) => match tokio::time::timeout_at(deadline, &mut future).await {
            Ok(Ok(result)) => returned(result),
            Ok(Err(payload)) => Err(Ending::Panicked(payload)),
            // Stopped here, not later: a future that panics as it is dropped is a panic.
            Err(_) => match future.stop() {
                None => Err(Ending::TimedOut(limit)),
                Some(payload) => Err(Ending::PanickedWhenStopped(limit, payload)),
            },
        },
        None => match future.await {
            Ok(result) => returned(result),
            Err(payload) => Err(Ending::Panicked(payload)),
        },
    }
}

/// A tool that panicked: its effect is unknown, the payload goes to the caller only.
fn panicked(tool: &str, call_id: &str, message: String) -> ToolFailure {
    let mut failure = ToolFailure::new(
        tool,
        call_id,
        kinds::PANIC,
        Arc::new(ToolPanicked {
            tool: tool.to_owned(),
            payload: message,
        }),
        render::panic(tool),
    );
    failure.effect = EffectOutcome::Unknown;
    failure
}
