//! Canary tests over MCP: tools whose errors hold a secret fail in every way a tool can, and
//! the secret is in no byte the client receives, while the operator's hook has every one.

use std::time::Duration;

use reticent::Disclose;
use reticent::mcp::McpServer;
use reticent::mcp::rmcp::model::CallToolRequestParams;
use reticent_tests::mcp::{Failures, connect, text};
use serde_json::{Value, json};

const CANARY: &str = "CANARY-5b1f0e-postgres://svc:pa55@db.internal:5432/prod";

#[derive(Debug, thiserror::Error)]
#[error("connection refused by {0}")]
struct PlainError(String);

#[derive(Debug, thiserror::Error, Disclose)]
enum StoreError {
    #[error("no record {0}; ids look like R-1")]
    #[disclose(argument)]
    NotFound(String),
    #[error("store unavailable at {0}")]
    Unavailable(String),
    #[error("throttled by {0}")]
    #[disclose(kind = "RateLimited")]
    Throttled(String),
}

#[derive(Debug, thiserror::Error)]
#[error("could not load the report")]
struct ReportError(#[source] std::io::Error);

/// Fails with an error type that does not implement Disclose.
#[reticent::tool]
fn plain() -> Result<String, PlainError> {
    Err(PlainError(CANARY.into()))
}

/// Fails with a Disclose variant.
#[reticent::tool]
fn unavailable() -> Result<String, StoreError> {
    Err(StoreError::Unavailable(CANARY.into()))
}

/// Fails with a Disclose variant that has its own kind.
#[reticent::tool]
fn throttled() -> Result<String, StoreError> {
    Err(StoreError::Throttled(CANARY.into()))
}

/// Fails with an argument error about the model's own input (no canary in it).
#[reticent::tool]
fn lookup(
    /// The record id.
    id: String,
) -> Result<String, StoreError> {
    Err(StoreError::NotFound(id))
}

/// Fails with an io::Error.
#[reticent::tool]
fn io() -> Result<String, std::io::Error> {
    Err(std::io::Error::other(CANARY))
}

/// Fails with an error whose source holds the canary.
#[reticent::tool]
fn report() -> Result<String, ReportError> {
    Err(ReportError(std::io::Error::other(CANARY)))
}

/// Panics with the canary in the payload.
#[reticent::tool]
fn explode() -> String {
    panic!("{CANARY}")
}

/// Runs past its time limit.
#[reticent::tool(timeout = "50ms")]
async fn slow() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    CANARY.to_owned()
}

fn server(include_error_message: bool, failures: &Failures) -> McpServer {
    McpServer::builder()
        .tool(Plain)
        .tool(Unavailable)
        .tool(Throttled)
        .tool(Lookup)
        .tool(Io)
        .tool(Report)
        .tool(Explode)
        .tool(Slow)
        .include_error_message(include_error_message)
        .on_failure(failures.hook())
        .build()
        .unwrap()
}

const CALLS: [(&str, &str); 8] = [
    ("plain", "Tool 'plain' failed with PlainError"),
    (
        "unavailable",
        "Tool 'unavailable' failed with StoreError::Unavailable",
    ),
    ("throttled", "Tool 'throttled' failed with RateLimited"),
    (
        "lookup",
        "Invalid arguments for tool 'lookup': no record R-9; ids look like R-1",
    ),
    ("io", "Tool 'io' failed with io::Error"),
    ("report", "Tool 'report' failed with ReportError"),
    ("explode", "Tool 'explode' failed with panic"),
    (
        "slow",
        "Tool 'slow' timed out after 50ms and was stopped; whether it took effect is unknown",
    ),
];

fn arguments(tool: &str) -> serde_json::Map<String, Value> {
    let mut map = serde_json::Map::new();
    if tool == "lookup" {
        map.insert("id".into(), json!("R-9"));
    }
    map
}

#[tokio::test]
async fn no_failure_sends_the_canary_to_the_client() {
    let failures = Failures::default();
    let connection = connect(server(false, &failures)).await;
    for (tool, expected) in CALLS {
        let result = connection
            .client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments(tool)))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true), "{tool}");
        assert_eq!(text(&result), expected);
    }

    let received = connection.received();
    assert!(
        received.contains("failed with PlainError"),
        "the wire was recorded"
    );
    assert!(
        !received.contains("CANARY"),
        "the canary reached the client:\n{received}"
    );

    // The operator has every failure, with the canary wherever the error held it.
    let all = failures.all();
    assert_eq!(all.len(), CALLS.len());
    for failure in &all {
        let expected = CALLS.iter().find(|(t, _)| *t == failure.tool).unwrap().1;
        assert_eq!(failure.shown_to_model, expected);
        match failure.tool.as_str() {
            "lookup" | "slow" => assert!(!failure.error_chain().contains(CANARY)),
            _ => assert!(
                failure.error_chain().contains(CANARY),
                "{}: {}",
                failure.tool,
                failure.error_chain()
            ),
        }
    }
}

#[tokio::test]
async fn the_opt_in_is_what_lets_a_message_through() {
    let failures = Failures::default();
    let connection = connect(server(true, &failures)).await;
    let result = connection
        .client
        .call_tool(CallToolRequestParams::new("plain"))
        .await
        .unwrap();
    assert_eq!(
        text(&result),
        format!("Tool 'plain' failed with PlainError: connection refused by {CANARY}")
    );
    // A panic's payload and a timeout stay on the server even then.
    for tool in ["explode", "slow"] {
        let result = connection
            .client
            .call_tool(CallToolRequestParams::new(tool))
            .await
            .unwrap();
        assert!(
            !text(&result).contains("CANARY"),
            "{tool}: {}",
            text(&result)
        );
    }
}
