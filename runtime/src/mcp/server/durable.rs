//! Durable MCP tasks (features `restate` and `mcp-client`): the tasks an
//! [`McpServer`] answers `#[tool(task)]` calls with, each a Restate
//! workflow, so that a task survives a restart of the server (and of Restate).
//!
//! [`TaskWorkflow`] is the workflow (`McpTask`): its `run` handler makes the call as one
//! journaled step, through the server's own `tools/call` over an in-memory connection, so its
//! answer is exactly what `tools/call` would have sent (a failure written by the disclosure
//! rules; the operator's hooks get the whole error), and Restate keeps that answer. Its
//! `cancel` handler stops the call. [`DurableTasks`] is the server's side: `tools/call` starts
//! the workflow through Restate's ingress, `tasks/get` reads its output, `tasks/cancel` calls
//! `cancel`.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use restate_sdk::prelude::*;
use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, CreateTaskResult, DetailedTask, ErrorData,
    GetTaskResult, JsonObject, Task, TaskPayload, TaskStatus,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::task_manager::current_timestamp;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::McpServer;
use super::result::unknown_task;

/// The workflow's name, as the ingress paths say it.
const WORKFLOW: &str = "McpTask";

/// How long a request to Restate's ingress may take.
const INGRESS_WITHIN: Duration = Duration::from_secs(10);

/// How often a client is asked to poll a durable task.
const POLL_INTERVAL_MS: u64 = 1_000;

/// One call, as the workflow is started with it.
#[derive(Serialize, Deserialize)]
struct TaskCall {
    tool: String,
    arguments: JsonObject,
}

/// The workflow's output: the answer the client is sent for the call.
#[derive(Clone, Serialize, Deserialize)]
struct TaskAnswer {
    created_at: String,
    finished_at: String,
    /// `None` for a call that was cancelled.
    result: Option<CallToolResult>,
}

/// The Restate workflow `McpTask` that runs the calls of a server's `#[tool(task)]` tools
/// durably. Bind it on the service's endpoint, in the process that serves the tools:
///
/// ```no_run
/// use reticent::mcp::{McpServer, TaskWorkflow};
/// use restate_sdk::prelude::*;
///
/// /// Export the ledger; takes minutes.
/// #[reticent::tool(task)]
/// async fn export_ledger() -> String {
///     String::new()
/// }
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let server = McpServer::builder()
///         .tool(ExportLedger)
///         .durable_tasks("http://127.0.0.1:8080") // Restate's ingress
///         .build()?;
///     let endpoint = Endpoint::builder().bind(TaskWorkflow::new(&server)).build();
///     // Serve `endpoint` with restate-sdk's `HttpServer` (feature `http_server`), register
///     // it with Restate, and serve `server` over HTTP.
///     # let _ = endpoint;
///     Ok(())
/// }
/// ```
pub struct TaskWorkflow {
    server: McpServer,
    /// The in-memory connection the calls are made on, made on the first.
    connection: tokio::sync::OnceCell<Connection>,
    /// The calls running in this process, by task id.
    running: Mutex<HashMap<String, CancellationToken>>,
}

/// An rmcp client connected to the server in memory; dropping it closes the connection.
struct Connection {
    client: RunningService<RoleClient, ()>,
    _server: RunningService<rmcp::service::RoleServer, McpServer>,
}

impl std::fmt::Debug for TaskWorkflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskWorkflow")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl TaskWorkflow {
    /// The workflow for the tools of `server`.
    pub fn new(server: &McpServer) -> Self {
        Self {
            server: server.clone(),
            connection: tokio::sync::OnceCell::new(),
            running: Mutex::new(HashMap::new()),
        }
    }

    async fn connection(&self) -> Result<&Connection, HandlerError> {
        self.connection
            .get_or_try_init(|| async {
                let (server_end, client_end) = tokio::io::duplex(64 * 1024);
                let (server, client) =
                    tokio::join!(self.server.clone().serve(server_end), ().serve(client_end));
                let retry = |e: String| HandlerError::from(std::io::Error::other(e));
                Ok(Connection {
                    client: client.map_err(|e| retry(e.to_string()))?,
                    _server: server.map_err(|e| retry(e.to_string()))?,
                })
            })
            .await
    }

    /// Makes the call `call` on the server, stopped when `token` is cancelled: the result
    /// `tools/call` sends, `None` when cancelled. A connection that fails is an error Restate
    /// retries.
    async fn answer(
        &self,
        call: TaskCall,
        token: &CancellationToken,
    ) -> Result<Option<CallToolResult>, HandlerError> {
        let connection = self.connection().await?;
        let params = CallToolRequestParams::new(call.tool).with_arguments(call.arguments);
        // Dropped on cancellation: rmcp sends `notifications/cancelled`, which stops the tool.
        tokio::select! {
            answered = connection.client.peer().call_tool(params) => match answered {
                Ok(result) => Ok(Some(result)),
                Err(rmcp::ServiceError::McpError(error)) => Ok(Some(protocol_error(&error))),
                Err(error) => Err(HandlerError::from(std::io::Error::other(error.to_string()))),
            },
            () = token.cancelled() => Ok(None),
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A protocol error as a tool result, for a call the server refused before it ran: its
/// message is the server's own text, which it writes for clients.
fn protocol_error(error: &ErrorData) -> CallToolResult {
    CallToolResult::error(vec![rmcp::model::ContentBlock::text(
        error.message.to_string(),
    )])
}

#[allow(missing_docs, unreachable_pub)] // what the macro generates
mod workflow {
    use super::*;

    #[restate_sdk::workflow(name = "McpTask")]
    impl TaskWorkflow {
        /// Makes the call as one journaled step; its output is the call's answer.
        #[handler]
        async fn run(
            &self,
            ctx: WorkflowContext<'_>,
            call: Json<TaskCall>,
        ) -> HandlerResult<Json<TaskAnswer>> {
            let created_at = ctx
                .run(|| async { Ok(current_timestamp()) })
                .name("created")
                .await?;
            let id = ctx.key().to_owned();
            let token = CancellationToken::new();
            self.running().insert(id.clone(), token.clone());
            let call = call.into_inner();
            let answered = ctx
                .run(|| async { Ok(Json(self.answer(call, &token).await?)) })
                .name("call")
                .await;
            self.running().remove(&id);
            let Json(result) = answered?;
            let finished_at = ctx
                .run(|| async { Ok(current_timestamp()) })
                .name("finished")
                .await?;
            Ok(Json(TaskAnswer {
                created_at,
                finished_at,
                result,
            }))
        }

        /// Stops the call, when it runs in this process.
        #[handler]
        async fn cancel(&self, ctx: SharedWorkflowContext<'_>) -> HandlerResult<()> {
            if let Some(token) = self.running().get(ctx.key()) {
                token.cancel();
            }
            Ok(())
        }
    }
}

/// The server's side of durable tasks: Restate's ingress, and how long Restate keeps a
/// finished workflow.
pub(crate) struct DurableTasks {
    ingress: String,
    /// `Err` when no HTTP client could be made (its TLS setup): every request then fails.
    http: Result<reqwest::Client, String>,
    retention: Duration,
}

impl DurableTasks {
    pub(crate) fn new(ingress: String, retention: Duration) -> Self {
        let http = crate::http_client::client_builder().and_then(|builder| {
            builder
                .timeout(INGRESS_WITHIN)
                .build()
                .map_err(|e| e.to_string())
        });
        Self {
            ingress: ingress.trim_end_matches('/').to_owned(),
            http,
            retention,
        }
    }

    fn http(&self) -> Result<&reqwest::Client, ErrorData> {
        self.http.as_ref().map_err(|e| unavailable(e))
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.ingress)
    }

    /// Starts the workflow for the call of `request`: the task.
    pub(crate) async fn create(
        &self,
        request: CallToolRequestParams,
    ) -> Result<CreateTaskResult, ErrorData> {
        let id = uuid::Uuid::new_v4().to_string();
        let call = TaskCall {
            tool: request.name.into_owned(),
            arguments: request.arguments.unwrap_or_default(),
        };
        let response = self
            .http()?
            .post(self.url(&format!("/{WORKFLOW}/{id}/run/send")))
            .json(&call)
            .send()
            .await
            .map_err(|e| unavailable(&e))?;
        if !response.status().is_success() {
            return Err(unavailable(&response.status()));
        }
        let now = current_timestamp();
        Ok(CreateTaskResult::new(self.task(
            id,
            TaskStatus::Working,
            now.clone(),
            now,
        )))
    }

    fn task(&self, id: String, status: TaskStatus, created: String, updated: String) -> Task {
        Task::new(id, status, created, updated)
            .with_ttl_ms(u64::try_from(self.retention.as_millis()).unwrap_or(u64::MAX))
            .with_poll_interval_ms(POLL_INTERVAL_MS)
    }

    /// `tasks/get`: the workflow's output once it has one, its result as `tools/call` sends it
    /// to a client of the 2026-07-28 protocol or later (`modern`) or an older one. A task still
    /// running gives the time of the request as its times.
    pub(crate) async fn get(&self, id: &str, modern: bool) -> Result<GetTaskResult, ErrorData> {
        let id = checked(id)?;
        let response = self
            .http()?
            .get(self.url(&format!("/restate/workflow/{WORKFLOW}/{id}/output")))
            .send()
            .await
            .map_err(|e| unavailable(&e))?;
        let status = response.status().as_u16();
        if status == 404 {
            return Err(unknown_task());
        }
        if status == 470 {
            // Not finished yet.
            let now = current_timestamp();
            let task = self.task(id.to_owned(), TaskStatus::Working, now.clone(), now);
            return Ok(GetTaskResult::new(DetailedTask::new(
                task,
                TaskPayload::Working,
            )));
        }
        if !response.status().is_success() {
            return Err(unavailable(&response.status()));
        }
        let answer: TaskAnswer = response.json().await.map_err(|e| unavailable(&e))?;
        let task = self.task(
            id.to_owned(),
            TaskStatus::Completed,
            answer.created_at,
            answer.finished_at,
        );
        let payload = match answer.result {
            Some(mut result) => TaskPayload::Completed {
                result: match serde_json::to_value({
                    if !modern {
                        result.result_type = None;
                    }
                    result
                }) {
                    Ok(serde_json::Value::Object(result)) => result,
                    _ => JsonObject::new(),
                },
            },
            None => TaskPayload::Cancelled,
        };
        Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
    }

    /// `tasks/cancel`: the workflow's `cancel` handler.
    pub(crate) async fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        let id = checked(id)?;
        let response = self
            .http()?
            .post(self.url(&format!("/{WORKFLOW}/{id}/cancel")))
            .send()
            .await
            .map_err(|e| unavailable(&e))?;
        if response.status().is_success() {
            Ok(())
        } else {
            Err(unavailable(&response.status()))
        }
    }
}

/// A task id as this server makes them (a UUID), which is safe in a path; anything else is a
/// task it never made.
fn checked(id: &str) -> Result<&str, ErrorData> {
    uuid::Uuid::try_parse(id)
        .map(|_| id)
        .map_err(|_| unknown_task())
}

/// Restate could not be reached, or refused: the client may try again. What went wrong is
/// logged, not sent.
fn unavailable(error: &dyn std::fmt::Display) -> ErrorData {
    tracing::warn!(%error, "Restate's ingress could not serve a durable MCP task");
    ErrorData::internal_error("the task store is unavailable; try again", None)
}

impl std::fmt::Debug for DurableTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableTasks")
            .field("ingress", &self.ingress)
            .field("retention", &self.retention)
            .finish_non_exhaustive()
    }
}
