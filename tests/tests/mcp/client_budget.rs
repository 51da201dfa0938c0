//! Output budgets for `McpClient`'s tools, against the MCP Python SDK's server in
//! `tests/mcp_client/big_result_server.py`, whose `page` tool returns as many megabytes as it
//! is asked for: a 20 MB result reaches the caller whole and the model as its budget allows,
//! over stdio and streamable HTTP; a 100 MB result is refused as it is read (past the client's
//! `max_message_size`), and the client goes on working.
//!
//! Needs the SDK's virtual environment (see `reticent_tests::mcp::python`);
//! `RETICENT_SKIP_PYTHON=1` skips these tests, loudly.

use std::sync::Arc;
use std::time::Duration;

use reticent::mcp::{McpCallError, McpClient, McpClientBuilder};
use reticent::tool::DEFAULT_MAX_OUTPUT;
use reticent::{Message, ModelResponse, Tool, ToolError};
use reticent_tests::mcp::python::{script, serve_http};
use reticent_tests::mcp::{assert_model_never_saw, call_tool, run_agent};
use reticent_tests::transcript::unfenced;
use serde_json::json;

/// At the middle of every page.
const MIDDLE: &str = "MIDDLE-OF-THE-PAGE";

/// The command that starts the server with `args`, or `None` when the Python tests are
/// skipped.
fn server(args: &[&str]) -> Option<tokio::process::Command> {
    script(
        "output budgets of reticent's MCP client (McpClient)",
        "tests/mcp_client/big_result_server.py",
        args,
    )
}

async fn stdio(builder: McpClientBuilder) -> Option<McpClient> {
    let command = server(&[])?;
    Some(builder.stdio(command).await.expect("the server starts"))
}

/// The server over streamable HTTP, and a client of it; dropping the child kills it.
async fn http(builder: McpClientBuilder) -> Option<(tokio::process::Child, McpClient)> {
    let (child, url) = serve_http(server(&["--http"])?).await;
    let client = builder.http(url).await.expect("the client connects");
    Some((child, client))
}

/// An agent whose model reads a page of `megabytes` and answers: the model never sees the
/// page whole, the caller gets every byte.
async fn twenty_megabytes_reach_the_caller_and_never_the_model(client: &McpClient) {
    let tools: Vec<Arc<dyn Tool>> = client.tools().await.unwrap();
    let (result, model) = run_agent(
        vec![
            ModelResponse::tool_call("call_1", "page", json!({"megabytes": 20})),
            ModelResponse::text("done"),
        ],
        tools,
        |builder| builder,
    )
    .await;
    assert!(
        result.tool_failures.is_empty(),
        "{:?}",
        result.tool_failures
    );
    let whole = result.tool_output("call_1").expect("the call succeeded");
    assert_eq!(whole.len(), 20_000_000);
    assert!(whole.starts_with("page-start ") && whole.ends_with(" page-end"));
    assert!(whole.contains(MIDDLE));
    // What the model was shown: the head and the tail within the default budget, in the
    // fence of untrusted output (a remote tool's is).
    let requests = model.requests();
    let Some(Message::Tool(shown)) = requests[1].messages.last() else {
        panic!("the second request ends with the call's result")
    };
    assert!(shown.content.len() < DEFAULT_MAX_OUTPUT + 800);
    let cut = unfenced(&shown.content);
    assert_ne!(cut, shown.content, "a remote tool's output is fenced");
    assert!(cut.starts_with("page-start "));
    assert!(cut.ends_with(" page-end"));
    assert_model_never_saw(MIDDLE, &result, &model);
}

#[tokio::test]
async fn a_20_mb_result_over_stdio_reaches_the_caller_whole_and_the_model_cut() {
    let Some(client) = stdio(McpClient::builder()).await else {
        return;
    };
    twenty_megabytes_reach_the_caller_and_never_the_model(&client).await;
}

#[tokio::test]
async fn a_20_mb_result_over_http_reaches_the_caller_whole_and_the_model_cut() {
    let Some((_server, client)) = http(McpClient::builder()).await else {
        return;
    };
    twenty_megabytes_reach_the_caller_and_never_the_model(&client).await;
}

#[tokio::test]
async fn the_clients_budget_applies_to_its_tools() {
    let Some(client) = stdio(McpClient::builder().max_output(1000)).await else {
        return;
    };
    let tools = client.tools().await.unwrap();
    let (result, _) = run_agent(
        vec![
            ModelResponse::tool_call("call_1", "page", json!({"megabytes": 1})),
            ModelResponse::text("done"),
        ],
        tools,
        // the client's budget, not the agent's
        |builder| builder.max_tool_output(1 << 20),
    )
    .await;
    let Some(Message::Tool(shown)) = result.messages.get(2) else {
        panic!("the call's result follows the call")
    };
    assert!(shown.content.contains("999000 of 1000000 bytes"));
    assert_eq!(result.tool_output("call_1").map(str::len), Some(1_000_000));
}

/// Asks for 100 MB: the answer is refused as it is read, `check` sees the error, and the client
/// still works.
async fn a_100_mb_result_is_refused(client: &McpClient, check: impl Fn(&McpCallError)) {
    let tools = client.tools().await.unwrap();
    let error = tokio::time::timeout(
        Duration::from_secs(120),
        call_tool(&tools, "page", json!({"megabytes": 100})),
    )
    .await
    .expect("the call ends")
    .expect_err("the answer is too long to read");
    let ToolError::Failed(failure) = &error else {
        panic!("not a failure: {error:?}")
    };
    check(
        failure
            .error()
            .downcast_ref::<McpCallError>()
            .unwrap_or_else(|| panic!("not a call error: {error:?}")),
    );
    let page = call_tool(&tools, "page", json!({"megabytes": 1}))
        .await
        .expect("the client goes on working");
    assert_eq!(page.as_str().map(str::len), Some(1_000_000));
}

#[tokio::test]
async fn a_100_mb_result_over_stdio_is_refused_as_it_is_read() {
    let Some(client) = stdio(McpClient::builder()).await else {
        return;
    };
    a_100_mb_result_is_refused(&client, |call| {
        assert!(matches!(call, McpCallError::Unreadable { .. }), "{call}");
        let reason = std::error::Error::source(call).unwrap().to_string();
        assert!(
            reason.contains(&format!("longer than {} bytes", 64 * 1024 * 1024)),
            "{reason}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_100_mb_result_over_http_is_refused_as_it_is_read() {
    let Some((_server, client)) = http(McpClient::builder()).await else {
        return;
    };
    a_100_mb_result_is_refused(&client, |call| {
        // An answer's stream event over the limit ends rmcp's reading of the stream.
        assert!(
            matches!(
                call,
                McpCallError::Disconnected { .. } | McpCallError::Unreadable { .. }
            ),
            "{call}"
        );
    })
    .await;
}
