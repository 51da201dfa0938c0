//! `McpClient` against a server nobody here wrote: the official MCP Python SDK's high-level
//! server (`MCPServer`, formerly `FastMCP`) in `tests/mcp_client/fastmcp_server.py`, over stdio
//! and over streamable HTTP. An agent on `ScriptedModel` uses its tools; a failing tool's
//! secret (`hunter2`) must reach the caller and never the model.
//!
//! Needs the SDK's virtual environment (see `reticent_tests::mcp::python`); `RETICENT_SKIP_PYTHON=1`
//! skips these tests, loudly.

use std::sync::Arc;
use std::time::Duration;

use reticent::mcp::{McpCallError, McpClient, McpClientBuilder, McpClientError, McpToolError};
use reticent::{
    Agent, AgentError, AgentResult, CancellationToken, ModelResponse, RunOptions, ScriptedModel,
    StopReason, Tool, ToolCall, ToolContext, ToolError, ToolFailureOptions,
    failures::EffectOutcome,
};
use reticent_tests::mcp::python::{script, serve_http};
use reticent_tests::mcp::{
    assert_model_never_saw, call_tool, find_tool, process_ended, run_agent, wait_until_ended,
};
use reticent_tests::transcript::{shown_texts, shown_unfenced};
use serde_json::{Value, json};

/// In the message of every failing tool of the server.
const CANARY: &str = "hunter2";

/// The command that starts the Python server with `args`, or `None` when the Python tests
/// are skipped.
fn server(args: &[&str]) -> Option<tokio::process::Command> {
    script(
        "reticent's MCP client (McpClient)",
        "tests/mcp_client/fastmcp_server.py",
        args,
    )
}

/// Connects `builder` to the server over stdio, or `None` when the Python tests are skipped.
async fn stdio(builder: McpClientBuilder, args: &[&str]) -> Option<McpClient> {
    let command = server(args)?;
    Some(
        builder
            .stdio(command)
            .await
            .expect("the Python server starts"),
    )
}

/// The Python server serving streamable HTTP on a loopback port, and its URL. Dropping the
/// child kills it.
async fn http_server() -> Option<(tokio::process::Child, String)> {
    Some(serve_http(server(&["--http"])?).await)
}

/// Calls a tool that must succeed.
async fn call(tools: &[Arc<dyn Tool>], name: &str, arguments: Value) -> Value {
    call_tool(tools, name, arguments)
        .await
        .unwrap_or_else(|e| panic!("{name} failed: {e:?}"))
}

/// Calls a tool that must fail.
async fn call_err(tools: &[Arc<dyn Tool>], name: &str, arguments: Value) -> ToolError {
    call_tool(tools, name, arguments)
        .await
        .expect_err("the call fails")
}

/// How many calls of `slow` the server saw cancelled, once it is at least `at_least` (or
/// after five seconds).
async fn cancellations(tools: &[Arc<dyn Tool>], at_least: i64) -> i64 {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let count = call(tools, "cancellations", json!({})).await["result"]
            .as_i64()
            .expect("a count");
        if count >= at_least || tokio::time::Instant::now() >= deadline {
            return count;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A run in which one remote tool succeeds and three fail: with a tool error holding the
/// canary, with an exception the SDK keeps to itself, and with a protocol error holding the
/// canary. The model sees kinds; the caller gets every text.
async fn run_with_failing_tools(client: &McpClient) {
    let responses = vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "add", json!({"a": 2, "b": 3})),
            ToolCall::new(
                "c2",
                "query_db",
                json!({"sql": "select count(*) from orders"}),
            ),
        ]),
        ModelResponse::tool_calls(vec![
            ToolCall::new("c3", "crash", json!({})),
            ToolCall::new("c4", "upstream", json!({})),
        ]),
        ModelResponse::text("The orders database is unavailable."),
    ];
    let tools = client.tools().await.expect("the tools are listed");
    let (result, model) = run_agent(responses, tools, |b| b.max_consecutive_failures(10)).await;
    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(
        shown_unfenced(&result.messages),
        [
            // `add` returns an int: the SDK sends `{"result": 5}` as its structured content.
            r#"{"result":5}"#,
            "Tool 'query_db' failed with McpToolError",
            "Tool 'crash' failed with McpToolError",
            "Tool 'upstream' failed with McpProtocolError",
        ]
    );
    // A remote tool's output is untrusted unless the client says otherwise: it is fenced.
    assert!(shown_texts(&result.messages)[0].starts_with("<untrusted_output boundary=\""));
    assert_model_never_saw(CANARY, &result, &model);

    let failures = &result.tool_failures;
    assert_eq!(failures.len(), 3, "{failures:#?}");
    let query = &failures[0];
    assert_eq!(
        (query.tool.as_str(), query.kind.as_str()),
        ("query_db", "McpToolError")
    );
    let error = query
        .error
        .downcast_ref::<McpToolError>()
        .expect("a tool error is an McpToolError");
    assert_eq!(error.tool(), "query_db");
    assert_eq!(error.server(), "py-tools");
    assert!(
        error.content().contains("db password=hunter2 rejected"),
        "the caller gets the server's text: {error:?}"
    );
    assert_eq!(error.to_string(), error.content());

    // The SDK itself withholds an unexpected exception's text.
    let crash = failures[1].error.downcast_ref::<McpToolError>().unwrap();
    assert_eq!(crash.content(), "Error executing tool crash");

    let upstream = &failures[2];
    assert_eq!(upstream.kind, "McpProtocolError");
    assert!(matches!(
        upstream.error.downcast_ref::<McpCallError>(),
        Some(McpCallError::Protocol { tool, .. }) if tool == "upstream"
    ));
    assert!(
        upstream
            .error_chain()
            .contains("upstream refused: db password=hunter2 rejected"),
        "{}",
        upstream.error_chain()
    );
}

#[tokio::test]
async fn the_servers_tools_keep_their_description_schema_and_hints() {
    let Some(client) = stdio(McpClient::builder(), &[]).await else {
        return;
    };
    assert_eq!(client.name(), "py-tools");
    assert!(client.pid().is_some());
    let tools = client.tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.definition().name.as_str()).collect();
    for name in ["add", "query_db", "slow", "forecast", "chart", "die"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }

    let add = find_tool(&tools, "add");
    let definition = add.definition();
    assert_eq!(definition.description, "Add two integers.");
    assert_eq!(definition.parameters["type"], "object");
    assert_eq!(definition.parameters["properties"]["a"]["type"], "integer");
    let hints = definition.annotations;
    // readOnlyHint and openWorldHint as sent; destructive does not apply to a read-only tool.
    assert!(hints.read_only && !hints.destructive && !hints.idempotent && !hints.open_world);

    // No annotations at all: MCP's defaults, destructive and open-world.
    let query = find_tool(&tools, "query_db").definition().annotations;
    assert!(!query.read_only && query.destructive && !query.idempotent && query.open_world);

    let slow = find_tool(&tools, "slow").definition().annotations;
    assert!(slow.read_only && slow.idempotent && slow.open_world);

    // Untrusted by default, whatever the hints say.
    assert!(tools.iter().all(|t| t.untrusted_output()));
    // The client's default limit of a call.
    assert_eq!(add.timeout(), Some(Duration::from_secs(60)));
}

#[tokio::test]
async fn a_failing_remote_tool_tells_the_model_its_kind_and_the_caller_its_text() {
    let Some(client) = stdio(McpClient::builder(), &[]).await else {
        return;
    };
    run_with_failing_tools(&client).await;
}

#[tokio::test]
async fn the_same_over_streamable_http() {
    let Some((_server, url)) = http_server().await else {
        return;
    };
    let client = McpClient::http(&url).await.expect("connects over HTTP");
    assert_eq!(client.pid(), None);
    run_with_failing_tools(&client).await;

    let tools = client.tools().await.unwrap();
    assert_eq!(
        call(&tools, "forecast", json!({"city": "Oslo"})).await["city"],
        "Oslo"
    );
    let refused = call_err(&tools, "add", json!({"a": "two", "b": 3})).await;
    assert!(refused.is_argument(), "{refused:?}");
    client.close().await;
}

#[tokio::test]
async fn include_error_message_shows_the_tool_error_bounded_and_taints_the_run() {
    let builder = McpClient::builder().include_error_message(true);
    let Some(client) = stdio(builder, &[]).await else {
        return;
    };
    let responses = vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "query_db", json!({"sql": "select 1"})),
            ToolCall::new("c2", "upstream", json!({})),
            ToolCall::new("c3", "explain", json!({"sql": "select 1"})),
        ]),
        ModelResponse::text("done"),
    ];
    let (result, _) = run_agent(responses, client.tools().await.unwrap(), |b| b).await;
    let shown = shown_texts(&result.messages);
    assert_eq!(
        shown[0],
        "Tool 'query_db' failed with McpToolError: Error executing tool query_db: \
         db password=hunter2 rejected"
    );
    // Protocol errors stay kinds: the opt-in is for the tools' own errors.
    assert_eq!(shown[1], "Tool 'upstream' failed with McpProtocolError");
    // A long text is cut to a bounded length.
    let long = shown[2];
    assert!(
        long.starts_with(
            "Tool 'explain' failed with McpToolError: Error executing tool explain: plan: seq scan"
        ),
        "{long}"
    );
    assert!(
        long.contains("bytes cut") && long.len() < 600,
        "{} bytes: {long}",
        long.len()
    );
    // The server's text entered the transcript: the run is tainted by those calls alone.
    assert_eq!(result.tainted_by, ["c1", "c3"]);
}

#[tokio::test]
async fn a_failure_kind_of_the_developers_choosing() {
    let builder = McpClient::builder().failure_kind("OrdersDbError");
    let Some(client) = stdio(builder, &[]).await else {
        return;
    };
    let tools = client.tools().await.unwrap();
    let error = call_err(&tools, "query_db", json!({"sql": "select 1"})).await;
    assert_eq!(error.kind(), "OrdersDbError");
    assert_eq!(
        error.model_text("query_db", false),
        "Tool 'query_db' failed with OrdersDbError"
    );
}

#[tokio::test]
async fn arguments_are_checked_against_the_schema_before_the_call() {
    let Some(client) = stdio(McpClient::builder(), &[]).await else {
        return;
    };
    let responses = vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "add", json!({"a": "two"})),
            ToolCall::new("c2", "forecast", json!({"city": ["Oslo"], "days": "x"})),
        ]),
        ModelResponse::tool_call("c3", "add", json!({"a": 2, "b": 2})),
        ModelResponse::text("4"),
    ];
    let tools = client.tools().await.unwrap();
    let (result, _) = run_agent(responses, tools.clone(), |b| b).await;
    // The path and the constraint, in full: the model's own mistake.
    assert_eq!(
        shown_unfenced(&result.messages),
        [
            "Invalid arguments for tool 'add': \"b\" is a required property; \
             argument `a`: \"two\" is not of type \"integer\"",
            "Invalid arguments for tool 'forecast': argument `city`: [\"Oslo\"] is not of type \
             \"string\"; argument `days`: \"x\" is not of type \"integer\"",
            r#"{"result":4}"#,
        ]
    );
    assert!(result.tool_failures.iter().all(|f| f.kind == "argument"));
    // Only the valid call reached the server.
    assert_eq!(call(&tools, "additions", json!({})).await["result"], 1);
}

#[tokio::test]
async fn structured_content_is_the_output_and_other_content_is_described() {
    let Some(client) = stdio(McpClient::builder(), &[]).await else {
        return;
    };
    let tools = client.tools().await.unwrap();
    assert_eq!(
        call(&tools, "forecast", json!({"city": "Oslo"})).await,
        json!({"city": "Oslo", "celsius": 21.5, "conditions": "sunny"})
    );
    assert_eq!(
        call(&tools, "chart", json!({})).await,
        json!("[image not shown: image/png 70 bytes]\norders per day, last week")
    );
    // A remote argument check the local schema cannot make is the server's tool error.
    let error = call_err(&tools, "forecast", json!({"city": "Oslo", "days": 0})).await;
    assert_eq!(error.kind(), "McpToolError");
}

#[tokio::test]
async fn a_timeout_stops_the_call_and_the_server_hears_of_it() {
    let Some(client) = stdio(McpClient::builder(), &[]).await else {
        return;
    };
    let tools = client.tools().await.unwrap();
    let responses = vec![
        ModelResponse::tool_call("c1", "slow", json!({"seconds": 30})),
        ModelResponse::text("too slow"),
    ];
    let (result, _) = run_agent(responses, tools.clone(), |b| {
        b.failure_options(ToolFailureOptions::default().timeout(Duration::from_millis(300)))
    })
    .await;
    let failure = &result.tool_failures[0];
    assert!(failure.timed_out, "{failure:#?}");
    assert_eq!(failure.kind, "timeout");
    assert_eq!(
        failure.shown_to_model,
        "Tool 'slow' timed out after 300ms and was stopped; whether it took effect is unknown"
    );
    // rmcp sent `notifications/cancelled` when the call was dropped: the server stopped it.
    assert_eq!(cancellations(&tools, 1).await, 1);

    // A per-server timeout is the tool's own limit, which the agent applies.
    let builder = McpClient::builder().timeout(Duration::from_millis(200));
    let Some(limited) = stdio(builder, &[]).await else {
        return;
    };
    let slow = find_tool(&limited.tools().await.unwrap(), "slow");
    assert_eq!(slow.timeout(), Some(Duration::from_millis(200)));
}

#[tokio::test]
async fn cancellation_stops_the_call_and_the_server_hears_of_it() {
    let Some(client) = stdio(McpClient::builder(), &[]).await else {
        return;
    };
    let tools = client.tools().await.unwrap();

    // The run's token.
    let model = ScriptedModel::new(vec![ModelResponse::tool_call(
        "c1",
        "slow",
        json!({"seconds": 30}),
    )]);
    let agent = Agent::builder(model).tools(tools.clone()).build().unwrap();
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let error = tokio::time::timeout(
        Duration::from_secs(10),
        agent.run_with("wait", RunOptions::default().cancellation(token)),
    )
    .await
    .expect("the run ends when cancelled")
    .unwrap_err();
    assert!(matches!(error, AgentError::Cancelled { .. }), "{error:?}");
    assert_eq!(cancellations(&tools, 1).await, 1);

    // The call's own token, outside any agent.
    let cx = ToolContext::new("c2", "slow");
    let token = cx.cancellation().clone();
    let slow = find_tool(&tools, "slow");
    let call = slow.call(json!({"seconds": 30}), cx);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        token.cancel();
    });
    let error = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call ends when cancelled")
        .unwrap_err();
    assert_eq!(error.kind(), "McpCancelled");
    assert_eq!(cancellations(&tools, 2).await, 2);
}

/// Transfers money: forbidden once untrusted output entered the run.
#[reticent::tool]
fn transfer_funds(
    /// The amount, in cents.
    cents: u64,
) -> String {
    format!("transferred {cents}")
}

/// A run that calls a remote tool, then `transfer_funds`.
async fn add_then_transfer(client: &McpClient) -> AgentResult {
    let responses = vec![
        ModelResponse::tool_call("c1", "add", json!({"a": 1, "b": 2})),
        ModelResponse::tool_call("c2", "transfer_funds", json!({"cents": 300})),
        ModelResponse::text("done"),
    ];
    let tools = client.tools().await.unwrap();
    let (result, _) = run_agent(responses, tools, |b| {
        b.tool(TransferFunds)
            .forbid_after_untrusted("transfer_funds")
    })
    .await;
    result
}

#[tokio::test]
async fn remote_output_is_untrusted_unless_the_server_is_trusted() {
    let Some(client) = stdio(McpClient::builder(), &[]).await else {
        return;
    };
    let result = add_then_transfer(&client).await;
    assert_eq!(result.tainted_by, ["c1"]);
    let refused = &result.tool_failures[0];
    assert_eq!(
        (refused.tool.as_str(), refused.kind.as_str()),
        ("transfer_funds", "untrusted")
    );

    let Some(trusted) = stdio(McpClient::builder().trusted_output(true), &[]).await else {
        return;
    };
    let result = add_then_transfer(&trusted).await;
    assert!(result.tainted_by.is_empty());
    assert!(
        result.tool_failures.is_empty(),
        "{:#?}",
        result.tool_failures
    );
    assert_eq!(shown_texts(&result.messages)[1], "transferred 300");
}

#[tokio::test]
async fn read_only_tools_stay_out_of_the_effects_ledger() {
    let Some(client) = stdio(McpClient::builder(), &[]).await else {
        return;
    };
    let responses = vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "add", json!({"a": 1, "b": 2})),
            ToolCall::new("c2", "query_db", json!({"sql": "delete from orders"})),
        ]),
        ModelResponse::text("done"),
    ];
    let (result, _) = run_agent(responses, client.tools().await.unwrap(), |b| b).await;
    let ledger: Vec<(&str, EffectOutcome)> = result
        .effects
        .iter()
        .map(|e| (e.tool.as_str(), e.outcome))
        .collect();
    assert_eq!(ledger, [("query_db", EffectOutcome::Failed)]);
}

#[tokio::test]
async fn the_process_is_killed_when_the_client_is_dropped() {
    for args in [&[][..], &["--linger"][..]] {
        let Some(client) = stdio(McpClient::builder(), args).await else {
            return;
        };
        let pid = client.pid().expect("a child process");
        let tools = client.tools().await.unwrap();
        assert!(!process_ended(pid), "the server runs");
        drop(client);
        assert!(
            wait_until_ended(pid, Duration::from_secs(5)).await,
            "the server {args:?} outlived its client"
        );
        // Its tools now fail, and say why.
        let error = call_err(&tools, "add", json!({"a": 1, "b": 2})).await;
        assert_eq!(error.kind(), "McpDisconnected");
        let ToolError::Failed(failure) = error else {
            panic!("{error:?}")
        };
        assert!(matches!(
            failure.error().downcast_ref::<McpCallError>(),
            Some(McpCallError::Closed { .. })
        ));
    }
}

#[tokio::test]
async fn close_lets_the_server_exit_and_kills_one_that_does_not() {
    for args in [&[][..], &["--linger"][..]] {
        let Some(client) = stdio(McpClient::builder(), args).await else {
            return;
        };
        let pid = client.pid().unwrap();
        assert!(!process_ended(pid));
        tokio::time::timeout(Duration::from_secs(10), client.close())
            .await
            .expect("close is bounded");
        assert!(
            wait_until_ended(pid, Duration::from_secs(1)).await,
            "the server {args:?} outlived close"
        );
    }
}

#[tokio::test]
async fn a_server_that_dies_mid_call_fails_the_call_without_a_hang() {
    let Some(client) = stdio(McpClient::builder(), &[]).await else {
        return;
    };
    let responses = vec![
        ModelResponse::tool_call("c1", "die", json!({})),
        ModelResponse::tool_call("c2", "add", json!({"a": 1, "b": 2})),
        ModelResponse::text("the server is gone"),
    ];
    let tools = client.tools().await.unwrap();
    let (result, _) =
        tokio::time::timeout(Duration::from_secs(10), run_agent(responses, tools, |b| b))
            .await
            .expect("no hang");
    assert_eq!(
        shown_texts(&result.messages),
        [
            "Tool 'die' failed with McpDisconnected",
            "Tool 'add' failed with McpDisconnected"
        ]
    );
    let died = &result.tool_failures[0];
    let Some(McpCallError::Disconnected { exit_status, .. }) =
        died.error.downcast_ref::<McpCallError>()
    else {
        panic!("{died:#?}")
    };
    assert_eq!(
        exit_status.and_then(|s| s.code()),
        Some(3),
        "{}",
        died.error_chain()
    );
    assert!(
        died.error_chain().contains("exit status: 3"),
        "{}",
        died.error_chain()
    );
    // Whether `die` did anything before it died is unknown.
    assert_eq!(result.effects[0].outcome, EffectOutcome::Unknown);
}

#[tokio::test]
async fn a_name_that_is_not_a_tool_name_is_refused_with_the_fix() {
    let Some(client) = stdio(McpClient::builder(), &["--dotted"]).await else {
        return;
    };
    let error = client.tools().await.err().expect("stats.count is refused");
    assert!(
        matches!(&error, McpClientError::InvalidToolName { remote, .. } if remote == "stats.count")
    );
    assert_eq!(
        error.to_string(),
        "the MCP server `py-tools` has a tool named \"stats.count\", which makes the tool name \
         \"stats.count\"; tool names must match ^[a-zA-Z0-9_-]{1,64}$: give it a valid name \
         with .rename(\"stats.count\", \"NEW_NAME\") or leave it out with \
         .exclude(\"stats.count\")"
    );

    let builder = McpClient::builder()
        .prefix("py_")
        .rename("stats.count", "count_orders");
    let Some(renamed) = stdio(builder, &["--dotted"]).await else {
        return;
    };
    let tools = renamed.tools().await.unwrap();
    assert_eq!(call(&tools, "count_orders", json!({})).await["result"], 42);
    assert_eq!(
        call(&tools, "py_add", json!({"a": 1, "b": 1})).await["result"],
        2
    );

    let builder = McpClient::builder().exclude("stats.count");
    let Some(excluded) = stdio(builder, &["--dotted"]).await else {
        return;
    };
    let tools = excluded.tools().await.unwrap();
    assert!(
        tools
            .iter()
            .all(|t| !t.definition().name.starts_with("stats"))
    );

    let builder = McpClient::builder().rename("stats.total", "total");
    let Some(typo) = stdio(builder, &["--dotted"]).await else {
        return;
    };
    let error = typo
        .tools()
        .await
        .err()
        .expect("an unknown tool is refused");
    assert!(
        error.to_string().starts_with(
            "rename(\"stats.total\") names a tool the MCP server `py-tools` does not list; \
             it lists: add, "
        ),
        "{error}"
    );
}
