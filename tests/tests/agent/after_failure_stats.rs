//! Per-tool counts: calls, failures and timeouts of each tool, on the result (also a partial
//! one) and as the `reticent.tool_stats` field of the `invoke_agent` span.

use std::time::Duration;

use reticent::{
    Agent, AgentError, ModelResponse, ScriptedModel, ToolCall, ToolFailureMode, agent::ToolStats,
};
use reticent_tests::spans::capture_spans;
use serde_json::json;

#[derive(Debug, thiserror::Error)]
#[error("gateway returned 503")]
struct GatewayError;

/// Charge a card.
#[reticent::tool]
fn charge_card(amount_cents: u64) -> Result<String, GatewayError> {
    if amount_cents > 10_000 {
        Err(GatewayError)
    } else {
        Ok("charged".into())
    }
}

/// Look up an order.
#[reticent::tool(read_only)]
fn lookup_order(order_id: String) -> String {
    format!("{order_id}: 1 lamp")
}

/// Build a report; takes a minute, given 1s.
#[reticent::tool(timeout = "1s")]
async fn slow_report() -> String {
    tokio::time::sleep(Duration::from_secs(60)).await;
    "report".into()
}

fn agent(model: &ScriptedModel) -> reticent::AgentBuilder {
    Agent::builder(model.clone())
        .tool(ChargeCard)
        .tool(LookupOrder)
        .tool(SlowReport)
        .max_consecutive_failures(10)
}

fn stats(calls: u32, failures: u32, timeouts: u32) -> ToolStats {
    // `ToolStats` is non-exhaustive: build it the way a caller reads it, from JSON.
    serde_json::from_value(json!({"calls": calls, "failures": failures, "timeouts": timeouts}))
        .unwrap()
}

fn script() -> ScriptedModel {
    ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "charge_card", json!({"amount_cents": 25_000})),
            ToolCall::new("c2", "lookup_order", json!({"order_id": "ORD-1"})),
            ToolCall::new("c3", "slow_report", json!({})),
        ]),
        ModelResponse::tool_calls(vec![
            ToolCall::new("c4", "charge_card", json!({"amount_cents": 500})),
            // Arguments that do not decode count as a failed call.
            ToolCall::new("c5", "lookup_order", json!({})),
            ToolCall::new("c6", "lookup_order", json!({"order_id": "ORD-2"})),
        ]),
        ModelResponse::text("done"),
    ])
}

#[tokio::test(start_paused = true)]
async fn calls_failures_and_timeouts_are_counted_per_tool() {
    let model = script();

    let result = agent(&model).build().unwrap().run("Go").await.unwrap();

    let counts: Vec<(&str, ToolStats)> = result
        .tool_stats
        .iter()
        .map(|(tool, stats)| (tool.as_str(), *stats))
        .collect();
    assert_eq!(
        counts,
        [
            ("charge_card", stats(2, 1, 0)),
            ("lookup_order", stats(3, 1, 0)),
            ("slow_report", stats(1, 1, 1)),
        ]
    );
    // The counts agree with the record of failures.
    let failures: u32 = result.tool_stats.values().map(|s| s.failures).sum();
    assert_eq!(failures as usize, result.tool_failures.len());
}

#[tokio::test(start_paused = true)]
async fn the_counts_are_a_field_of_the_invoke_agent_span() {
    let (spans, _guard) = capture_spans();
    let model = script();

    agent(&model).build().unwrap().run("Go").await.unwrap();

    let run = spans.one("invoke_agent");
    assert_eq!(
        run.field("reticent.tool_stats"),
        Some(
            "charge_card: 2 calls, 1 failed, 0 timed out; lookup_order: 3 calls, 1 failed, 0 \
             timed out; slow_report: 1 calls, 1 failed, 1 timed out"
        )
    );
    assert_eq!(run.field("reticent.tainted"), Some("false"));
}

#[tokio::test]
async fn a_run_without_tool_calls_has_no_counts() {
    let (spans, _guard) = capture_spans();
    let model = ScriptedModel::new(vec![ModelResponse::text("Hello.")]);

    let result = agent(&model).build().unwrap().run("Hi").await.unwrap();

    assert!(result.tool_stats.is_empty());
    assert_eq!(spans.one("invoke_agent").field("reticent.tool_stats"), None);
}

#[tokio::test]
async fn a_propagated_run_keeps_its_counts() {
    let (spans, _guard) = capture_spans();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "lookup_order", json!({"order_id": "ORD-1"})),
        ModelResponse::tool_call("c2", "charge_card", json!({"amount_cents": 25_000})),
        ModelResponse::text("never requested"),
    ]);

    let error = agent(&model)
        .failure_mode(ToolFailureMode::Propagate)
        .build()
        .unwrap()
        .run("Go")
        .await
        .unwrap_err();

    assert!(matches!(error, AgentError::ToolFailed { .. }), "{error:?}");
    let partial = error.partial();
    assert_eq!(partial.tool_stats["lookup_order"], stats(1, 0, 0));
    assert_eq!(partial.tool_stats["charge_card"], stats(1, 1, 0));
    assert_eq!(
        spans.one("invoke_agent").field("reticent.tool_stats"),
        Some(
            "charge_card: 1 calls, 1 failed, 0 timed out; lookup_order: 1 calls, 0 failed, 0 timed out"
        )
    );
}

#[tokio::test]
async fn calls_of_unknown_tools_are_counted_under_the_name_the_model_used() {
    let (spans, _guard) = capture_spans();
    let long_name = "x".repeat(5000);
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", long_name.as_str(), json!({})),
        ModelResponse::text("There is no such tool."),
    ]);

    let result = agent(&model).build().unwrap().run("Go").await.unwrap();

    assert_eq!(result.tool_stats[&long_name], stats(1, 1, 0));
    // The span holds a bounded name, not whatever the model sent.
    let field = spans
        .one("invoke_agent")
        .field("reticent.tool_stats")
        .unwrap()
        .to_owned();
    assert!(field.len() < 200, "{} bytes", field.len());
    assert!(
        field.ends_with(": 1 calls, 1 failed, 0 timed out"),
        "{field}"
    );
}
