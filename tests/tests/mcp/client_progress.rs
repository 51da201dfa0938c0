//! A remote call's progress and log lines reach `McpClient`'s caller, never the model: as
//! `AgentEvent::ToolProgress` and `AgentEvent::ToolLog` on an agent's stream, from reticent's
//! own `McpServer` over HTTP and from the npm reference server `server-everything`'s
//! `trigger-long-running-operation` (`RETICENT_NODE` and `RETICENT_MCP_EVERYTHING`, which
//! `.ci/run` sets; skipped, loudly, without them). And the time-limit rule: progress keeps a
//! call past the client's idle timeout, never past its time limit.

use std::time::Duration;

use reticent::mcp::rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use reticent::mcp::{McpCallError, McpClient, McpServer};
use reticent::{
    Agent, AgentEvent, CancellationToken, ModelResponse, ScriptedModel, ToolContext, ToolError,
    tool::LogLevel,
};
use reticent_tests::mcp::conformance::Suite;
use reticent_tests::mcp::{assert_model_never_saw, run_to_end};
use serde_json::json;
use tokio::net::TcpListener;

const PROGRESS_CANARY: &str = "progress-c4n4ry-51ab";
const LOG_CANARY: &str = "log-c4n4ry-77e0";

/// Reports three steps, with a log line at each.
#[reticent::tool(read_only)]
async fn import_rows(cx: &ToolContext) -> &'static str {
    for step in 1..=3 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let message = format!("row {step} {PROGRESS_CANARY}");
        cx.progress(f64::from(step), 3.0, message.as_str());
        cx.log(
            LogLevel::Warning,
            format_args!("row {step} was odd {LOG_CANARY}"),
        );
    }
    // rmcp hands each notification to a task of its own, and the result straight to the
    // call: a line sent just before the result may reach the client after it, when no call
    // runs to take it (docs/mcp.md). The lines here are sent while the call still runs.
    tokio::time::sleep(Duration::from_millis(300)).await;
    "imported 3 rows"
}

/// Reports progress every 50 ms for `millis`, then returns.
#[reticent::tool(read_only)]
async fn steady(millis: u64, cx: &ToolContext) -> &'static str {
    let mut step = 0.0;
    let deadline = tokio::time::Instant::now() + Duration::from_millis(millis);
    while tokio::time::Instant::now() < deadline {
        step += 1.0;
        cx.progress(step, None, None);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "done"
}

/// Reports once, then goes quiet for a long time.
#[reticent::tool(read_only)]
async fn quiet(cx: &ToolContext) -> &'static str {
    cx.progress(1.0, None, None);
    tokio::time::sleep(Duration::from_secs(30)).await;
    "done"
}

/// Serves the tools over streamable HTTP on loopback until the token is cancelled; the URL.
async fn serve(shutdown: &CancellationToken) -> String {
    let server = McpServer::builder()
        .name("importer")
        .tool(ImportRows)
        .tool(Steady)
        .tool(Quiet)
        .build()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let config = StreamableHttpServerConfig::default().with_cancellation_token(shutdown.clone());
    tokio::spawn(server.serve_http(listener, config));
    url
}

/// The `(progress, total, message)` of each `ToolProgress` event for `tool`.
fn progress(events: &[AgentEvent], tool: &str) -> Vec<(f64, Option<f64>, Option<String>)> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolProgress {
                tool: t,
                progress,
                total,
                message,
                ..
            } if t == tool => Some((*progress, *total, message.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_progress_and_log_lines_reach_the_caller_and_never_the_model() {
    let shutdown = CancellationToken::new();
    let url = serve(&shutdown).await;
    let client = McpClient::builder()
        .log_level(LogLevel::Info)
        .http(url)
        .await
        .unwrap();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "import_rows", json!({})),
        ModelResponse::text("imported"),
    ]);
    let agent = Agent::builder(model.clone())
        .tools(client.tools().await.unwrap())
        .build()
        .unwrap();
    let (events, result) = run_to_end(&agent).await;

    let reported = progress(&events, "import_rows");
    let steps: Vec<(f64, Option<f64>)> = reported.iter().map(|(p, t, _)| (*p, *t)).collect();
    assert_eq!(
        steps,
        [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );
    assert_eq!(
        reported[0].2.as_deref(),
        Some(format!("row 1 {PROGRESS_CANARY}").as_str())
    );
    let logs: Vec<(LogLevel, &str)> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolLog {
                call_id,
                tool,
                level,
                message,
            } if call_id == "c1" && tool == "import_rows" => Some((*level, message.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(logs.len(), 3, "{logs:?}");
    assert_eq!(logs[0].0, LogLevel::Warning);
    // The server names the tool as the line's logger.
    assert_eq!(
        logs[0].1,
        format!("import_rows: row 1 was odd {LOG_CANARY}")
    );

    assert_eq!(result.output, "imported");
    assert_model_never_saw(PROGRESS_CANARY, &result, &model);
    assert_model_never_saw(LOG_CANARY, &result, &model);
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_keeps_a_call_past_its_idle_timeout_but_not_past_its_time_limit() {
    let shutdown = CancellationToken::new();
    let url = serve(&shutdown).await;
    let client = McpClient::builder()
        .idle_timeout(Duration::from_millis(300))
        .timeout(Duration::from_secs(2))
        .http(url)
        .await
        .unwrap();
    let tools = client.tools().await.unwrap();
    let tool = |name: &str| reticent_tests::mcp::find_tool(&tools, name);

    // Progress every 50 ms for three times the idle timeout: the call runs to its end.
    let steady = tool("steady")
        .call(json!({"millis": 900}), ToolContext::new("1", "steady"))
        .await;
    assert_eq!(steady.unwrap(), json!({"result": "done"}));

    // Quiet after one report: ended once it has been quiet for the idle timeout.
    let started = tokio::time::Instant::now();
    let quiet = tool("quiet")
        .call(json!({}), ToolContext::new("2", "quiet"))
        .await;
    let elapsed = started.elapsed();
    let Err(ToolError::Failed(failure)) = quiet else {
        panic!("expected a failure, got {quiet:?}");
    };
    assert_eq!(failure.kind(), McpCallError::TIMED_OUT);
    assert!(
        matches!(
            failure.error().downcast_ref::<McpCallError>(),
            Some(McpCallError::Silent { idle, .. }) if *idle == Duration::from_millis(300)
        ),
        "{failure:?}"
    );
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");

    // Progress that never stops: an agent stops the call at its time limit, the client's
    // timeout, as a timeout.
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "steady", json!({"millis": 60_000})),
        ModelResponse::text("gave up"),
    ]);
    let agent = Agent::builder(model).tools(tools.clone()).build().unwrap();
    let started = tokio::time::Instant::now();
    let (events, result) = run_to_end(&agent).await;
    let elapsed = started.elapsed();
    assert_eq!(result.tool_failures.len(), 1, "{:?}", result.tool_failures);
    assert!(
        result.tool_failures[0].timed_out,
        "{:?}",
        result.tool_failures
    );
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    assert!(
        progress(&events, "steady").len() >= 10,
        "progress came all along"
    );
    shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_of_server_everythings_long_running_operation_reaches_the_caller() {
    let Some(suite) = Suite::find("remote progress from server-everything") else {
        return;
    };
    let Some(everything) = std::env::var_os("RETICENT_MCP_EVERYTHING") else {
        // Set with RETICENT_NODE by .ci/run; Suite::find checked that one.
        panic!("RETICENT_NODE is set, RETICENT_MCP_EVERYTHING is not: .ci/run sets both");
    };
    let mut command = tokio::process::Command::new(&suite.node);
    command
        .arg(everything)
        .arg("stdio")
        .stderr(std::process::Stdio::null());
    let client = McpClient::builder()
        .name("everything")
        .stdio(command)
        .await
        .unwrap();
    let tools = client.tools().await.unwrap();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call(
            "c1",
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}),
        ),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model.clone()).tools(tools).build().unwrap();
    let (events, result) = run_to_end(&agent).await;

    let steps: Vec<(f64, Option<f64>)> = progress(&events, "trigger-long-running-operation")
        .into_iter()
        .map(|(p, t, _)| (p, t))
        .collect();
    // The server sends its last report just before its answer, and rmcp hands each
    // notification to the client's handler in a task of its own while it gives the answer to
    // the waiting call at once: under load the last report can reach the handler after the
    // call has ended, when nothing waits for it. The reports 250 ms apart all arrive.
    let all = [
        (1.0, Some(4.0)),
        (2.0, Some(4.0)),
        (3.0, Some(4.0)),
        (4.0, Some(4.0)),
    ];
    assert!(
        (3..=4).contains(&steps.len()) && steps[..] == all[..steps.len()],
        "{steps:?}"
    );
    assert!(
        result.tool_failures.is_empty(),
        "{:?}",
        result.tool_failures
    );
    // The model sees the result, and nothing of the progress.
    let requests = format!("{:?}", model.requests());
    assert!(requests.contains("Long running operation completed"));
    assert!(!requests.contains("ToolProgress") && !requests.contains("progressToken"));
    client.close().await;
}
