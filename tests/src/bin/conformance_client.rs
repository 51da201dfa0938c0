//! The client the MCP conformance suite's client scenarios test: `McpClient` over streamable
//! HTTP. The suite runs it with the server's URL as the last argument and the scenario's name
//! in `MCP_CONFORMANCE_SCENARIO`:
//!
//! ```text
//! MCP_CONFORMANCE_SCENARIO=tools_call conformance_client http://localhost:PORT/mcp
//! ```
//!
//! It connects, lists the server's tools and calls the one the scenario expects
//! (`tools_call`: `add_numbers`; `sse-retry`: `test_reconnection`), then closes the connection.
//! It exits with 1 when any step fails.

use std::time::Duration;

use reticent::ToolContext;
use reticent::mcp::McpClient;
use serde_json::{Value, json};

/// The tool each scenario expects to be called, with its arguments.
fn call_for(scenario: &str) -> Option<(&'static str, Value)> {
    match scenario {
        "tools_call" => Some(("add_numbers", json!({"a": 5, "b": 3}))),
        "sse-retry" => Some(("test_reconnection", json!({}))),
        _ => None,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .next_back()
        .ok_or("usage: conformance_client URL")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let client = McpClient::builder()
        .name("conformance")
        .timeout(Duration::from_secs(20))
        .connect_timeout(Duration::from_secs(10))
        .http(url)
        .await?;
    let tools = client.tools().await?;
    eprintln!("{} tools listed", tools.len());
    if let Some((name, arguments)) = call_for(&scenario) {
        let tool = tools
            .iter()
            .find(|tool| tool.definition().name == name)
            .ok_or_else(|| format!("the server lists no tool `{name}`"))?;
        let output = tool
            .call(arguments, ToolContext::new("1", name))
            .await
            .map_err(|error| format!("{name} failed: {error}"))?;
        eprintln!("{name}: {output}");
    }
    client.close().await;
    Ok(())
}
