//! The MCP side of a call: `tools/list`, and `tools/call` run through the tool module's
//! [`invoke`], with the failure reported to the operator and the rendered text to the client.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;

use rmcp::ServerHandler;
#[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, ErrorData, Implementation, ListToolsResult,
    LoggingMessageNotificationParam, NumberOrString, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, ServerCapabilities, ServerConfig,
    SetLevelRequestParams,
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
    AsText, AsValue, CallArguments, Deliver, Form, Forward, Invocation, Observer, Tool,
    ToolFailure, ToolUpdate, UnknownTool, Updates, drive, execute_span, invoke, kinds,
    record_failure,
};

impl ServerHandler for McpServer {
    #[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
    fn get_info(&self) -> ServerConfig {
        let inner = &self.inner;
        // Logging: tools' log lines (`ToolContext::log`), for clients that ask for them.
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .build();
        let info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(&inner.name, &inner.version));
        match &inner.instructions {
            Some(instructions) => info.with_instructions(instructions),
            None => info,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.listed.clone()))
    }

    /// The lowest level of tools' log lines this connection's client is sent, until a request
    /// says otherwise in its `_meta`. Until the client sets one, it is sent none.
    #[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session.set_log_level(request.level);
        Ok(())
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        let (position, _, _) = self.inner.tools.find(name)?;
        self.inner.listed.get(position).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
        self.call(request.name.into_owned(), arguments, context)
            .await
            .map(CallToolResponse::from)
    }

    /// A `tools/call` whose `arguments` is not an object does not decode as one, and arrives
    /// here. It is still a call: the tool's wrapper refuses the arguments, and the client
    /// gets an argument error it can correct, not a protocol error.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method != "tools/call" {
            // The method name is the client's: echoed, but cut to length.
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "unknown method `{}`",
                    render::bounded(&request.method, render::MAX_NAME_LEN * 2)
                ),
                None,
            ));
        }
        let mut params = match request.params {
            Some(serde_json::Value::Object(params)) => params,
            _ => return Err(ErrorData::invalid_params("tools/call needs params", None)),
        };
        let Some(serde_json::Value::String(name)) = params.remove("name") else {
            return Err(ErrorData::invalid_params(
                "tools/call needs the tool's `name`, a string",
                None,
            ));
        };
        let arguments = match params.remove("arguments") {
            None | Some(serde_json::Value::Null) => serde_json::Value::Object(Default::default()),
            Some(arguments) => arguments,
        };
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let mut result = self.call(name, arguments, context).await?;
        if !modern {
            // As rmcp does for the results it sends itself.
            result.result_type = None;
        }
        let result = serde_json::to_value(result)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(CustomResult::new(result))
    }
}

impl McpServer {
    /// Runs one `tools/call`: the result the client is sent, or the protocol error for a tool
    /// that does not exist (or a cancelled request, whose reply the transport drops).
    async fn call(
        &self,
        name: String,
        arguments: serde_json::Value,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
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
            return Err(ErrorData::invalid_params(text, None));
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
        let arguments = if let serde_json::Value::String(text) = &arguments {
            CallArguments::Text(text)
        } else if inner.on_failure.is_empty() {
            CallArguments::Owned(arguments)
        } else {
            CallArguments::Borrowed(&arguments)
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
        let notify = Notify {
            peer: &peer,
            progress_token,
            tool: tool_name,
        };
        // A tool with an output schema has its output made a `Value`, for `structuredContent`
        // and the text; one without has it written straight to text.
        let updates = updates.flatten();
        let outcome = match inner.outputs[position] {
            None => {
                let to_result = |text| success_text(text, None);
                self.execute::<AsText>(invocation, &token, &span, updates, notify, to_result)
                    .await
            }
            Some(shape) => {
                let to_result = |output| success(tool, shape, output, &span);
                self.execute::<AsValue>(invocation, &token, &span, updates, notify, to_result)
                    .await
            }
        };
        // A cancelled request stays cancelled, whatever the tool made of its token.
        let Some(outcome) = outcome.filter(|_| !token.is_cancelled()) else {
            return Err(cancelled(&span, &name, call_id, start));
        };
        match outcome {
            Ok(result) => Ok(result),
            Err(failure) => {
                let result =
                    CallToolResult::error(vec![ContentBlock::text(failure.shown_to_model.clone())]);
                self.report(&span, &failure);
                Ok(result)
            }
        }
    }

    /// Runs `invocation` under `span`, its output made as `F` says and then the client's
    /// result by `to_result`, passing the call's reports on to the client while it runs;
    /// `None` when the request was cancelled first.
    async fn execute<F: Form>(
        &self,
        invocation: Invocation<'_>,
        token: &CancellationToken,
        span: &tracing::Span,
        updates: Option<Updates>,
        mut notify: Notify<'_>,
        to_result: impl FnOnce(F::Output) -> CallToolResult,
    ) -> Option<Result<CallToolResult, ToolFailure>> {
        // The request's token is the parent of the tool's, so the client's
        // `notifications/cancelled` reaches the tool.
        let mut run = pin!(invoke::<F>(invocation, token).instrument(span.clone()));
        let outcome = match updates {
            None => self.finish(run, token).await,
            // A call someone watches passes its reports on while it runs. Boxed: the calls
            // nobody watches do not carry the reports' machinery in their state.
            Some(updates) => {
                let observed = drive(run.as_mut(), Some(updates), &mut notify);
                self.finish(Box::pin(observed), token).await
            }
        }?;
        Some(match outcome {
            Ok(output) => Ok(to_result(output)),
            Err(failure) => Err(failure),
        })
    }

    /// Runs `call` to its end; `None` when the request was cancelled first. A call that is
    /// done when first polled (most sync tools) needs no watch on the tokens.
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
    peer: &'a Peer<RoleServer>,
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
