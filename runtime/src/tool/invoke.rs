//! Running one call of a tool: the arguments, the time limit (the shorter of the caller's and
//! the tool's own), the cancellation token the tool sees, sync tools on the blocking pool,
//! panics — in the tool, in its future's `Drop`, in its error values — and the one
//! [`ToolFailure`] every way of failing becomes. Shared by the agent loop and the MCP server,
//! so both apply the same rules.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::FutureExt;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::failure::{EffectOutcome, ToolFailure, ToolPanicked, ToolTimedOut, kinds};
use super::output::{AsText, AsValue, Encoding};
use super::{Observer, OutputError, Tool, ToolContext, ToolFuture, text};
use crate::error::ToolError;
use crate::render;

/// The arguments of a call, as the caller has them.
pub(crate) enum CallArguments<'a> {
    /// A value the caller keeps: the tool gets a copy, and a failure's record another.
    Borrowed(&'a Value),
    /// A value the caller hands over: the tool gets it, and a failure's record holds `null`.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    Owned(Value),
    /// JSON text, decoded by the tool straight from the text.
    Text(&'a str),
}

/// What a call's output is made into, and the tool's method that makes it: [`AsValue`] (the
/// agent loop, and an MCP tool with an output schema) or [`AsText`] (an MCP tool without one).
pub(crate) trait Form: Encoding {
    /// Calls `tool` with arguments as a value.
    fn call(tool: &dyn Tool, args: Value, cx: ToolContext) -> ToolFuture<'_, Self::Output>;

    /// Calls `tool` with arguments as JSON text.
    fn call_text<'a>(
        tool: &'a dyn Tool,
        text: &str,
        cx: ToolContext,
    ) -> ToolFuture<'a, Self::Output>;
}

impl Form for AsValue {
    #[inline]
    fn call(tool: &dyn Tool, args: Value, cx: ToolContext) -> ToolFuture<'_, Value> {
        tool.call(args, cx)
    }

    #[inline]
    fn call_text<'a>(tool: &'a dyn Tool, text: &str, cx: ToolContext) -> ToolFuture<'a, Value> {
        tool.call_text(text, cx)
    }
}

impl Form for AsText {
    #[inline]
    fn call(tool: &dyn Tool, args: Value, cx: ToolContext) -> ToolFuture<'_, String> {
        tool.call_text_output(args, cx)
    }

    /// Rare (an MCP client that sends the arguments as a JSON string): parsed, then called.
    fn call_text<'a>(tool: &'a dyn Tool, text: &str, cx: ToolContext) -> ToolFuture<'a, String> {
        match text::parse(text) {
            Ok(args) => tool.call_text_output(args, cx),
            Err(error) => ToolFuture::ready(Err(error)),
        }
    }
}

/// One call to run.
pub(crate) struct Invocation<'a> {
    /// The tool.
    pub(crate) tool: &'a Arc<dyn Tool>,
    /// Its name, as the tool set keeps it (shared with the call's context, not copied).
    pub(crate) name: &'a Arc<str>,
    /// The id of the call.
    pub(crate) call_id: &'a str,
    /// The arguments.
    pub(crate) arguments: CallArguments<'a>,
    /// The caller's time limit for any call; the tool's own applies when it is shorter.
    pub(crate) limit: Option<Duration>,
    /// Show the model a failure's message after its kind.
    pub(crate) include_error_message: bool,
    /// Whether someone can cancel `parent` (the caller's run or request token): a sync tool
    /// then runs on the blocking pool, so that the cancellation does not wait for it.
    pub(crate) cancellable: bool,
    /// Who watches the call's progress and log lines, if anyone.
    pub(crate) observer: Option<Observer>,
}

/// Runs `invocation`, whose tool's token is a child of `parent`. Never panics; never returns
/// early because `parent` was cancelled (the caller selects on it, and may drop this future at
/// any point: the tool's future is then dropped, a panic in its `Drop` contained).
///
/// The output is made as `F` says: `invoke::<AsValue>` for a `Value`.
pub(crate) async fn invoke<F: Form>(
    invocation: Invocation<'_>,
    parent: &CancellationToken,
) -> Result<F::Output, ToolFailure> {
    let Invocation {
        tool,
        name,
        call_id,
        arguments,
        limit,
        include_error_message,
        cancellable,
        observer,
    } = invocation;
    let cx = ToolContext::child_of(call_id, name, parent, observer);
    let limit = match (limit, tool.timeout()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    // The runtime's clock, the one the timeout runs on: a call stopped at its limit reports
    // the limit as its elapsed time, also when the clock is paused in tests.
    let start = Instant::now();
    let (record, outcome) = run::<F>(tool, arguments, cx.clone(), limit, cancellable).await;
    let failure = |failure: ToolFailure| {
        let mut failure = failure;
        failure.arguments = record.into_value();
        failure.elapsed = start.elapsed();
        failure
    };
    match outcome {
        Ran::Returned(Ok(value)) => Ok(value),
        Ran::Returned(Err(error)) => Err(failure(tool_error(
            name,
            call_id,
            error,
            include_error_message,
        ))),
        Ran::Panicked(payload) => Err(failure(panicked(name, call_id, payload_message(payload)))),
        Ran::PanickedWhenStopped(limit, message) => {
            cx.abandon();
            let message = format!(
                "{message} (as it was stopped after its time limit of {})",
                render::format_duration(limit)
            );
            let mut panicked = panicked(name, call_id, message);
            panicked.timed_out = true;
            Err(failure(panicked))
        }
        Ran::TimedOut(limit) => {
            cx.abandon();
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
            Err(failure(timed_out))
        }
    }
}

/// How running the tool ended.
enum Ran<T> {
    Returned(Result<T, ToolError>),
    Panicked(Box<dyn Any + Send>),
    TimedOut(Duration),
    /// Timed out, and panicked as it was stopped (in its future's `Drop`).
    PanickedWhenStopped(Duration, String),
}

/// What a failure's record keeps of the arguments.
enum Record<'a> {
    Value(&'a Value),
    Text(&'a str),
    Nothing,
}

impl Record<'_> {
    fn into_value(self) -> Value {
        match self {
            Self::Value(value) => value.clone(),
            // Text that is not JSON is kept as text.
            Self::Text(text) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
            }
            Self::Nothing => Value::Null,
        }
    }
}

async fn run<'a, F: Form>(
    tool: &Arc<dyn Tool>,
    arguments: CallArguments<'a>,
    cx: ToolContext,
    limit: Option<Duration>,
    cancellable: bool,
) -> (Record<'a>, Ran<F::Output>) {
    let blocking = tool.is_blocking()
        && (limit.is_some() || cancellable)
        && tokio::runtime::Handle::try_current().is_ok();
    if blocking {
        return run_blocking::<F>(tool, arguments, cx, limit).await;
    }
    let (record, started) = match arguments {
        CallArguments::Borrowed(value) => (
            Record::Value(value),
            catch_unwind(AssertUnwindSafe(|| F::call(&**tool, value.clone(), cx))),
        ),
        CallArguments::Owned(value) => (
            Record::Nothing,
            catch_unwind(AssertUnwindSafe(|| F::call(&**tool, value, cx))),
        ),
        CallArguments::Text(text) => (
            Record::Text(text),
            catch_unwind(AssertUnwindSafe(|| F::call_text(&**tool, text, cx))),
        ),
    };
    let future = match started {
        Ok(future) => Contained::new(AssertUnwindSafe(future).catch_unwind()),
        Err(payload) => return (record, Ran::Panicked(payload)),
    };
    let mut future = future;
    let ran = match limit {
        Some(limit) => match tokio::time::timeout(limit, &mut future).await {
            Ok(Ok(result)) => Ran::Returned(result),
            Ok(Err(payload)) => Ran::Panicked(payload),
            // Stopped here, not later: a future that panics as it is dropped is a panic.
            Err(_) => match future.stop() {
                None => Ran::TimedOut(limit),
                Some(payload) => Ran::PanickedWhenStopped(limit, payload),
            },
        },
        None => match future.await {
            Ok(result) => Ran::Returned(result),
            Err(payload) => Ran::Panicked(payload),
        },
    };
    (record, ran)
}

/// Runs a sync tool on the blocking pool: at its limit, or when the caller stops waiting, the
/// call is abandoned and its thread finishes on its own.
async fn run_blocking<'a, F: Form>(
    tool: &Arc<dyn Tool>,
    arguments: CallArguments<'a>,
    cx: ToolContext,
    limit: Option<Duration>,
) -> (Record<'a>, Ran<F::Output>) {
    enum Owned {
        Value(Value),
        Text(String),
    }
    let (record, owned) = match arguments {
        CallArguments::Borrowed(value) => (Record::Value(value), Owned::Value(value.clone())),
        CallArguments::Owned(value) => (Record::Nothing, Owned::Value(value)),
        CallArguments::Text(text) => (Record::Text(text), Owned::Text(text.to_owned())),
    };
    let tool = Arc::clone(tool);
    // A sync tool's future is ready when `call` returns; `block_on` takes its result (and
    // would run any other future to its end on this thread).
    let task = tokio::task::spawn_blocking(move || match owned {
        Owned::Value(value) => futures::executor::block_on(F::call(&*tool, value, cx)),
        Owned::Text(text) => futures::executor::block_on(F::call_text(&*tool, &text, cx)),
    });
    let joined = match limit {
        Some(limit) => match tokio::time::timeout(limit, task).await {
            Ok(joined) => joined,
            Err(_) => return (record, Ran::TimedOut(limit)),
        },
        None => task.await,
    };
    let ran = match joined {
        Ok(result) => Ran::Returned(result),
        Err(error) => match error.try_into_panic() {
            Ok(payload) => Ran::Panicked(payload),
            // Cancelled: only when the runtime shuts down.
            Err(_) => Ran::Panicked(Box::new("the blocking task was cancelled")),
        },
    };
    (record, ran)
}

/// A failure the tool returned, classified.
fn tool_error(
    tool: &str,
    call_id: &str,
    error: ToolError,
    include_error_message: bool,
) -> ToolFailure {
    let text = error.model_text(tool, include_error_message);
    let kind = error.kind().to_owned();
    let fatal = error.is_fatal();
    let (error, effect, message_shown): (Arc<dyn std::error::Error + Send + Sync>, _, _) =
        match error {
            ToolError::Argument(error) => (Arc::new(error), EffectOutcome::Failed, false),
            ToolError::Failed(failure) => {
                let message_shown = include_error_message || failure.shows_message();
                let error = failure.into_error();
                let effect = if error.is::<OutputError>() {
                    // The tool returned `Ok`: whatever it did, it did.
                    EffectOutcome::Applied
                } else if effect_unknown(&*error) {
                    EffectOutcome::Unknown
                } else {
                    EffectOutcome::Failed
                };
                (error, effect, message_shown)
            }
        };
    let mut failure = ToolFailure::new(tool, call_id, kind, error, text);
    failure.fatal = fatal;
    failure.effect = effect;
    failure.message_shown = message_shown;
    failure
}

/// Whether a failure left the call's effect unknown: an MCP server that went away or a call
/// abandoned while the server had it.
fn effect_unknown(error: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    #[cfg(feature = "mcp-client")]
    {
        error
            .downcast_ref::<crate::mcp::McpCallError>()
            .is_some_and(crate::mcp::McpCallError::effect_unknown)
    }
    #[cfg(not(feature = "mcp-client"))]
    {
        let _ = error;
        false
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

/// Drops `value` under `catch_unwind`: a value from a tool may panic in its `Drop`.
pub(crate) fn drop_contained<T>(value: T) {
    let _ = drop_reporting(value);
}

/// Drops `value` under `catch_unwind`, and says what it panicked with, if it did.
fn drop_reporting<T>(value: T) -> Option<String> {
    let payload = catch_unwind(AssertUnwindSafe(move || drop(value))).err()?;
    Some(payload_message(payload))
}

/// A panic's message. The payload itself is forgotten rather than dropped: it is the tool's
/// value, and may panic in its own `Drop`.
fn payload_message(payload: Box<dyn Any + Send>) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned());
    std::mem::forget(payload);
    message
}

/// A future whose `Drop` cannot unwind into its owner: dropped before it finished (a timeout,
/// a cancelled run), or after, the inner future is dropped under `catch_unwind`.
struct Contained<F>(Option<F>);

impl<F> Contained<F> {
    fn new(future: F) -> Self {
        Self(Some(future))
    }

    /// Drops the future now; what it panicked with, if it panicked as it was dropped.
    fn stop(&mut self) -> Option<String> {
        drop_reporting(self.0.take())
    }
}

impl<F: Future + Unpin> Future for Contained<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let future = self
            .0
            .as_mut()
            .expect("a contained future is not polled after it completed");
        let output = std::task::ready!(Pin::new(future).poll(cx));
        drop_contained(self.0.take());
        Poll::Ready(output)
    }
}

impl<F> Drop for Contained<F> {
    fn drop(&mut self) {
        drop_contained(self.0.take());
    }
}
