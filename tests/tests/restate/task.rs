//! Durable MCP tasks on a real Restate server: the `restate_tasks` service
//! (`src/bin/restate_tasks.rs`) serves `#[tool(task)]` tools over MCP with `durable_tasks`, and
//! the Restate endpoint that runs their calls. A task started before the service is killed
//! mid-call is followed, after the restart, on a new connection, to its result; a failing
//! task's answer is written by the `tools/call` rules, and its secret is in no answer and not
//! in Restate's journal, while the server's own failure log has it; `tasks/cancel` stops a
//! running call.

use reticent::mcp::McpClient;
use reticent::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, GetTaskParams,
    TaskPayload,
};
use reticent_tests::restate_tasks::{CANARY, HOLD};
use serde_json::{Value, json};

use crate::support::{Desk, Server, eventually, free_ports, scratch};

/// The workflow's name.
const WORKFLOW: &str = "McpTask";

/// Connects to the service's MCP server (declaring the tasks extension, as `McpClient` does),
/// retrying while it starts.
async fn connect(url: &str) -> McpClient {
    eventually("the MCP server to answer", || async {
        McpClient::builder().http(url.to_owned()).await.ok()
    })
    .await
}

/// Calls `tool`, which the server answers with a task: its id.
async fn start(client: &McpClient, tool: &str, arguments: Value) -> String {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let Value::Object(arguments) = arguments {
        params = params.with_arguments(arguments);
    }
    match client.peer().call_tool_once(params).await.unwrap() {
        CallToolResponse::Task(created) => created.task.task_id,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// Polls the task until it completes: its result, and the whole answer as JSON.
async fn completed(client: &McpClient, id: &str) -> (CallToolResult, String) {
    eventually("the task to complete", || async {
        let got = client
            .peer()
            .get_task(GetTaskParams::new(id.to_owned()))
            .await
            .ok()?;
        let json = serde_json::to_string(&got).unwrap();
        match got.task.payload {
            TaskPayload::Completed { result } => {
                Some((serde_json::from_value(Value::Object(result)).unwrap(), json))
            }
            TaskPayload::Working => None,
            other => panic!("the task ended without a result: {other:?}"),
        }
    })
    .await
}

fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("text content").text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_task_survives_a_restart_of_its_server_mid_call() {
    let Some(server) = Server::start("durable MCP tasks across a restart").await else {
        return;
    };
    let dir = scratch("tasks");
    let mcp_port = free_ports(1)[0];
    let mcp_url = format!("http://127.0.0.1:{mcp_port}/mcp");
    let args = vec![
        "--mcp-port".to_owned(),
        mcp_port.to_string(),
        "--ingress".to_owned(),
        server.ingress_url(""),
    ];
    let mut service = Desk::program(env!("CARGO_BIN_EXE_restate_tasks"), args, &dir);
    server.register(&service.uri()).await;

    // The export starts, and hangs.
    std::fs::write(dir.join(HOLD), "").unwrap();
    let client = connect(&mcp_url).await;
    let id = start(&client, "export_ledger", json!({"rows": 9})).await;
    eventually("the export to start", || async {
        (service.lines("exports.log") == ["started"]).then_some(())
    })
    .await;
    let working = client
        .peer()
        .get_task(GetTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert!(
        matches!(working.task.payload, TaskPayload::Working),
        "{working:?}"
    );

    // The server dies mid-call, and comes back: Restate runs the call's step again.
    drop(client);
    service.kill().await;
    std::fs::remove_file(dir.join(HOLD)).unwrap();
    service.restart().await;

    // A new connection follows the same task to its result.
    let client = connect(&mcp_url).await;
    let (result, _) = completed(&client, &id).await;
    assert_eq!(text(&result), "exported 9 rows");
    assert_ne!(result.is_error, Some(true));
    // The step cut off by the crash ran again: a task's call is run at least once.
    assert_eq!(service.lines("exports.log"), ["started", "started", "done"]);

    // A failing task: the tools/call rules, and the secret nowhere but the server's own log.
    let failing = start(&client, "export_to_store", json!({})).await;
    let (result, answer) = completed(&client, &failing).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        "Tool 'export_to_store' failed with StoreError"
    );
    assert!(!answer.contains(CANARY), "{answer}");
    let invocation = server.invocation_of(WORKFLOW, &failing).await;
    let journal = server.journal(&invocation).await.join("\n");
    assert!(
        journal.contains("Tool 'export_to_store' failed with StoreError"),
        "{journal}"
    );
    assert!(!journal.contains(CANARY), "{journal}");
    let failures = service.lines("failures.log");
    assert!(
        failures.iter().any(|line| line.contains(CANARY)),
        "{failures:?}"
    );

    // tasks/cancel stops a running call; the task ends cancelled.
    std::fs::write(dir.join(HOLD), "").unwrap();
    let held = start(&client, "export_ledger", json!({"rows": 1})).await;
    eventually("the second export to start", || async {
        (service.lines("exports.log").len() == 4).then_some(())
    })
    .await;
    client
        .peer()
        .cancel_task(CancelTaskParams::new(held.clone()))
        .await
        .unwrap();
    eventually("the task to end cancelled", || async {
        let got = client
            .peer()
            .get_task(GetTaskParams::new(held.clone()))
            .await
            .ok()?;
        matches!(got.task.payload, TaskPayload::Cancelled).then_some(())
    })
    .await;
    // Stopped, not finished: the hold was never lifted.
    assert_eq!(
        service.lines("exports.log"),
        ["started", "started", "done", "started"]
    );

    // A task this server never made is not one.
    let unknown = client
        .peer()
        .get_task(GetTaskParams::new("not-a-task".to_owned()))
        .await;
    assert!(unknown.is_err(), "{unknown:?}");
    drop(server);
}
