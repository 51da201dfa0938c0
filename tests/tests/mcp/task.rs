//! Long-running tools as MCP tasks: a `#[tool(task)]` tool, served to a client that declares
//! the tasks extension, answers `tools/call` with a task the client follows with `tasks/get`;
//! its failure is written by the same rules as `tools/call`'s, and a withheld message is in no
//! byte the client receives; `tasks/cancel` stops it; the server forgets it when its time to
//! live is over, and keeps at most so many. `McpClient` follows such a task to its end, with its
//! progress, and cancels it when the call is abandoned.

use std::error::Error as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reticent::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, GetTaskParams, GetTaskResult, Implementation, TaskPayload, TaskStatus,
};
use reticent::mcp::rmcp::service::{Peer, RoleClient, RoleServer, RunningService};
use reticent::mcp::{McpCallError, McpClient, McpServer, McpToolError};
use reticent::testing::McpConnection;
use reticent::{
    Agent, AgentEvent, ArgumentError, ModelResponse, ScriptedModel, ToolContext, ToolError,
};
use reticent_tests::mcp::{Failures, assert_model_never_saw, connect, find_tool, run_to_end, text};
use serde_json::{Value, json};

const CANARY: &str = "task-c4n4ry-9d2e-s3://ledger-exports/acme/sig-0f1e";

#[derive(Debug, thiserror::Error)]
#[error("export store refused the upload to {0}")]
struct ExportError(String);

/// Export the ledger: three steps, each reported as progress.
#[reticent::tool(task, read_only)]
async fn export_ledger(
    /// How many rows.
    rows: u32,
    cx: &ToolContext,
) -> String {
    for step in 1..=3 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cx.progress(f64::from(step), 3.0, None);
    }
    format!("exported {rows} rows")
}

/// Export the ledger to the store, which refuses it (the message holds a secret).
#[reticent::tool(task)]
async fn export_to_store() -> Result<String, ExportError> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    Err(ExportError(CANARY.to_owned()))
}

/// Export a month, which must be written YYYY-MM.
#[reticent::tool(task, read_only)]
async fn export_month(
    /// The month, like 2026-11.
    month: String,
) -> Result<String, ArgumentError> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    Err(ArgumentError::new(format!(
        "no month {month}; months look like 2026-11"
    )))
}

/// Tools that export until cancelled, counting the calls whose token was cancelled: each test
/// has its own count.
#[derive(Default)]
struct Endless {
    stopped: AtomicUsize,
}

#[reticent::tools]
impl Endless {
    /// Export until cancelled.
    #[tool(task, read_only)]
    async fn export_forever(&self, cx: &ToolContext) -> String {
        cx.cancellation().cancelled().await;
        self.stopped.fetch_add(1, Ordering::SeqCst);
        "stopped".to_owned()
    }
}

/// rmcp's client, declaring the tasks extension, connected to `server` in memory; every byte
/// it received.
struct TaskClient(McpConnection<ClientConfig>);

impl TaskClient {
    async fn connect(server: McpServer) -> Self {
        let config = ClientConfig::new(
            ClientCapabilities::builder().enable_tasks().build(),
            Implementation::new("task-test", "1.0.0"),
        );
        Self(McpConnection::connect_as(server, config).await.unwrap())
    }

    fn peer(&self) -> &Peer<RoleClient> {
        self.0.client.peer()
    }

    /// Calls `tool`, which the server must answer with a task; the task's id.
    async fn start(&self, tool: &str, arguments: Value) -> String {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        match self.peer().call_tool_once(params).await.unwrap() {
            CallToolResponse::Task(created) => {
                assert_eq!(created.task.status, TaskStatus::Working);
                assert!(created.task.ttl_ms.is_some(), "{created:?}");
                created.task.task_id
            }
            other => panic!("expected a task, got {other:?}"),
        }
    }

    async fn get(&self, id: &str) -> GetTaskResult {
        self.peer()
            .get_task(GetTaskParams::new(id.to_owned()))
            .await
            .unwrap()
    }

    /// Polls the task until it ends (within 10 seconds); its last state.
    async fn until_done(&self, id: &str) -> GetTaskResult {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.get(id).await;
            if got.task.status().is_terminal() {
                return got;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the task never ended"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn received(&self) -> String {
        self.0.received()
    }
}

/// The result a completed task holds.
fn result(got: GetTaskResult) -> CallToolResult {
    match got.task.payload {
        TaskPayload::Completed { result } => serde_json::from_value(Value::Object(result)).unwrap(),
        other => panic!("expected a completed task, got {other:?}"),
    }
}

/// Waits until `counter` reaches `at_least` (within 5 seconds).
async fn until_counted(counter: &AtomicUsize, at_least: usize) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while counter.load(Ordering::SeqCst) < at_least {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the tool was never stopped"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The ledger's tools, `endless`'s among them.
fn server(failures: &Failures, endless: &Arc<Endless>) -> McpServer {
    McpServer::builder()
        .name("ledger")
        .tool(ExportLedger)
        .tool(ExportToStore)
        .tool(ExportMonth)
        .toolbox(Arc::clone(endless))
        .on_failure(failures.hook())
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_task_tool_answers_a_client_with_tasks_with_a_task_it_follows() {
    let failures = Failures::default();
    let connection = TaskClient::connect(server(&failures, &Arc::default())).await;
    let info = connection.peer().peer_info().unwrap();
    assert!(info.capabilities.supports_tasks(), "{info:?}");

    let id = connection.start("export_ledger", json!({"rows": 7})).await;
    let running = connection.get(&id).await;
    assert_eq!(running.task.status(), TaskStatus::Working);
    let done = connection.until_done(&id).await;
    assert_eq!(done.task.status(), TaskStatus::Completed);
    let result = result(done);
    assert_eq!(text(&result), "exported 7 rows");
    assert_ne!(result.is_error, Some(true));
    assert!(failures.all().is_empty());

    // A task that is not kept is a protocol error.
    let unknown = connection
        .peer()
        .get_task(GetTaskParams::new("no-such-task".to_owned()))
        .await;
    assert!(unknown.is_err(), "{unknown:?}");

    // A client without the tasks extension is answered as for any tool.
    let plain = connect(server(&failures, &Arc::default())).await;
    let result = plain
        .client
        .call_tool(
            CallToolRequestParams::new("export_ledger")
                .with_arguments(json!({"rows": 2}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(text(&result), "exported 2 rows");
}

#[tokio::test]
async fn a_failed_task_is_disclosed_by_the_tools_call_rules_and_never_holds_the_secret() {
    let failures = Failures::default();
    let connection = TaskClient::connect(server(&failures, &Arc::default())).await;

    let id = connection.start("export_to_store", json!({})).await;
    let done = connection.until_done(&id).await;
    // A tool's failure is a result with `isError`, as tools/call sends it: the task completed.
    assert_eq!(done.task.status(), TaskStatus::Completed);
    let from_task = result(done);
    assert_eq!(from_task.is_error, Some(true));
    assert_eq!(
        text(&from_task),
        "Tool 'export_to_store' failed with ExportError"
    );

    // An argument error is shown in full, as tools/call shows it.
    let id = connection
        .start("export_month", json!({"month": "November"}))
        .await;
    let month = result(connection.until_done(&id).await);
    assert_eq!(month.is_error, Some(true));
    assert_eq!(
        text(&month),
        "Invalid arguments for tool 'export_month': no month November; months look like 2026-11"
    );

    // Exactly the result tools/call gives a client without tasks.
    let plain = connect(server(&Failures::default(), &Arc::default())).await;
    let inline = plain
        .client
        .call_tool(CallToolRequestParams::new("export_to_store"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&inline).unwrap(),
        serde_json::to_value(&from_task).unwrap()
    );

    // No byte the client received holds the secret; the operator's hook has all of it.
    let received = connection.received();
    assert!(received.contains("failed with ExportError"), "{received}");
    assert!(!received.contains(CANARY), "{received}");
    let failed: Vec<_> = failures
        .all()
        .into_iter()
        .filter(|f| f.tool == "export_to_store")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert!(failed[0].error_chain().contains(CANARY), "{failed:#?}");
    assert_eq!(
        failed[0].shown_to_model,
        "Tool 'export_to_store' failed with ExportError"
    );
}

#[tokio::test]
async fn tasks_cancel_stops_the_tool_and_the_task_ends_cancelled() {
    let failures = Failures::default();
    let endless = Arc::new(Endless::default());
    let connection = TaskClient::connect(server(&failures, &endless)).await;

    let id = connection.start("export_forever", json!({})).await;
    assert_eq!(connection.get(&id).await.task.status(), TaskStatus::Working);
    connection
        .peer()
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    until_counted(&endless.stopped, 1).await;
    let done = connection.until_done(&id).await;
    assert_eq!(done.task.status(), TaskStatus::Cancelled);
    // A cancelled call is not a failure.
    assert!(failures.all().is_empty(), "{:#?}", failures.all());
}

#[tokio::test]
async fn a_task_is_forgotten_when_its_time_to_live_is_over_and_the_server_keeps_at_most_so_many() {
    let endless = Arc::new(Endless::default());
    let server = McpServer::builder()
        .toolbox(Arc::clone(&endless))
        .tool(ExportLedger)
        .task_ttl(Duration::from_millis(800))
        .max_tasks(1)
        .build()
        .unwrap();
    let connection = TaskClient::connect(server).await;

    let id = connection.start("export_forever", json!({})).await;
    let got = connection.get(&id).await;
    assert_eq!(got.task.task.ttl_ms, Some(800));

    // The server holds its one task, still running: another call is refused.
    let refused = connection
        .peer()
        .call_tool_once(
            CallToolRequestParams::new("export_ledger")
                .with_arguments(json!({"rows": 1}).as_object().unwrap().clone()),
        )
        .await;
    let error = format!("{:?}", refused.unwrap_err());
    assert!(error.contains("maximum of 1 tasks"), "{error}");

    // Its time is up: the tool is stopped, and the task is forgotten.
    until_counted(&endless.stopped, 1).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let got = connection
            .peer()
            .get_task(GetTaskParams::new(id.clone()))
            .await;
        if got.is_err() {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "never forgotten");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // A finished task is kept until its time is up, then forgotten too.
    let id = connection.start("export_ledger", json!({"rows": 1})).await;
    let done = connection.until_done(&id).await;
    assert_eq!(done.task.status(), TaskStatus::Completed);
    tokio::time::sleep(Duration::from_millis(900)).await;
    let forgotten = connection.peer().get_task(GetTaskParams::new(id)).await;
    assert!(forgotten.is_err(), "{forgotten:?}");
}

/// `McpClient` connected to `server` in memory.
async fn mcp_client(
    server: McpServer,
    timeout: Duration,
) -> (McpClient, RunningService<RoleServer, McpServer>) {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (served, client) = tokio::join!(
        server.serve(server_end),
        McpClient::builder()
            .name("ledger")
            .timeout(timeout)
            .connect(client_end)
    );
    (client.unwrap(), served.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_client_follows_a_task_to_its_end_and_its_progress_reaches_the_caller() {
    let failures = Failures::default();
    let (client, _served) =
        mcp_client(server(&failures, &Arc::default()), Duration::from_secs(30)).await;
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "export_ledger", json!({"rows": 12})),
        ModelResponse::tool_call("c2", "export_to_store", json!({})),
        ModelResponse::text("exported"),
    ]);
    let agent = Agent::builder(model.clone())
        .tools(client.tools().await.unwrap())
        .build()
        .unwrap();
    let (events, result) = run_to_end(&agent).await;

    // The output reached the model.
    let requests = serde_json::to_string(&model.requests()).unwrap();
    assert!(requests.contains("exported 12 rows"), "{requests}");
    // The progress reached the caller, never the model.
    let progress: Vec<f64> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolProgress { tool, progress, .. } if tool == "export_ledger" => {
                Some(*progress)
            }
            _ => None,
        })
        .collect();
    assert!(!progress.is_empty(), "{events:?}");
    assert!(!requests.contains("progressToken"));

    // The failed task: the model saw the kind, the caller got the server's text (already
    // withheld by the server), and the server's operator the secret.
    assert_eq!(result.tool_failures.len(), 1, "{:#?}", result.tool_failures);
    let failure = &result.tool_failures[0];
    assert_eq!(
        failure.shown_to_model,
        "Tool 'export_to_store' failed with McpToolError"
    );
    let error = failure.error.downcast_ref::<McpToolError>().unwrap();
    assert_eq!(
        error.content(),
        "Tool 'export_to_store' failed with ExportError"
    );
    assert_model_never_saw(CANARY, &result, &model);
    assert!(failures.one().error_chain().contains(CANARY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_client_cancels_a_task_it_abandons_or_that_runs_out_of_time() {
    let endless = Arc::new(Endless::default());
    let server = McpServer::builder()
        .toolbox(Arc::clone(&endless))
        .tool(ExportLedger)
        .max_tasks(1)
        .build()
        .unwrap();
    let (client, _served) = mcp_client(server, Duration::from_millis(300)).await;
    let tools = client.tools().await.unwrap();
    let tool = find_tool(&tools, "export_forever");

    // Out of time: the call gives up a second after the client's limit, and the task, whose
    // request was answered long before, is stopped with tasks/cancel.
    let error = tool
        .call(json!({}), ToolContext::default())
        .await
        .unwrap_err();
    let ToolError::Failed(failure) = error else {
        panic!("expected a failure")
    };
    let error = failure.error().downcast_ref::<McpCallError>().unwrap();
    assert!(matches!(error, McpCallError::TimedOut { .. }), "{error:?}");
    until_counted(&endless.stopped, 1).await;

    // Abandoned: the call's future is dropped while the task runs.
    let running = tokio::spawn({
        let tool = Arc::clone(&tool);
        async move { tool.call(json!({}), ToolContext::default()).await }
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    // The server keeps one task at most, and this call's still runs: `McpClient`'s calls of
    // a task tool are tasks.
    let ledger = find_tool(&tools, "export_ledger");
    let refused = ledger
        .call(json!({"rows": 1}), ToolContext::default())
        .await;
    let ToolError::Failed(failure) = refused.unwrap_err() else {
        panic!("expected a failure")
    };
    assert_eq!(failure.kind(), McpCallError::PROTOCOL);
    let mut chain = failure.error().to_string();
    let mut source = failure.error().source();
    while let Some(error) = source {
        chain = format!("{chain}: {error}");
        source = error.source();
    }
    assert!(chain.contains("maximum of 1 tasks"), "{chain}");
    running.abort();
    until_counted(&endless.stopped, 2).await;
}
