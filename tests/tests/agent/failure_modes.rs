//! Failure modes: `ReportToModel` turns a failure into an error tool result and the run goes
//! on; `Propagate` ends the run at the first failure, keeping everything gathered so far. And
//! the caller's record of every failure.

use std::error::Error as _;

use reticent::{
    Agent, AgentError, ArgumentError, Message, ModelResponse, ScriptedModel, StopReason, ToolCall,
    ToolFailureMode, ToolFailureOptions, ToolResult, Usage,
};
use reticent_tests::transcript::{last_tool_result, shown_with_errors, tool_results};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
#[error("gateway returned 503 for merchant acct_9921 via postgres://pay:hunter2@10.0.0.7/pay")]
struct GatewayError;

/// Charge the customer's card.
#[reticent::tool]
async fn charge_card(
    /// The amount, in cents.
    amount_cents: u64,
) -> Result<String, GatewayError> {
    if amount_cents > 10_000 {
        Err(GatewayError)
    } else {
        Ok(format!("charged {amount_cents} cents"))
    }
}

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("no order {0}; order ids look like ORD-1042")]
    #[disclose(argument)]
    NotFound(String),
    #[error("database unavailable: connection to 10.0.0.9:5432 refused ({0})")]
    Database(String),
}

/// Look up an order by id.
#[reticent::tool(read_only)]
fn lookup_order(
    /// The order id, like "ORD-1042".
    order_id: String,
) -> Result<String, OrderError> {
    match order_id.as_str() {
        "ORD-1042" => Ok("ORD-1042: 1 lamp, paid".into()),
        "ORD-0000" => Err(OrderError::Database("row 7 of orders".into())),
        _ => Err(OrderError::NotFound(order_id)),
    }
}

/// Book a delivery slot.
#[reticent::tool]
fn book_slot(
    /// The day, like 2024-05-01.
    day: String,
) -> Result<String, ArgumentError> {
    if day.len() == 10 {
        Ok(format!("booked {day}"))
    } else {
        Err(ArgumentError::new("`day` must look like 2024-05-01"))
    }
}

fn charge(id: &str, amount_cents: u64) -> ModelResponse {
    ModelResponse::tool_call(id, "charge_card", json!({ "amount_cents": amount_cents }))
}

#[tokio::test]
async fn report_to_model_is_the_default_and_the_run_goes_on() {
    let model = ScriptedModel::new(vec![
        charge("call_1", 25_000),
        ModelResponse::text("The payment step failed; your card was not charged."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(ChargeCard)
        .build()
        .unwrap();

    let result = agent.run("Charge $250").await.unwrap();

    let shown = ToolResult {
        call_id: "call_1".into(),
        name: "charge_card".into(),
        content: "Tool 'charge_card' failed with GatewayError".into(),
        is_error: true,
    };
    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(
        result.output,
        "The payment step failed; your card was not charged."
    );
    assert_eq!(result.turns, 2);
    assert_eq!(
        result.messages,
        vec![
            Message::user("Charge $250"),
            Message::Assistant {
                text: None,
                tool_calls: vec![ToolCall::new(
                    "call_1",
                    "charge_card",
                    json!({"amount_cents": 25_000})
                )],
            },
            Message::Tool(shown.clone()),
            Message::Assistant {
                text: Some("The payment step failed; your card was not charged.".into()),
                tool_calls: vec![],
            },
        ]
    );
    // The model was shown the error result and was offered the tools again.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(last_tool_result(&requests[1]), &shown);
    assert_eq!(requests[1].tools.len(), 1);
}

#[tokio::test]
async fn the_caller_gets_the_full_record_of_a_failure() {
    let model = ScriptedModel::new(vec![charge("call_1", 25_000), ModelResponse::text("sorry")]);
    let agent = Agent::builder(model).tool(ChargeCard).build().unwrap();

    let result = agent.run("Charge $250").await.unwrap();

    assert_eq!(result.tool_failures.len(), 1);
    let failure = &result.tool_failures[0];
    assert_eq!(failure.tool, "charge_card");
    assert_eq!(failure.call_id, "call_1");
    assert_eq!(failure.arguments, json!({"amount_cents": 25_000}));
    assert_eq!(failure.kind, "GatewayError");
    assert!(failure.error.downcast_ref::<GatewayError>().is_some());
    assert_eq!(
        failure.error.to_string(),
        "gateway returned 503 for merchant acct_9921 via postgres://pay:hunter2@10.0.0.7/pay"
    );
    assert_eq!(failure.error_chain(), failure.error.to_string());
    assert!(!failure.timed_out);
    assert_eq!(
        failure.shown_to_model,
        "Tool 'charge_card' failed with GatewayError"
    );
    assert_eq!(
        failure.shown_to_model,
        tool_results(&result.messages)[0].content
    );
}

#[tokio::test]
async fn a_successful_call_is_an_ok_result_and_no_failure() {
    let model = ScriptedModel::new(vec![charge("call_1", 500), ModelResponse::text("done")]);
    let agent = Agent::builder(model.clone())
        .tool(ChargeCard)
        .build()
        .unwrap();

    let result = agent.run("Charge $5").await.unwrap();

    assert!(result.tool_failures.is_empty());
    assert_eq!(
        last_tool_result(&model.requests()[1]),
        &ToolResult {
            call_id: "call_1".into(),
            name: "charge_card".into(),
            content: "charged 500 cents".into(),
            is_error: false,
        }
    );
}

#[tokio::test]
async fn include_error_message_is_the_per_agent_opt_in() {
    let script =
        || ScriptedModel::new(vec![charge("call_1", 25_000), ModelResponse::text("sorry")]);
    let opted_in = Agent::builder(script())
        .tool(ChargeCard)
        .failure_options(ToolFailureOptions::default().include_error_message(true))
        .build()
        .unwrap();
    let default = Agent::builder(script()).tool(ChargeCard).build().unwrap();

    let result = opted_in.run("Charge $250").await.unwrap();
    assert_eq!(
        tool_results(&result.messages)[0].content,
        "Tool 'charge_card' failed with GatewayError: gateway returned 503 for merchant \
         acct_9921 via postgres://pay:hunter2@10.0.0.7/pay"
    );
    assert_eq!(
        result.tool_failures[0].shown_to_model,
        tool_results(&result.messages)[0].content
    );

    // The setting belongs to the agent: another agent keeps the message back.
    let result = default.run("Charge $250").await.unwrap();
    assert_eq!(
        tool_results(&result.messages)[0].content,
        "Tool 'charge_card' failed with GatewayError"
    );
}

#[tokio::test]
async fn argument_errors_are_shown_in_full_and_other_variants_by_kind() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "lookup_order", json!({"order_id": "1042"})),
            ToolCall::new("c2", "lookup_order", json!({"order_id": "ORD-0000"})),
            ToolCall::new("c3", "book_slot", json!({"day": "tomorrow"})),
            ToolCall::new("c4", "lookup_order", json!({"order_id": "ORD-1042"})),
        ]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(LookupOrder)
        .tool(BookSlot)
        .build()
        .unwrap();

    let result = agent.run("Where is my order?").await.unwrap();

    let requests = model.requests();
    let shown = shown_with_errors(&requests[1].messages);
    assert_eq!(
        shown,
        vec![
            (
                "c1",
                "Invalid arguments for tool 'lookup_order': no order 1042; order ids look like ORD-1042",
                true
            ),
            (
                "c2",
                "Tool 'lookup_order' failed with OrderError::Database",
                true
            ),
            (
                "c3",
                "Invalid arguments for tool 'book_slot': `day` must look like 2024-05-01",
                true
            ),
            ("c4", "ORD-1042: 1 lamp, paid", false),
        ]
    );

    let kinds: Vec<(&str, &str)> = result
        .tool_failures
        .iter()
        .map(|f| (f.call_id.as_str(), f.kind.as_str()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("c1", "argument"),
            ("c2", "OrderError::Database"),
            ("c3", "argument")
        ]
    );
    // The withheld message is the caller's.
    assert_eq!(
        result.tool_failures[1].error_chain(),
        "database unavailable: connection to 10.0.0.9:5432 refused (row 7 of orders)"
    );
    assert!(matches!(
        result.tool_failures[1].error.downcast_ref::<OrderError>(),
        Some(OrderError::Database(_))
    ));
}

#[tokio::test]
async fn arguments_that_do_not_decode_are_the_models_fault() {
    let model = ScriptedModel::new(vec![
        charge_with(json!({"amount_cents": "a lot"})),
        ModelResponse::text("sorry"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(ChargeCard)
        .build()
        .unwrap();

    let result = agent.run("Charge").await.unwrap();

    let failure = &result.tool_failures[0];
    assert_eq!(failure.kind, "argument");
    assert!(
        failure
            .shown_to_model
            .starts_with("Invalid arguments for tool 'charge_card': argument `amount_cents`"),
        "{}",
        failure.shown_to_model
    );
    assert_eq!(
        last_tool_result(&model.requests()[1]).content,
        failure.shown_to_model
    );
}

fn charge_with(arguments: serde_json::Value) -> ModelResponse {
    ModelResponse::tool_call("call_1", "charge_card", arguments)
}

#[tokio::test]
async fn propagate_ends_the_run_at_the_first_failure_with_everything_so_far() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "lookup_order", json!({"order_id": "ORD-1042"}))
            .with_usage(Usage::new(100, 10)),
        charge("c2", 25_000)
            .with_text("Charging now.")
            .with_usage(Usage::new(150, 12)),
        ModelResponse::text("never requested"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(LookupOrder)
        .tool(ChargeCard)
        .failure_mode(ToolFailureMode::Propagate)
        .build()
        .unwrap();

    let error = agent.run("Pay for ORD-1042").await.unwrap_err();

    assert_eq!(model.requests().len(), 2, "no model call after the failure");
    assert_eq!(model.remaining(), 1);
    assert_eq!(
        error.to_string(),
        "the tool `charge_card` failed with GatewayError (call c2)"
    );
    assert!(
        error
            .source()
            .and_then(|e| e.downcast_ref::<GatewayError>())
            .is_some()
    );
    assert!(!error.is_cancelled());
    let AgentError::ToolFailed { failure, partial } = error else {
        panic!("expected ToolFailed, got {error:?}");
    };
    assert_eq!(failure.tool, "charge_card");
    assert_eq!(failure.call_id, "c2");
    assert_eq!(failure.kind, "GatewayError");
    assert_eq!(failure.arguments, json!({"amount_cents": 25_000}));
    assert!(failure.error.downcast_ref::<GatewayError>().is_some());

    // The partial result keeps the transcript, the usage and the failures.
    assert_eq!(partial.turns, 2);
    assert_eq!(partial.usage, Usage::new(250, 22));
    assert_eq!(partial.tool_failures.len(), 1);
    assert_eq!(partial.tool_failures[0].call_id, "c2");
    // Every call has its result, so the transcript can be sent again as history.
    assert_eq!(
        partial.messages,
        [
            Message::user("Pay for ORD-1042"),
            Message::Assistant {
                text: None,
                tool_calls: vec![ToolCall::new(
                    "c1",
                    "lookup_order",
                    json!({"order_id": "ORD-1042"})
                )],
            },
            Message::Tool(ToolResult {
                call_id: "c1".into(),
                name: "lookup_order".into(),
                content: "ORD-1042: 1 lamp, paid".into(),
                is_error: false,
            }),
            Message::Assistant {
                text: Some("Charging now.".into()),
                tool_calls: vec![ToolCall::new(
                    "c2",
                    "charge_card",
                    json!({"amount_cents": 25_000})
                )],
            },
            Message::Tool(ToolResult {
                call_id: "c2".into(),
                name: "charge_card".into(),
                content: "Tool 'charge_card' failed with GatewayError".into(),
                is_error: true,
            }),
        ]
    );
    assert_eq!(
        failure.shown_to_model,
        "Tool 'charge_card' failed with GatewayError"
    );
    assert_eq!(partial.trajectory.len(), 2);
}

#[tokio::test]
async fn propagate_reports_the_first_failure_of_the_turn_and_records_the_whole_turn() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "lookup_order", json!({"order_id": "ORD-1042"})),
            ToolCall::new("c2", "lookup_order", json!({"order_id": "ORD-0000"})),
            ToolCall::new("c3", "charge_card", json!({"amount_cents": 500})),
            ToolCall::new("c4", "charge_card", json!({"amount_cents": 25_000})),
        ]),
        ModelResponse::text("never requested"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(LookupOrder)
        .tool(ChargeCard)
        .failure_mode(ToolFailureMode::Propagate)
        .build()
        .unwrap();

    let Err(AgentError::ToolFailed { failure, partial }) = agent.run("go").await else {
        panic!("expected ToolFailed");
    };
    assert_eq!(failure.call_id, "c2");
    assert_eq!(failure.kind, "OrderError::Database");
    assert_eq!(model.requests().len(), 1);
    // The calls ran concurrently: the charge after the failure took effect, and the caller
    // learns of it; the later failure keeps its full error.
    let shown = shown_with_errors(&partial.messages);
    assert_eq!(
        shown,
        [
            ("c1", "ORD-1042: 1 lamp, paid", false),
            (
                "c2",
                "Tool 'lookup_order' failed with OrderError::Database",
                true
            ),
            ("c3", "charged 500 cents", false),
            ("c4", "Tool 'charge_card' failed with GatewayError", true),
        ]
    );
    let failed: Vec<&str> = partial
        .tool_failures
        .iter()
        .map(|f| f.call_id.as_str())
        .collect();
    assert_eq!(failed, ["c2", "c4"]);
    assert!(
        partial.tool_failures[1]
            .error
            .downcast_ref::<GatewayError>()
            .is_some()
    );
}

#[tokio::test]
async fn propagate_without_failures_completes() {
    let model = ScriptedModel::new(vec![charge("c1", 500), ModelResponse::text("charged")]);
    let agent = Agent::builder(model)
        .tool(ChargeCard)
        .failure_mode(ToolFailureMode::Propagate)
        .build()
        .unwrap();

    let result = agent.run("Charge $5").await.unwrap();

    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(result.output, "charged");
    assert!(result.tool_failures.is_empty());
}

#[tokio::test]
async fn a_failed_model_call_ends_the_run_with_the_partial_result() {
    // The script runs out on the second request.
    let model = ScriptedModel::new(vec![charge("c1", 25_000).with_usage(Usage::new(10, 2))]);
    let agent = Agent::builder(model).tool(ChargeCard).build().unwrap();

    let error = agent.run("Charge $250").await.unwrap_err();

    let AgentError::Model { error, partial } = error else {
        panic!("expected a model error, got {error:?}");
    };
    assert_eq!(
        error.message(),
        "the scripted model has no response left for request 2 (1 were scripted)"
    );
    assert_eq!(partial.turns, 1);
    assert_eq!(partial.usage, Usage::new(10, 2));
    assert_eq!(partial.tool_failures.len(), 1);
    assert_eq!(partial.tool_failures[0].kind, "GatewayError");
    assert_eq!(tool_results(&partial.messages).len(), 1);
}
