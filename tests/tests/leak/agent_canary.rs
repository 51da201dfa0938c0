//! A failed tool tells the model less than it tells the caller: a secret in a failing tool's
//! error never reaches a request the model received, the transcript, the trajectory or the
//! stream's model-facing events, while the caller's `ToolFailure`, the `ToolFailed` event and
//! the `execute_tool` span all carry it.

use std::sync::Arc;

use futures::StreamExt;
use reticent::{
    Agent, AgentError, AgentEvent, AgentResult, ModelResponse, ScriptedModel, StopReason, ToolCall,
    ToolFailure, ToolFailureMode, ToolFailureOptions,
};
use reticent_tests::spans::{Spans, capture_spans};
use reticent_tests::transcript::shown;
use serde_json::json;

const CANARY: &str = "CANARY-7f3a9c";

#[derive(Debug, thiserror::Error)]
#[error("gateway returned 503 via postgres://pay:{CANARY}@10.0.0.7/pay")]
struct GatewayError;

/// Charge the customer's card.
#[reticent::tool]
async fn charge_card(amount_cents: u64) -> Result<String, GatewayError> {
    let _ = amount_cents;
    Err(GatewayError)
}

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("no order {0}; order ids look like ORD-1042")]
    #[disclose(argument)]
    NotFound(String),
    #[error("database unavailable: {0}")]
    Database(String),
}

/// Look up an order.
#[reticent::tool(read_only)]
fn lookup_order(order_id: String) -> Result<String, OrderError> {
    match order_id.as_str() {
        "ORD-1042" => Ok("ORD-1042: 1 lamp, paid".into()),
        "ORD-0000" => Err(OrderError::Database(format!("row 7 holds {CANARY}"))),
        _ => Err(OrderError::NotFound(order_id)),
    }
}

/// An error whose own message is harmless and whose source holds the secret.
#[derive(Debug, thiserror::Error)]
#[error("could not read the ledger")]
struct LedgerError(#[source] std::io::Error);

/// A warehouse whose inventory tool reads a ledger.
struct Warehouse {
    path: String,
}

#[reticent::tools]
impl Warehouse {
    /// Count the inventory.
    #[tool]
    fn count_inventory(&self) -> Result<u64, LedgerError> {
        Err(LedgerError(std::io::Error::other(format!(
            "permission denied: {}",
            self.path
        ))))
    }

    /// Recompute the totals (has a bug).
    #[tool]
    fn recompute_totals(&self) -> u64 {
        panic!("ledger at {} is corrupt", self.path)
    }
}

fn script() -> Vec<ModelResponse> {
    vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "charge_card", json!({"amount_cents": 4200})),
            ToolCall::new("c2", "lookup_order", json!({"order_id": "ORD-0000"})),
            ToolCall::new("c3", "lookup_order", json!({"order_id": "ORD-1042"})),
        ]),
        ModelResponse::tool_calls(vec![
            ToolCall::new("c4", "count_inventory", json!({})),
            ToolCall::new("c5", "recompute_totals", json!({})),
        ]),
        // The same failing call again: collapsed.
        ModelResponse::tool_call("c6", "charge_card", json!({"amount_cents": 4200})),
        // Three failures in a row: a last turn without tools.
        ModelResponse::text("Payment, the database and the ledger all failed."),
    ]
}

fn builder(model: &ScriptedModel) -> reticent::AgentBuilder {
    Agent::builder(model.clone())
        .system("You are a shop assistant.")
        .tool(ChargeCard)
        .tool(LookupOrder)
        .toolbox(Arc::new(Warehouse {
            path: format!("/srv/{CANARY}/ledger.db"),
        }))
}

fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(CANARY), "{what} holds the secret: {text}");
}

/// The failure carries the secret in its full error.
fn assert_carries(failure: &ToolFailure) {
    assert!(
        failure.error_chain().contains(CANARY),
        "the caller's record of {} lost the secret: {}",
        failure.call_id,
        failure.error_chain()
    );
    assert_clean("what the model was shown", &failure.shown_to_model);
}

fn assert_model_never_saw_it(model: &ScriptedModel, result: &AgentResult) {
    let requests = model.requests();
    assert!(!requests.is_empty());
    for (i, request) in requests.iter().enumerate() {
        assert_clean(
            &format!("request {}", i + 1),
            &serde_json::to_string(request).unwrap(),
        );
        assert_clean(&format!("request {}", i + 1), &format!("{request:?}"));
    }
    assert_clean(
        "the transcript",
        &serde_json::to_string(&result.messages).unwrap(),
    );
    assert_clean("the transcript", &format!("{:?}", result.messages));
    assert_clean(
        "the trajectory",
        &serde_json::to_string(&result.trajectory).unwrap(),
    );
    assert_clean("the trajectory", &format!("{:?}", result.trajectory));
    assert_clean("the output", &result.output);
}

fn assert_spans_carry_it(spans: &Spans, call_ids: &[&str]) {
    for call_id in call_ids {
        let span = spans.tool_call(call_id);
        assert_eq!(span.field("otel.status_code"), Some("ERROR"), "{call_id}");
        let message = span.field("error.message").unwrap_or_default();
        assert!(
            message.contains(CANARY),
            "the span of {call_id} lost the secret: {span:?}"
        );
        let error_type = span.field("error.type").unwrap_or_default();
        assert_clean("error.type", error_type);
    }
}

const FAILED_CALLS: [&str; 5] = ["c1", "c2", "c4", "c5", "c6"];

#[tokio::test]
async fn the_secret_reaches_the_caller_and_never_the_model() {
    let (spans, _guard) = capture_spans();
    let model = ScriptedModel::new(script());
    let agent = builder(&model).build().unwrap();

    let events: Vec<AgentEvent> = agent.run_stream("Pay and check stock").collect().await;

    let Some(AgentEvent::Finished(Ok(result))) = events.last() else {
        panic!("the run did not finish: {events:#?}");
    };
    assert_eq!(result.stop_reason, StopReason::FailureLimit);

    // What the model was shown.
    let shown = shown(&result.messages);
    assert_eq!(
        shown,
        [
            ("c1", "Tool 'charge_card' failed with GatewayError"),
            ("c2", "Tool 'lookup_order' failed with OrderError::Database"),
            ("c3", "ORD-1042: 1 lamp, paid"),
            ("c4", "Tool 'count_inventory' failed with LedgerError"),
            ("c5", "Tool 'recompute_totals' failed with panic"),
            (
                "c6",
                "Tool 'charge_card' failed again the same way as call 'c1' with the same arguments"
            ),
        ]
    );
    assert_model_never_saw_it(&model, result);

    // The stream's model-facing events are clean; its failure events carry the secret.
    let mut failed_events = Vec::new();
    for event in &events[..events.len() - 1] {
        match event {
            AgentEvent::ToolFailed(failure) => {
                assert_carries(failure);
                failed_events.push(failure.call_id.as_str());
            }
            other => assert_clean("a model-facing event", &format!("{other:?}")),
        }
    }
    assert_eq!(failed_events, FAILED_CALLS);

    // The caller's record.
    let failed: Vec<&str> = result
        .tool_failures
        .iter()
        .inspect(|f| assert_carries(f))
        .map(|f| f.call_id.as_str())
        .collect();
    assert_eq!(failed, FAILED_CALLS);

    // The spans.
    assert_spans_carry_it(&spans, &FAILED_CALLS);
    assert_clean(
        "the ok call's span",
        &format!("{:?}", spans.tool_call("c3")),
    );
    for name in ["invoke_agent", "chat"] {
        for span in spans.named(name) {
            assert_clean(name, &format!("{span:?}"));
        }
    }
}

#[tokio::test]
async fn the_secret_stays_out_of_a_propagated_failures_partial_result() {
    let (spans, _guard) = capture_spans();
    let model = ScriptedModel::new(script());
    let agent = builder(&model)
        .failure_mode(ToolFailureMode::Propagate)
        .build()
        .unwrap();

    let error = agent.run("Pay").await.unwrap_err();

    let AgentError::ToolFailed { failure, partial } = error else {
        panic!("expected ToolFailed, got {error:?}");
    };
    assert_carries(&failure);
    assert_model_never_saw_it(&model, &partial);
    partial.tool_failures.iter().for_each(assert_carries);
    assert_spans_carry_it(&spans, &["c1"]);
}

#[tokio::test]
async fn the_opt_in_is_what_lets_the_message_through() {
    // The same run with `include_error_message`: the model now sees the messages, which shows
    // the checks above would catch a leak.
    let model = ScriptedModel::new(script());
    let agent = builder(&model)
        .failure_options(ToolFailureOptions::default().include_error_message(true))
        .build()
        .unwrap();

    let result = agent.run("Pay and check stock").await.unwrap();

    let second_request = serde_json::to_string(&model.requests()[1]).unwrap();
    assert!(second_request.contains(CANARY));
    assert!(
        result.tool_failures[0]
            .shown_to_model
            .starts_with("Tool 'charge_card' failed with GatewayError: gateway returned 503")
    );
    // A panic's payload is never shown, opt-in or not.
    let panicked = result
        .tool_failures
        .iter()
        .find(|f| f.kind == "panic")
        .unwrap();
    assert_eq!(
        panicked.shown_to_model,
        "Tool 'recompute_totals' failed with panic"
    );
}

/// Arguments handed over as JSON text (as a provider does with text it could not parse, or a
/// `Model` that keeps the raw text) take `Tool::call_text`; the rules are the same.
#[tokio::test]
async fn the_secret_stays_out_when_arguments_arrive_as_text() {
    let text = |s: &str| serde_json::Value::String(s.to_owned());
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("t1", "charge_card", text(r#"{"amount_cents": 4200}"#)),
            ToolCall::new("t2", "lookup_order", text(r#"{"order_id":"ORD-0000"}"#)),
            ToolCall::new("t3", "lookup_order", text(r#" {"order_id": "ORD-1042"} "#)),
            ToolCall::new("t4", "lookup_order", text(r#"{"order_id":"ORD-9"}"#)),
            ToolCall::new("t5", "lookup_order", text(r#"{"order_id":"ORD-9""#)),
        ]),
        ModelResponse::text("done"),
    ]);
    let result = builder(&model).build().unwrap().run("Pay").await.unwrap();

    let shown = shown(&result.messages);
    assert_eq!(shown.len(), 5);
    assert_eq!(
        shown[..4],
        [
            ("t1", "Tool 'charge_card' failed with GatewayError"),
            ("t2", "Tool 'lookup_order' failed with OrderError::Database"),
            ("t3", "ORD-1042: 1 lamp, paid"),
            (
                "t4",
                "Invalid arguments for tool 'lookup_order': no order ORD-9; order ids look like ORD-1042"
            ),
        ]
    );
    assert_eq!(shown[4].0, "t5");
    assert!(
        shown[4]
            .1
            .starts_with("Invalid arguments for tool 'lookup_order': "),
        "{}",
        shown[4].1
    );
    assert_model_never_saw_it(&model, &result);
    let failed: Vec<&str> = result
        .tool_failures
        .iter()
        .map(|f| f.call_id.as_str())
        .collect();
    assert_eq!(failed, ["t1", "t2", "t4", "t5"]);
    for failure in &result.tool_failures[..2] {
        assert_carries(failure);
    }
}
