//! The MCP side of a call: `tools/list`, and `tools/call` run through the agent loop's
//! [`invoke`], with the failure reported to the operator and the rendered text to the client.

use std::error::Error as StdError;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, ErrorData, Implementation, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use tokio::time::Instant;
use tracing::Instrument;
use tracing::field::Empty;

use super::McpServer;
use crate::agent::exec::{Outcome, invoke};
use crate::agent::{ToolFailure, UnknownTool, kinds};
use crate::model::ToolCall;
use crate::render;

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let inner = &self.inner;
        let info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
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

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        let index = *self.inner.index.get(name)?;
        self.inner.listed.get(index).cloned()
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
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                request.method,
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

/// How a call that was not cancelled failed.
struct Failed {
    kind: String,
    error: Arc<dyn StdError + Send + Sync>,
    timed_out: bool,
    text: String,
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
        let call = ToolCall::new(context.id.to_string(), name, arguments);
        let name = render::bounded(&call.name, render::MAX_NAME_LEN);
        let span = tracing::info_span!(
            "execute_tool",
            otel.name = format!("execute_tool {name}"),
            otel.status_code = Empty,
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %name,
            gen_ai.tool.call.id = %call.id,
            gen_ai.tool.type = "function",
            error.type = Empty,
            error.message = Empty,
            reticent.tool.timed_out = Empty,
            reticent.tool.cancelled = Empty,
        );
        let start = Instant::now();

        let Some((name, &index)) = inner.index.get_key_value(call.name.as_str()) else {
            let available: Vec<&str> = self.tool_names().collect();
            let text = render::unknown_tool(&call.name, &available);
            let error = UnknownTool {
                name: call.name.clone(),
            };
            let failed = Failed {
                kind: kinds::UNKNOWN_TOOL.to_owned(),
                error: Arc::new(error),
                timed_out: false,
                text: text.clone(),
            };
            self.report(&span, call, failed, start.elapsed());
            // The protocol's answer to an unknown tool is an error, not a tool result.
            return Err(ErrorData::invalid_params(text, None));
        };
        let tool = &*inner.tools[index];

        // The request's token is the run token: its child is the tool's, so the client's
        // `notifications/cancelled` reaches the tool.
        let token = context.ct;
        let run = invoke(
            tool,
            name,
            &call,
            &token,
            inner.timeout,
            inner.include_error_message,
        )
        .instrument(span.clone());
        let outcome = tokio::select! {
            // The tool first: one that watches its token gets to return.
            biased;
            outcome = run => outcome,
            () = token.cancelled() => return Err(cancelled(&span, &call, start.elapsed())),
        };
        // A cancelled request stays cancelled, whatever the tool made of its token.
        if token.is_cancelled() {
            return Err(cancelled(&span, &call, start.elapsed()));
        }
        match outcome {
            Outcome::Success { content } => {
                Ok(CallToolResult::success(vec![ContentBlock::text(content)]))
            }
            Outcome::Failure {
                kind,
                error,
                timed_out,
                text,
                ..
            } => {
                let result = CallToolResult::error(vec![ContentBlock::text(text.clone())]);
                let failed = Failed {
                    kind,
                    error,
                    timed_out,
                    text,
                };
                self.report(&span, call, failed, start.elapsed());
                Ok(result)
            }
        }
    }

    /// Gives the full error to the server side: the span and every hook.
    fn report(&self, span: &tracing::Span, call: ToolCall, failed: Failed, elapsed: Duration) {
        let failure = ToolFailure {
            tool: call.name,
            call_id: call.id,
            arguments: call.arguments,
            kind: failed.kind,
            error: failed.error,
            timed_out: failed.timed_out,
            elapsed,
            shown_to_model: failed.text,
        };
        span.record("otel.status_code", "ERROR");
        span.record("error.type", failure.kind.as_str());
        // The whole message with its sources, as the agent loop records it.
        span.record("error.message", failure.error_chain());
        span.record("reticent.tool.timed_out", failure.timed_out);
        for hook in &self.inner.on_failure {
            if std::panic::catch_unwind(AssertUnwindSafe(|| hook(&failure))).is_err() {
                tracing::error!(
                    parent: span,
                    tool = %failure.tool,
                    call_id = %failure.call_id,
                    "an on_failure hook panicked"
                );
            }
        }
    }
}

/// Records a call the client cancelled. Not a failure: no hook hears of it. The reply is
/// dropped by the transport, as the protocol says.
fn cancelled(span: &tracing::Span, call: &ToolCall, elapsed: Duration) -> ErrorData {
    span.record("reticent.tool.cancelled", true);
    tracing::info!(
        parent: span,
        tool = %render::bounded(&call.name, render::MAX_NAME_LEN),
        call_id = %call.id,
        elapsed = ?elapsed,
        "the client cancelled the call; the tool was stopped"
    );
    ErrorData::new(ErrorCode::INTERNAL_ERROR, "the request was cancelled", None)
}
