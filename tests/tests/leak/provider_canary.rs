//! A failed tool tells the model less than it tells the caller, down to the bytes on the wire:
//! a canary secret in a failing tool's error never appears in any request an HTTP provider
//! sends, while the caller's `ToolFailure` carries it.

use std::time::Duration;

use reticent::providers::anthropic::Anthropic;
use reticent::{Agent, AgentResult, Model};
use reticent_tests::provider::{Reply, TestServer, fixture, openai, openai_tool_call};
use serde_json::json;

const CANARY: &str = "CANARY-b41d7e";

#[derive(Debug, thiserror::Error)]
#[error("gateway returned 503 via postgres://pay:{CANARY}@10.0.0.7/pay")]
struct GatewayError;

/// Charge the customer's card.
#[reticent::tool]
async fn charge_card(amount_cents: u64) -> Result<String, GatewayError> {
    let _ = amount_cents;
    Err(GatewayError)
}

async fn run(model: impl Model) -> AgentResult {
    Agent::builder(model)
        .system("You are a billing agent.")
        .tool(ChargeCard)
        .build()
        .unwrap()
        .run("Charge 42 dollars.")
        .await
        .unwrap()
}

fn check(result: &AgentResult, server: &TestServer) {
    assert_eq!(result.tool_failures.len(), 1);
    let failure = &result.tool_failures[0];
    assert!(failure.error.to_string().contains(CANARY));
    assert_eq!(
        failure.shown_to_model,
        "Tool 'charge_card' failed with GatewayError"
    );
    let received = server.received();
    assert_eq!(received.len(), 2);
    for request in &received {
        assert!(
            !request.text().contains(CANARY),
            "the canary reached the model: {}",
            request.text()
        );
    }
    // the failure did reach the model, as its kind
    assert!(received[1].body.contains("failed with GatewayError"));
}

#[tokio::test]
async fn openai_requests_never_carry_the_canary() {
    let call = openai_tool_call("call_1", "charge_card", r#"{"amount_cents": 4200}"#);
    let server = TestServer::start(vec![
        Reply::json(call),
        Reply::json(fixture("openai/response_text.json")),
    ])
    .await;
    let model = openai(&server);
    let result = run(model).await;
    check(&result, &server);
}

#[tokio::test]
async fn anthropic_requests_never_carry_the_canary() {
    let call = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "charge_card",
                     "input": {"amount_cents": 4200}}],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 100, "output_tokens": 20}
    });
    let server = TestServer::start(vec![
        Reply::json(call.to_string()),
        Reply::json(fixture("anthropic/response_text.json")),
    ])
    .await;
    let model = Anthropic::new("sk-ant-test", "claude-sonnet-4-5")
        .base_url(&server.url)
        .timeout(Duration::from_secs(10));
    let result = run(model).await;
    check(&result, &server);
    let second = server.received()[1].json();
    assert_eq!(second["messages"][2]["content"][0]["is_error"], true);
}
