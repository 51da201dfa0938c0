use std::time::Duration;

use reticent::{Agent, ModelResponse, ScriptedModel, StopReason, ToolCall, ToolFailureOptions};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
#[error("gateway down: postgres://admin:CANARY@db")]
struct GatewayError;

/// Charge.
#[reticent::tool]
async fn charge_card(amount: u64) -> Result<String, GatewayError> {
    if amount > 100 {
        Err(GatewayError)
    } else {
        Ok("charged".into())
    }
}

/// Slow.
#[reticent::tool(timeout = "50ms")]
async fn slow() -> String {
    tokio::time::sleep(Duration::from_secs(5)).await;
    "done".into()
}

/// Boom.
#[reticent::tool]
fn boom() -> String {
    panic!("kaboom secret")
}

/// Ship.
#[reticent::tool]
fn ship_order(order: String) -> String {
    order
}

#[tokio::test]
async fn loop_smoke() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "charge_card", json!({"amount": 500})),
        ModelResponse::tool_calls(vec![
            ToolCall::new("c2", "slow", json!({})),
            ToolCall::new("c3", "boom", json!({})),
            ToolCall::new("c4", "nope", json!({})),
        ]),
        ModelResponse::text("sorry"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(ChargeCard)
        .tool(Slow)
        .tool(Boom)
        .tool(ShipOrder)
        .require("ship_order", "charge_card")
        .failure_options(ToolFailureOptions {
            timeout: Some(Duration::from_secs(1)),
            ..Default::default()
        })
        .build()
        .unwrap();
    let result = agent.run("go").await.unwrap();
    for m in &result.messages {
        println!("{m:?}");
    }
    for f in &result.tool_failures {
        println!(
            "{} {} {:?} {}",
            f.tool,
            f.kind,
            f.shown_to_model,
            f.error_chain()
        );
    }
    assert_eq!(result.stop_reason, StopReason::FailureLimit);
    let json = serde_json::to_string(&result.trajectory).unwrap();
    assert!(!json.contains("CANARY"));
    println!("{}", json.len());
}
