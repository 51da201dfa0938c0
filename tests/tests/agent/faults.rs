//! The model's and the tools' faults that never reach a tool's own error type: an unknown tool
//! name, arguments that are not JSON, a panicking tool. Each becomes an error result and the
//! run goes on.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use reticent::{
    Agent, AgentError, ArgumentError, ModelResponse, ScriptedModel, StopReason, Tool, ToolCall,
    ToolContext, ToolDefinition, ToolFailureMode, ToolResult,
    failures::{ToolPanicked, UnknownTool},
    tool::ToolFuture,
};
use reticent_tests::transcript::{last_tool_result, tool_results};
use serde_json::{Value, json};

/// Look up an order by id.
#[reticent::tool(read_only)]
fn lookup_order(
    /// The order id, like "ORD-1042".
    order_id: String,
) -> String {
    format!("{order_id}: 1 lamp, paid")
}

/// Charge the customer's card.
#[reticent::tool]
async fn charge_card(
    /// The amount, in cents.
    amount_cents: u64,
) -> String {
    format!("charged {amount_cents} cents")
}

/// Recompute the totals (has a bug).
#[reticent::tool]
fn recompute_totals() -> String {
    let rows: Vec<u64> = Vec::new();
    panic!(
        "index out of bounds reading row {} of ledger at /srv/ledger.db",
        rows.len()
    );
}

/// Rebuild the search index (has a bug that shows after a while).
#[reticent::tool]
async fn rebuild_index() -> String {
    tokio::task::yield_now().await;
    panic!("static payload from /srv/index");
}

#[tokio::test]
async fn an_unknown_tool_name_lists_the_available_tools() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("call_1", "refund_order", json!({"order_id": "ORD-1042"})),
        ModelResponse::text("I cannot refund orders."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(LookupOrder)
        .tool(ChargeCard)
        .build()
        .unwrap();

    let result = agent.run("Refund ORD-1042").await.unwrap();

    let expected = ToolResult {
        call_id: "call_1".into(),
        name: "refund_order".into(),
        content: "Unknown tool 'refund_order'. Available tools: lookup_order, charge_card".into(),
        is_error: true,
    };
    assert_eq!(last_tool_result(&model.requests()[1]), &expected);
    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(result.output, "I cannot refund orders.");

    let failure = &result.tool_failures[0];
    assert_eq!(failure.tool, "refund_order");
    assert_eq!(failure.kind, "unknown_tool");
    assert_eq!(failure.arguments, json!({"order_id": "ORD-1042"}));
    assert_eq!(failure.shown_to_model, expected.content);
    assert!(!failure.timed_out);
    assert_eq!(
        failure.error.downcast_ref::<UnknownTool>().unwrap().name,
        "refund_order"
    );
    assert_eq!(
        failure.error.to_string(),
        "the model called the unknown tool `refund_order`"
    );
}

#[tokio::test]
async fn an_unknown_tool_name_when_there_are_no_tools() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("call_1", "search", json!({})),
        ModelResponse::text("ok"),
    ]);
    let agent = Agent::builder(model.clone()).build().unwrap();

    agent.run("Search").await.unwrap();

    assert_eq!(
        last_tool_result(&model.requests()[1]).content,
        "Unknown tool 'search': no tools are available"
    );
}

#[tokio::test]
async fn a_very_long_unknown_name_is_not_echoed_whole() {
    let name = "x".repeat(5000);
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("call_1", name.clone(), json!({})),
        ModelResponse::text("ok"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(LookupOrder)
        .build()
        .unwrap();

    let result = agent.run("go").await.unwrap();

    let requests = model.requests();
    let shown = &last_tool_result(&requests[1]).content;
    assert!(shown.starts_with("Unknown tool 'xxx"), "{shown}");
    assert!(
        shown.ends_with("'. Available tools: lookup_order"),
        "{shown}"
    );
    assert!(shown.len() < 200, "{shown}");
    // The caller keeps the name the model sent.
    assert_eq!(result.tool_failures[0].tool, name);
}

#[tokio::test]
async fn arguments_that_are_not_valid_json_are_an_argument_error() {
    let raw = r#"{"amount_cents": 25"#;
    let parse_error = serde_json::from_str::<Value>(raw).unwrap_err();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("call_1", "charge_card", Value::String(raw.into())),
        ModelResponse::text("Let me try again."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(ChargeCard)
        .build()
        .unwrap();

    let result = agent.run("Charge 25 cents").await.unwrap();

    let expected = format!(
        "Invalid arguments for tool 'charge_card': the arguments are not valid JSON \
         ({parse_error}); send a JSON object"
    );
    assert_eq!(
        expected,
        "Invalid arguments for tool 'charge_card': the arguments are not valid JSON (EOF while \
         parsing an object at line 1 column 19); send a JSON object"
    );
    let requests = model.requests();
    let shown = last_tool_result(&requests[1]);
    assert_eq!(shown.content, expected);
    assert!(shown.is_error);
    assert_eq!(result.stop_reason, StopReason::Completed);

    let failure = &result.tool_failures[0];
    assert_eq!(failure.kind, "argument");
    // The caller gets the raw text the model sent.
    assert_eq!(failure.arguments, Value::String(raw.into()));
    assert!(failure.error.downcast_ref::<ArgumentError>().is_some());
}

#[tokio::test]
async fn arguments_sent_as_json_text_are_decoded() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call(
            "call_1",
            "charge_card",
            Value::String(r#"{"amount_cents": 25}"#.into()),
        ),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(ChargeCard)
        .build()
        .unwrap();

    let result = agent.run("Charge 25 cents").await.unwrap();

    assert!(result.tool_failures.is_empty());
    assert_eq!(
        last_tool_result(&model.requests()[1]).content,
        "charged 25 cents"
    );
}

#[tokio::test]
async fn a_panicking_tool_is_a_failure_of_kind_panic_and_the_run_goes_on() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("call_1", "recompute_totals", json!({})),
            ToolCall::new("call_2", "lookup_order", json!({"order_id": "ORD-1042"})),
            ToolCall::new("call_3", "rebuild_index", json!({})),
        ]),
        ModelResponse::text("Recomputing the totals failed."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(RecomputeTotals)
        .tool(LookupOrder)
        .tool(RebuildIndex)
        .build()
        .unwrap();

    let result = agent.run("Fix the totals").await.unwrap();

    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(result.output, "Recomputing the totals failed.");
    let requests = model.requests();
    let shown: Vec<(&str, &str, bool)> = tool_results(&requests[1].messages)
        .into_iter()
        .map(|r| (r.name.as_str(), r.content.as_str(), r.is_error))
        .collect();
    assert_eq!(
        shown,
        vec![
            (
                "recompute_totals",
                "Tool 'recompute_totals' failed with panic",
                true
            ),
            ("lookup_order", "ORD-1042: 1 lamp, paid", false),
            (
                "rebuild_index",
                "Tool 'rebuild_index' failed with panic",
                true
            ),
        ]
    );

    // The payload is the caller's, formatted or static.
    let payloads: Vec<(&str, &str)> = result
        .tool_failures
        .iter()
        .map(|f| {
            assert_eq!(f.kind, "panic");
            let panicked = f.error.downcast_ref::<ToolPanicked>().unwrap();
            assert_eq!(panicked.tool, f.tool);
            (f.tool.as_str(), panicked.payload.as_str())
        })
        .collect();
    assert_eq!(
        payloads,
        vec![
            (
                "recompute_totals",
                "index out of bounds reading row 0 of ledger at /srv/ledger.db"
            ),
            ("rebuild_index", "static payload from /srv/index"),
        ]
    );
    assert_eq!(
        result.tool_failures[1].error.to_string(),
        "the tool `rebuild_index` panicked: static payload from /srv/index"
    );
}

/// A hand-written tool whose `call` panics before it returns a future.
struct EagerPanic {
    definition: ToolDefinition,
}

impl EagerPanic {
    fn new() -> Self {
        Self {
            definition: ToolDefinition::new(
                "eager",
                "Panics at once.",
                json!({"type": "object", "properties": {}}),
            ),
        }
    }
}

impl Tool for EagerPanic {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, _args: Value, _cx: ToolContext) -> ToolFuture<'_> {
        std::panic::panic_any(42_u32)
    }
}

#[tokio::test]
async fn a_tool_that_panics_in_call_itself_is_caught_too() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("call_1", "eager", json!({})),
        ModelResponse::text("ok"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(EagerPanic::new())
        .build()
        .unwrap();

    let result = agent.run("go").await.unwrap();

    assert_eq!(
        last_tool_result(&model.requests()[1]).content,
        "Tool 'eager' failed with panic"
    );
    let failure = &result.tool_failures[0];
    assert_eq!(failure.kind, "panic");
    assert_eq!(
        failure
            .error
            .downcast_ref::<ToolPanicked>()
            .unwrap()
            .payload,
        "a non-string panic payload"
    );
}

#[tokio::test]
async fn a_panic_under_propagate_ends_the_run_as_a_tool_failure() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("call_1", "recompute_totals", json!({})),
        ModelResponse::text("never requested"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(RecomputeTotals)
        .failure_mode(ToolFailureMode::Propagate)
        .build()
        .unwrap();

    let error = agent.run("Fix the totals").await.unwrap_err();

    let AgentError::ToolFailed { failure, .. } = error else {
        panic!("expected ToolFailed, got {error:?}");
    };
    assert_eq!(failure.kind, "panic");
    assert_eq!(model.requests().len(), 1);
}

/// Counts its calls; for checking that a faulty call never reaches a tool.
#[derive(Default)]
struct Counter {
    calls: AtomicUsize,
}

#[reticent::tools]
impl Counter {
    /// Add to the counter.
    #[tool]
    fn add(&self, n: u64) -> u64 {
        self.calls.fetch_add(1, Ordering::SeqCst);
        n
    }
}

#[tokio::test]
async fn faulty_calls_never_reach_the_tool_and_later_calls_still_run() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "add", Value::String("{n: 1}".into())),
            ToolCall::new("c2", "ad", json!({"n": 1})),
        ]),
        ModelResponse::tool_call("c3", "add", json!({"n": 2})),
        ModelResponse::text("added 2"),
    ]);
    let counter = Arc::new(Counter::default());
    let agent = Agent::builder(model)
        .toolbox(Arc::clone(&counter))
        .build()
        .unwrap();

    let result = agent.run("Add").await.unwrap();

    assert_eq!(counter.calls.load(Ordering::SeqCst), 1);
    let kinds: Vec<&str> = result
        .tool_failures
        .iter()
        .map(|f| f.kind.as_str())
        .collect();
    assert_eq!(kinds, ["argument", "unknown_tool"]);
    assert_eq!(tool_results(&result.messages)[2].content, "2");
    assert_eq!(result.stop_reason, StopReason::Completed);
}
