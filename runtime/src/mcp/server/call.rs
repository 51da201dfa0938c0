//! One `tools/call`, from the request to the client's result: the tool run through the tool
//! module's [`start`], in place on the first poll; its reports passed on to the client while it
//! runs; the failure reported to the operator and the rendered text sent to the client.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::Either;
#[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
use rmcp::model::{
    CallToolResult, ContentBlock, ErrorCode, ErrorData, LoggingMessageNotificationParam,
    NumberOrString, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::McpServer;
use super::definition::{self, Output};
use super::session::mcp_level;
use crate::render;
use crate::tool::{
    AsText, AsValue, CallArguments, Deliver, Form, Forward, InPlace, Invocation, Observer, Step,
    Tool, ToolFailure, ToolUpdate, UnknownTool, Updates, drive, execute_span, kinds,
    record_failure, start,
};

/// One `tools/call` being answered. Its first poll does the call in place: a call that is done
/// then (a sync tool, or an async one that never waits, nobody watching its reports) is
/// answered with no state machine around it; one that has to wait goes on boxed.
pub(super) struct CallTool<'s> {
    server: &'s McpServer,
    /// The request is held in place until the first poll: boxing it would cost every call an
    /// allocation.
    stage: InPlace<'s, Request, Answered>,
}

/// A `tools/call` request: the tool's name, the arguments and the request's context.
type Request = (String, Value, RequestContext<RoleServer>);

/// The result the client is sent, or the protocol error for a tool that does not exist (or a
/// cancelled request, whose reply the transport drops).
type Answered = Result<CallToolResult, ErrorData>;

impl<'s> CallTool<'s> {
    pub(super) fn new(
        server: &'s McpServer,
        name: String,
        arguments: Value,
        context: RequestContext<RoleServer>,
    ) -> Self {
        Self {
            server,
            stage: InPlace::Start((name, arguments, context)),
        }
    }
}

impl Future for CallTool<'_> {
    type Output = Answered;

    fn poll(self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<Answered> {
        let this = self.get_mut();
        let server = this.server;
        this.stage
            .poll_with(task, |(name, arguments, context), task| {
                server.begin(name, arguments, context, task)
            })
    }
}

/// What answering a call needs besides the tool's outcome.
struct Answer<'s> {
    server: &'s McpServer,
    /// The request's token, the parent of the tool's: the client's `notifications/cancelled`
    /// reaches the tool.
    token: CancellationToken,
    span: tracing::Span,
    name: String,
    start: Instant,
}

impl McpServer {
    /// Begins one `tools/call`, polling the tool in place with `task`.
    fn begin<'s>(
        &'s self,
        name: String,
        arguments: Value,
        context: RequestContext<RoleServer>,
        task: &mut Context<'_>,
    ) -> Step<'s, Answered> {
        let inner = &self.inner;
        let RequestContext {
            ct: token,
            meta,
            peer,
            id,
            ..
        } = context;
        // The request's id is the call's; a number is written without allocating.
        let mut digits = itoa::Buffer::new();
        let call_id = match &id {
            NumberOrString::Number(n) => digits.format(*n),
            NumberOrString::String(s) => s,
        };
        let span = execute_span(&name, call_id);
        let start = Instant::now();

        let Some((position, tool_name, tool)) = inner.tools.find(&name) else {
            let available: Vec<&str> = self.tool_names().collect();
            let text = render::unknown_tool(&name, &available);
            let mut failure = ToolFailure::new(
                &name,
                call_id,
                kinds::UNKNOWN_TOOL,
                Arc::new(UnknownTool { name: name.clone() }),
                text.clone(),
            );
            failure.arguments = arguments;
            failure.elapsed = start.elapsed();
            self.report(&span, &failure);
            // The protocol's answer to an unknown tool is an error, not a tool result.
            return Step::Done(Err(ErrorData::invalid_params(text, None)));
        };

        // Progress goes to a client that sent a token for it, log lines to one that asked for
        // them, both to the span when it is enabled; a call nobody watches has no observer.
        let progress_token = meta.get_progress_token();
        let forward = Forward {
            progress: progress_token.is_some(),
            logs: self.session.log_level(&meta),
        };
        let (observer, updates) = Observer::new(&span, forward).unzip();
        // Arguments sent as a JSON string are read as the JSON text they hold, as some clients
        // send them; text that is not JSON is an argument error. The arguments are kept for
        // the failure record only when a hook will read it.
        let arguments = match arguments {
            Value::String(text) => CallArguments::KeptText(text),
            arguments if inner.on_failure.is_empty() => CallArguments::Owned(arguments),
            arguments => CallArguments::Kept(arguments),
        };
        let invocation = Invocation {
            tool,
            name: tool_name,
            call_id,
            arguments,
            limit: inner.timeout,
            include_error_message: inner.include_error_message,
            cancellable: true,
            observer,
        };
        let watch = updates.flatten().map(|updates| {
            let notify = Notify {
                peer,
                progress_token,
                tool: tool_name,
            };
            (updates, notify)
        });
        let answer = Answer {
            server: self,
            token,
            span,
            name,
            start,
        };
        // A tool with an output schema has its output made a `Value`, for `structuredContent`
        // and the text; one without has it written straight to text.
        match inner.outputs[position] {
            None => {
                answer.begin::<AsText>(invocation, watch, task, |text, _| success_text(text, None))
            }
            Some(shape) => answer.begin::<AsValue>(invocation, watch, task, move |output, span| {
                success(tool, shape, output, span)
            }),
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
    fn report(&self, span: &tracing::Span, failure: &ToolFailure) {
        record_failure(span, failure, false);
        for hook in &self.inner.on_failure {
            if std::panic::catch_unwind(AssertUnwindSafe(|| hook(failure))).is_err() {
                tracing::error!(
                    parent: span,
                    tool = %render::name(&failure.tool),
                    call_id = %failure.call_id,
                    "an on_failure hook panicked"
                );
            }
        }
    }
}

impl<'s> Answer<'s> {
    /// Starts `invocation` with its output made as `F` says, under the call's span: answered at
    /// once when it is done and nobody watches its reports; otherwise a future that passes the
    /// reports on to the client while the call runs (`watch`), and answers at its end.
    /// `to_result` makes the output the client's result.
    fn begin<F: Form>(
        self,
        invocation: Invocation<'s, '_>,
        watch: Option<(Updates, Notify<'s>)>,
        task: &mut Context<'_>,
        to_result: impl FnOnce(F::Output, &tracing::Span) -> CallToolResult + Send + 's,
    ) -> Step<'s, Answered> {
        let call_id = invocation.call_id;
        let started = {
            let _entered = self.span.enter();
            start::<F>(invocation, &self.token, task)
        };
        let (running, watch) = match (started, watch) {
            (Step::Done(outcome), None) => {
                return Step::Done(self.answer(Some(outcome), call_id, to_result));
            }
            (Step::Done(outcome), watch) => (Either::Left(std::future::ready(outcome)), watch),
            (Step::Running(running), watch) => (Either::Right(running), watch),
        };
        let call_id = call_id.to_owned();
        Step::Running(Box::pin(async move {
            let running = running.instrument(self.span.clone());
            let outcome = match watch {
                None => self.server.finish(running, &self.token).await,
                Some((updates, mut notify)) => {
                    let observed = pin!(drive(running, Some(updates), &mut notify));
                    self.server.finish(observed, &self.token).await
                }
            };
            self.answer(outcome, &call_id, to_result)
        }))
    }

    /// The client's answer to a call that ended with `outcome` (`None`: the request was
    /// cancelled first).
    fn answer<T>(
        self,
        outcome: Option<Result<T, Box<ToolFailure>>>,
        call_id: &str,
        to_result: impl FnOnce(T, &tracing::Span) -> CallToolResult,
    ) -> Answered {
        let Self {
            server,
            token,
            span,
            name,
            start,
        } = self;
        // A cancelled request stays cancelled, whatever the tool made of its token.
        let Some(outcome) = outcome.filter(|_| !token.is_cancelled()) else {
            return Err(cancelled(&span, &name, call_id, start));
        };
        match outcome {
            Ok(output) => Ok(to_result(output, &span)),
            Err(failure) => {
                let result =
                    CallToolResult::error(vec![ContentBlock::text(failure.shown_to_model.clone())]);
                server.report(&span, &failure);
                Ok(result)
            }
        }
    }
}

/// The result of a call of `tool`, which has an output schema, that succeeded: the output as
/// text and as `structuredContent` of the shape `shape`.
fn success(
    tool: &Arc<dyn Tool>,
    shape: Output,
    output: Value,
    span: &tracing::Span,
) -> CallToolResult {
    let text = match &output {
        Value::String(text) => text.clone(),
        // Writes bytes straight to a buffer, unlike `Display`; a `Value` always serializes.
        other => serde_json::to_string(other).unwrap_or_default(),
    };
    match definition::structured(shape, output) {
        Ok(structured) => success_text(text, Some(structured)),
        Err(_) => {
            tracing::warn!(
                parent: span,
                tool = %tool.definition().name,
                "the tool's output is not an object, as its output schema says: \
                 the result has no structuredContent"
            );
            success_text(text, None)
        }
    }
}

/// The result of a call that succeeded, with `text` as its content.
fn success_text(text: String, structured: Option<Value>) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = structured;
    result
}

/// Passes a running call's reports on to the client: progress as `notifications/progress`
/// (with the request's token), log lines as `notifications/message` (the tool's name as the
/// logger). A client that went away misses them.
struct Notify<'a> {
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    tool: &'a str,
}

impl Deliver for Notify<'_> {
    #[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
    async fn deliver(&mut self, update: ToolUpdate) {
        match update {
            ToolUpdate::Progress {
                progress,
                total,
                message,
            } => {
                // Queued only when there is a token.
                let Some(token) = &self.progress_token else {
                    return;
                };
                let mut params = ProgressNotificationParam::new(token.clone(), progress);
                params.total = total;
                params.message = message;
                let _ = self.peer.notify_progress(params).await;
            }
            ToolUpdate::Log { level, message } => {
                let params =
                    LoggingMessageNotificationParam::new(mcp_level(level), Value::String(message))
                        .with_logger(self.tool);
                let _ = self.peer.notify_logging_message(params).await;
            }
        }
    }
}

/// Records a call the client cancelled. Not a failure: no hook hears of it. The reply is
/// dropped by the transport, as the protocol says.
fn cancelled(span: &tracing::Span, tool: &str, call_id: &str, start: Instant) -> ErrorData {
    span.record("reticent.tool.cancelled", true);
    tracing::info!(
        parent: span,
        tool = %render::name(tool),
        call_id = %call_id,
        elapsed = ?start.elapsed(),
        "the client cancelled the call; the tool was stopped"
    );
    ErrorData::new(ErrorCode::INTERNAL_ERROR, "the request was cancelled", None)
}
