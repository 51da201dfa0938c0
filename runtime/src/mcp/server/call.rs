//! One `tools/call`, from the request to the client's result: the tool run as an
//! [`Invocation`], as the agent loop runs it, polled in place on the request's first poll; its reports passed on to the client while it runs; the failure reported to the
//! operator and the rendered text sent to the client.

use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::{BoxFuture, Either};
use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, ErrorData, NumberOrString};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::McpServer;
use super::notify::{Watch, watch};
use super::result::{success, success_text, within_budget};
use crate::error::ToolFailure;
use crate::in_place::{FirstPoll, InPlace};
use crate::render;
use crate::tool::{AsText, AsValue, CallArguments, CallOutcome, CallSpan, Invocation};

/// One `tools/call` being answered. Its first poll does the call in place: a call that is done
/// then (an async tool that never waits, nobody watching its reports) is answered with no state
/// machine around it; one that has to wait goes on boxed, and so does a sync tool's, which runs
/// on the blocking pool where the request's cancellation can abandon it. Its output is the
/// result made into `R`, as the handler answers with it.
pub(super) struct CallTool<'s, R> {
    server: &'s McpServer,
    /// The request is held in place until the first poll: boxing it would cost every call an
    /// allocation.
    stage: InPlace<'s, Request, Answered<R>>,
}

/// A `tools/call` request: the tool's name, the arguments and the request's context.
pub(super) type Request = (Cow<'static, str>, Value, RequestContext<RoleServer>);

/// The result the client is sent, made into the handler's `R` where it is made (`From`,
/// inlined: converting it later would move its 200 bytes once more), or the protocol error for
/// a tool that does not exist (or a cancelled request, whose reply the transport drops).
pub(super) type Answered<R = CallToolResult> = Result<R, ErrorData>;

impl<'s, R> CallTool<'s, R> {
    /// The call of the tool `name`, its result made into `R`.
    pub(super) fn new(
        server: &'s McpServer,
        name: Cow<'static, str>,
        arguments: Value,
        context: RequestContext<RoleServer>,
    ) -> Self {
        Self {
            server,
            stage: InPlace::Start((name, arguments, context)),
        }
    }

    /// A call answered by `running` (a `#[tool(task)]` tool's task, created), polled as
    /// [`new`](Self::new)'s call is once it goes on.
    pub(super) fn going(server: &'s McpServer, running: BoxFuture<'s, Answered<R>>) -> Self {
        Self {
            server,
            stage: InPlace::Running(running),
        }
    }
}

impl<R: From<CallToolResult> + Send + 'static> Future for CallTool<'_, R> {
    type Output = Result<R, ErrorData>;

    #[inline]
    fn poll(self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let server = this.server;
        // The request is lent where it lies: the call takes only its arguments out of it.
        this.stage
            .poll_in_place(task, |(name, arguments, context), task| {
                // A call a person must approve first waits for the client's user (approval.rs).
                if server.asks_approval(name) {
                    let request = (
                        std::mem::take(name),
                        std::mem::take(arguments),
                        context.clone(),
                    );
                    return server.approve_then_call(request);
                }
                server.begin(name, std::mem::take(arguments), context, task)
            })
    }
}

/// What answering a call needs besides the tool's outcome.
struct Answer<'s> {
    server: &'s McpServer,
    /// The name as the tool set holds it.
    tool_name: &'s Arc<str>,
    span: CallSpan,
    start: Instant,
    /// The output budget, when the server cuts results.
    budget: Option<usize>,
}

impl McpServer {
    /// Begins one `tools/call`, polling the tool in place with `task`.
    #[inline(always)]
    pub(super) fn begin<'s, R: From<CallToolResult> + Send + 'static>(
        &'s self,
        name: &str,
        arguments: Value,
        context: &RequestContext<RoleServer>,
        task: &mut Context<'_>,
    ) -> FirstPoll<'s, Answered<R>> {
        let inner = &self.inner;
        // The request stays where the future holds it: only what the call takes is moved out.
        let RequestContext {
            ct: token,
            meta,
            peer,
            id,
            ..
        } = context;
        // The request's id is the call's; a number is written without allocating.
        let mut digits = itoa::Buffer::new();
        let call_id = match id {
            NumberOrString::Number(n) => digits.format(*n),
            NumberOrString::String(s) => s,
        };
        let span = CallSpan::new(name, call_id);
        let start = Instant::now();

        let Some((position, tool_name, tool)) = inner.tools.find(name) else {
            let mut failure = inner.tools.unknown(name, call_id);
            let text = failure.shown_to_model.clone();
            failure.arguments = arguments;
            failure.elapsed = start.elapsed();
            self.report(&span, &failure);
            // The protocol's answer to an unknown tool is an error, not a tool result.
            return FirstPoll::Done(Err(ErrorData::invalid_params(text, None)));
        };

        let key = match crate::tool::idempotency::of_request(meta) {
            Ok(key) => key,
            Err(refusal) => return FirstPoll::Done(Err(ErrorData::invalid_params(refusal, None))),
        };
        let (observer, watch) = watch(&self.session, &span, meta, peer, tool_name);
        // Arguments sent as a JSON string are read as the JSON text they hold, as some clients
        // send them; text that is not JSON is an argument error. The arguments are kept for
        // the failure record only when a hook will read it.
        let keep = !inner.on_failure.is_empty();
        let arguments = match arguments {
            Value::String(text) => CallArguments::text(text, keep),
            arguments => CallArguments::value(Cow::Owned(arguments), keep),
        };
        let invocation = Invocation {
            tool,
            tool_name,
            call_id,
            start,
            arguments,
            limit: inner.timeout,
            parent: token,
            // The client can cancel the request.
            cancellable: true,
            observer,
            key,
            include_error_message: inner.include_error_message,
            client: Some(peer),
        };
        let answer = Answer {
            server: self,
            tool_name,
            span,
            start,
            budget: inner
                .max_output
                .map(|default| tool.max_output().unwrap_or(default)),
        };
        // A tool with an output schema has its output made a `Value`, for `structuredContent`
        // and the text; one without has it written straight to text. The call is polled first
        // under its span.
        match inner.outputs[position] {
            None => {
                let started = answer.in_span(|| invocation.first_poll::<AsText>(task));
                answer.begin(started, call_id, token, watch, |text, _| {
                    success_text(text, None)
                })
            }
            Some(shape) => {
                let started = answer.in_span(|| invocation.first_poll::<AsValue>(task));
                answer.begin(started, call_id, token, watch, move |output, span| {
                    success(tool_name, shape, output, span)
                })
            }
        }
    }

    /// Runs `call` to its end; `None` when the request was cancelled first. A call that is
    /// done when first polled needs no watch on the tokens.
    async fn finish<F: Future + Unpin>(
        &self,
        mut call: F,
        token: &CancellationToken,
    ) -> Option<F::Output> {
        if let Poll::Ready(outcome) = futures::poll!(&mut call) {
            return Some(outcome);
        }
        loop {
            tokio::select! {
                // The tool first: one that watches its token gets to return.
                biased;
                outcome = &mut call => return Some(outcome),
                () = token.cancelled() => return None,
                // The client closed the connection, or the server is shutting down: nobody
                // waits for the answer. The call is cancelled as if the client had asked.
                () = self.session.closed.cancelled(), if !token.is_cancelled() => token.cancel(),
            }
        }
    }

    /// Gives the full error to the server side: the span and every hook.
    pub(super) fn report(&self, span: &CallSpan, failure: &ToolFailure) {
        span.record_failure(failure, false);
        for hook in &self.inner.on_failure {
            if std::panic::catch_unwind(AssertUnwindSafe(|| hook(failure))).is_err() {
                tracing::error!(
                    parent: &**span,
                    tool = %render::name(&failure.tool),
                    call_id = %failure.call_id,
                    "an on_failure hook panicked"
                );
            }
        }
    }
}

impl<'s> Answer<'s> {
    /// Runs `f` in the call's span.
    #[inline(always)]
    fn in_span<T>(&self, f: impl FnOnce() -> T) -> T {
        let _entered = self.span.enter();
        f()
    }

    /// Goes on with the call `call_id`, `started` as its first poll left it: answered at once
    /// when it is done and nobody watches its reports; otherwise a future that passes the
    /// reports on to the client while the call runs (`watch`), and answers at its end, or when
    /// `token` (the request's) is cancelled. `to_result` makes the output the client's result.
    #[inline(always)]
    fn begin<T: Send + 's, R: From<CallToolResult> + Send + 'static>(
        self,
        started: FirstPoll<'s, CallOutcome<T>>,
        call_id: &str,
        token: &CancellationToken,
        watch: Option<Watch<'s>>,
        to_result: impl FnOnce(T, &tracing::Span) -> CallToolResult + Send + 's,
    ) -> FirstPoll<'s, Answered<R>> {
        let running = match started {
            // Done before anyone could stop it: answered, also when the client cancelled the
            // request meanwhile (the transport then drops the answer).
            FirstPoll::Done(outcome) if watch.is_none() => {
                return FirstPoll::Done(self.answer(outcome, to_result));
            }
            FirstPoll::Done(outcome) => Either::Left(std::future::ready(outcome)),
            FirstPoll::Running(running) => Either::Right(running),
        };
        // For the record of a cancelled call, and the request's token: the call goes on
        // without the request.
        let call_id = call_id.to_owned();
        let token = token.clone();
        FirstPoll::Running(Box::pin(async move {
            let running = running.instrument(self.span.clone());
            let outcome = match watch {
                None => self.server.finish(running, &token).await,
                Some(watch) => {
                    let observed = pin!(watch.drive(running));
                    self.server.finish(observed, &token).await
                }
            };
            // A cancelled request stays cancelled, whatever the tool made of its token.
            match outcome.filter(|_| !token.is_cancelled()) {
                Some(outcome) => self.answer(outcome, to_result),
                None => Err(cancelled(&self, &call_id)),
            }
        }))
    }

    /// The client's answer to a call that ended with `outcome`.
    #[inline(always)]
    fn answer<T, R: From<CallToolResult>>(
        self,
        outcome: CallOutcome<T>,
        to_result: impl FnOnce(T, &tracing::Span) -> CallToolResult,
    ) -> Answered<R> {
        let Self {
            server,
            span,
            budget,
            ..
        } = self;
        match outcome {
            Ok(output) => {
                let mut result = to_result(output, &span);
                if let Some(max) = budget {
                    within_budget(&mut result, max);
                }
                Ok(R::from(result))
            }
            Err(failure) => {
                let result =
                    CallToolResult::error(vec![ContentBlock::text(failure.shown_to_model.clone())]);
                server.report(&span, &failure);
                Ok(R::from(result))
            }
        }
    }
}

/// Records the call `call_id`, which the client cancelled. Not a failure: no hook hears of it.
/// The reply is dropped by the transport, as the protocol says.
fn cancelled(answer: &Answer<'_>, call_id: &str) -> ErrorData {
    let span = &answer.span;
    span.record_cancelled();
    tracing::info!(
        parent: &**span,
        tool = %render::name(answer.tool_name),
        call_id = %call_id,
        elapsed = ?answer.start.elapsed(),
        "the client cancelled the call; the tool was stopped"
    );
    ErrorData::new(ErrorCode::INTERNAL_ERROR, "the request was cancelled", None)
}
