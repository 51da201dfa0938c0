//! The MCP side of a call: `tools/list`, and `tools/call` run through the tool module's
//! [`invoke`], with the failure reported to the operator and the rendered text to the client.

use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;

use rmcp::ServerHandler;
#[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, ErrorData, Implementation, ListToolsResult,
    LoggingMessageNotificationParam, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, ServerCapabilities, ServerConfig, SetLevelRequestParams,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::Value;
use tokio::time::Instant;
use tracing::Instrument;

use super::session::mcp_level;
use super::{McpServer, definition};
use crate::render;
use crate::tool::{
    CallArguments, Deliver, Forward, Invocation, Observer, ToolDefinition, ToolFailure, ToolUpdate,
    UnknownTool, drive, execute_span, invoke, kinds, record_failure,
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
        let position = self.inner.tools.names().position(|n| n == name)?;
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
        let call_id = context.id.to_string();
        let span = execute_span(&name, &call_id);
        let start = Instant::now();

        let Some((tool_name, tool)) = inner.tools.get(&name) else {
            let available: Vec<&str> = self.tool_names().collect();
            let text = render::unknown_tool(&name, &available);
            let mut failure = ToolFailure::new(
                &name,
                &call_id,
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

        // The request's token is the parent of the tool's, so the client's
        // `notifications/cancelled` reaches the tool. The arguments are kept for the failure
        // record only when a hook will read it.
        let RequestContext {
            ct: token,
            meta,
            peer,
            ..
        } = context;
        // Progress goes to a client that sent a token for it, log lines to one that asked for
        // them, both to the span when it is enabled; a call nobody watches has no observer.
        let progress_token = meta.get_progress_token();
        let forward = Forward {
            progress: progress_token.is_some(),
            logs: self.session.log_level(&meta),
        };
        let (observer, updates) = Observer::new(&span, forward).unzip();
        // Arguments sent as a JSON string are read as the JSON text they hold, as some clients
        // send them; text that is not JSON is an argument error.
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
            call_id: &call_id,
            arguments,
            limit: inner.timeout,
            include_error_message: inner.include_error_message,
            cancellable: true,
            observer,
        };
        let run = invoke(invocation, &token).instrument(span.clone());
        let mut notify = Notify {
            peer: &peer,
            progress_token,
            tool: tool_name,
        };
        let mut run = pin!(drive(run, updates.flatten(), &mut notify));
        let outcome = loop {
            tokio::select! {
                // The tool first: one that watches its token gets to return.
                biased;
                outcome = &mut run => break outcome,
                () = token.cancelled() => return Err(cancelled(&span, &name, &call_id, start)),
                // The client closed the connection, or the server is shutting down: nobody
                // waits for the answer. The call is cancelled as if the client had asked.
                () = self.session.closed.cancelled(), if !token.is_cancelled() => token.cancel(),
            }
        };
        // A cancelled request stays cancelled, whatever the tool made of its token.
        if token.is_cancelled() {
            return Err(cancelled(&span, &name, &call_id, start));
        }
        match outcome {
            Ok(output) => Ok(success(tool.definition(), output, &span)),
            Err(failure) => {
                let result =
                    CallToolResult::error(vec![ContentBlock::text(failure.shown_to_model.clone())]);
                self.report(&span, &failure);
                Ok(result)
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

/// The result of a call that succeeded: the output as text and, for a tool with an output
/// schema, as `structuredContent`.
fn success(definition: &ToolDefinition, output: Value, span: &tracing::Span) -> CallToolResult {
    let (text, structured) = match &definition.output_schema {
        None => (text(output), None),
        Some(schema) => {
            let text = match &output {
                Value::String(text) => text.clone(),
                other => json_text(other),
            };
            match definition::structured(schema, output) {
                Ok(structured) => (text, Some(structured)),
                Err(_) => {
                    tracing::warn!(
                        parent: span,
                        tool = %definition.name,
                        "the tool's output is not an object, as its output schema says: \
                         the result has no structuredContent"
                    );
                    (text, None)
                }
            }
        }
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = structured;
    result
}

/// An output as the text content: a string as it is, anything else as JSON.
fn text(output: Value) -> String {
    match output {
        Value::String(text) => text,
        other => json_text(&other),
    }
}

/// `value` as compact JSON text.
fn json_text(value: &Value) -> String {
    // Writes bytes straight to a buffer, unlike `Display`, which goes through a formatter;
    // a `Value` always serializes.
    serde_json::to_string(value).unwrap_or_default()
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
