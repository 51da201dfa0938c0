//! The MCP server's handler: `initialize`, `tools/list`, the client's log level, and `tools/call`
//! (also when its `arguments` is not an object), answered by [`CallTool`] — or, for a
//! `#[tool(task)]` tool, with a task (`task.rs`), followed with `tasks/get` and `tasks/cancel`.

use std::future::Future;

use rmcp::ServerHandler;
#[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CustomRequest,
    CustomResult, ErrorCode, ErrorData, GetTaskParams, GetTaskResult, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};

use super::McpServer;
use super::call::CallTool;
use super::session::modern;
use super::task;
use crate::render;

impl ServerHandler for McpServer {
    #[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
    fn get_info(&self) -> ServerConfig {
        let inner = &self.inner;
        // Logging: tools' log lines (`ToolContext::log`), for clients that ask for them.
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging();
        // Tasks: for the calls of `#[tool(task)]` tools, when there are any.
        let capabilities = if inner.tasks.is_some() {
            capabilities.enable_tasks().build()
        } else {
            capabilities.build()
        };
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

    // Inlined into the caller (rmcp's dispatch, generic over the handler, as rmcp's own
    // `#[tool_handler]` code is): a call, and a copy of the 300-byte future, fewer per request.
    #[inline]
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + '_ {
        if let Some(store) = &self.inner.tasks
            && task::wanted(self, &request, &context)
        {
            // The same future, going on from the start: one future type, and no choice
            // between two to make at each poll of the plain call.
            return CallTool::going(
                self,
                Box::pin(async move {
                    let created = task::start(self, store, request, context).await;
                    created.map(CallToolResponse::Task)
                }),
            );
        }
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
        CallTool::<CallToolResponse>::new(
            self,
            // A name the request borrows (made in process) is not copied.
            request.name,
            arguments,
            context,
        )
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        task::of(self)?
            .get(&request.task_id, modern(&context))
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        task::of(self)?.cancel(&request.task_id).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        task::of(self)?.update(&request.task_id).await
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
        let modern = modern(&context);
        let mut result =
            CallTool::<CallToolResult>::new(self, name.into(), arguments, context).await?;
        if !modern {
            // As rmcp does for the results it sends itself.
            result.result_type = None;
        }
        let result = serde_json::to_value(result)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(CustomResult::new(result))
    }
}
