//! Telemetry: `invoke_agent`, `chat` and `execute_tool` spans with the OpenTelemetry GenAI
//! attribute names; failures on the tool's span; content only on opt-in; a run that recovers
//! from a failure is not marked failed.

use std::time::Duration;

use futures::future::BoxFuture;
use reticent::{
    Agent, CancellationToken, Model, ModelError, ModelRequest, ModelResponse, RunOptions,
    ScriptedModel, ToolCall, ToolFailureMode, ToolFailureOptions, Usage,
};
use reticent_tests::spans::{SpanRecord, Spans, capture_spans};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
#[error("gateway returned 503 via postgres://pay:hunter2@10.0.0.7/pay")]
struct GatewayError;

/// Charge the customer's card.
#[reticent::tool]
fn charge_card(amount_cents: u64) -> Result<String, GatewayError> {
    if amount_cents > 10_000 {
        Err(GatewayError)
    } else {
        Ok(format!("charged {amount_cents} cents"))
    }
}

/// Look up an order; queries the database.
#[reticent::tool(read_only)]
fn lookup_order(order_id: String) -> String {
    let _query = tracing::info_span!("db_query").entered();
    format!("{order_id}: 1 lamp")
}

/// Take a minute.
#[reticent::tool(timeout = "1s")]
async fn slow_report() -> String {
    tokio::time::sleep(Duration::from_secs(60)).await;
    "report".into()
}

fn agent(model: impl Model) -> reticent::AgentBuilder {
    Agent::builder(model)
        .tool(ChargeCard)
        .tool(LookupOrder)
        .tool(SlowReport)
}

fn recovering_script() -> ScriptedModel {
    ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "charge_card", json!({"amount_cents": 25_000}))
            .with_usage(Usage::new(100, 10)),
        ModelResponse::tool_calls(vec![
            ToolCall::new("c2", "charge_card", json!({"amount_cents": 500})),
            ToolCall::new("c3", "lookup_order", json!({"order_id": "ORD-1042"})),
        ])
        .with_usage(Usage::new(150, 20)),
        ModelResponse::text("Charged $5 after the first attempt failed.")
            .with_usage(Usage::new(200, 30)),
    ])
}

fn assert_tool_span(spans: &Spans, span: &SpanRecord, tool: &str, call_id: &str) {
    assert_eq!(
        span.field("otel.name"),
        Some(format!("execute_tool {tool}").as_str())
    );
    assert_eq!(span.field("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(span.field("gen_ai.tool.name"), Some(tool));
    assert_eq!(span.field("gen_ai.tool.call.id"), Some(call_id));
    assert_eq!(span.field("gen_ai.tool.type"), Some("function"));
    assert_eq!(spans.parent_name(span), Some("invoke_agent"));
}

#[tokio::test]
async fn a_run_is_one_invoke_agent_span_with_chat_and_execute_tool_spans_inside() {
    let (spans, _guard) = capture_spans();

    let result = agent(recovering_script())
        .build()
        .unwrap()
        .run("Charge")
        .await
        .unwrap();
    assert_eq!(result.tool_failures.len(), 1);

    let run = spans.one("invoke_agent");
    assert_eq!(run.field("otel.name"), Some("invoke_agent"));
    assert_eq!(run.field("gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(spans.parent_name(&run), None);
    // Usage is summed over the run.
    assert_eq!(run.field("gen_ai.usage.input_tokens"), Some("450"));
    assert_eq!(run.field("gen_ai.usage.output_tokens"), Some("60"));
    assert_eq!(run.field("reticent.turns"), Some("3"));
    assert_eq!(run.field("reticent.tool_failures"), Some("1"));
    assert_eq!(run.field("reticent.stop_reason"), Some("Completed"));
    // The run recovered from the failure: it is not marked failed.
    assert_eq!(run.field("otel.status_code"), None);
    assert_eq!(run.field("error.type"), None);

    let chats = spans.named("chat");
    assert_eq!(chats.len(), 3);
    let usage: Vec<(Option<&str>, Option<&str>)> = chats
        .iter()
        .map(|c| {
            assert_eq!(c.field("otel.name"), Some("chat"));
            assert_eq!(c.field("gen_ai.operation.name"), Some("chat"));
            assert_eq!(c.field("otel.status_code"), None);
            assert_eq!(spans.parent_name(c), Some("invoke_agent"));
            (
                c.field("gen_ai.usage.input_tokens"),
                c.field("gen_ai.usage.output_tokens"),
            )
        })
        .collect();
    assert_eq!(
        usage,
        [
            (Some("100"), Some("10")),
            (Some("150"), Some("20")),
            (Some("200"), Some("30"))
        ]
    );

    assert_eq!(spans.named("execute_tool").len(), 3);
    let failed = spans.tool_call("c1");
    assert_tool_span(&spans, &failed, "charge_card", "c1");
    assert_eq!(failed.field("error.type"), Some("GatewayError"));
    assert_eq!(failed.field("otel.status_code"), Some("ERROR"));
    // The span is the caller's: it carries the full message.
    assert_eq!(
        failed.field("error.message"),
        Some("gateway returned 503 via postgres://pay:hunter2@10.0.0.7/pay")
    );
    assert_eq!(failed.field("reticent.tool.timed_out"), Some("false"));

    for (call_id, tool) in [("c2", "charge_card"), ("c3", "lookup_order")] {
        let ok = spans.tool_call(call_id);
        assert_tool_span(&spans, &ok, tool, call_id);
        assert_eq!(ok.field("error.type"), None);
        assert_eq!(ok.field("otel.status_code"), None);
        assert_eq!(ok.field("error.message"), None);
    }
}

#[tokio::test]
async fn arguments_and_results_are_recorded_only_on_opt_in() {
    let (spans, _guard) = capture_spans();
    agent(recovering_script())
        .build()
        .unwrap()
        .run("Charge")
        .await
        .unwrap();
    for span in spans.named("execute_tool") {
        assert_eq!(span.field("gen_ai.tool.call.arguments"), None, "{span:?}");
        assert_eq!(span.field("gen_ai.tool.call.result"), None, "{span:?}");
    }
    drop(_guard);

    let (spans, _guard) = capture_spans();
    agent(recovering_script())
        .record_content(true)
        .build()
        .unwrap()
        .run("Charge")
        .await
        .unwrap();
    let lookup = spans.tool_call("c3");
    assert_eq!(
        lookup.field("gen_ai.tool.call.arguments"),
        Some(r#"{"order_id":"ORD-1042"}"#)
    );
    assert_eq!(
        lookup.field("gen_ai.tool.call.result"),
        Some("ORD-1042: 1 lamp")
    );
    let failed = spans.tool_call("c1");
    assert_eq!(
        failed.field("gen_ai.tool.call.arguments"),
        Some(r#"{"amount_cents":25000}"#)
    );
    assert_eq!(failed.field("gen_ai.tool.call.result"), None);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_is_on_the_tool_span() {
    let (spans, _guard) = capture_spans();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "slow_report", json!({})),
        ModelResponse::text("not ready"),
    ]);

    agent(model).build().unwrap().run("Report").await.unwrap();

    let span = spans.tool_call("c1");
    assert_tool_span(&spans, &span, "slow_report", "c1");
    assert_eq!(span.field("error.type"), Some("timeout"));
    assert_eq!(span.field("otel.status_code"), Some("ERROR"));
    assert_eq!(span.field("reticent.tool.timed_out"), Some("true"));
    assert_eq!(
        span.field("error.message"),
        Some("the tool `slow_report` did not finish within 1s")
    );
    assert_eq!(spans.one("invoke_agent").field("otel.status_code"), None);
}

#[tokio::test]
async fn faults_the_loop_detects_are_on_the_tool_span_too() {
    let (spans, _guard) = capture_spans();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "refund_order", json!({})),
            ToolCall::new("c2", "charge_card", serde_json::Value::String("{".into())),
        ]),
        ModelResponse::text("sorry"),
    ]);

    agent(model).build().unwrap().run("Refund").await.unwrap();

    let unknown = spans.tool_call("c1");
    assert_tool_span(&spans, &unknown, "refund_order", "c1");
    assert_eq!(unknown.field("error.type"), Some("unknown_tool"));
    assert_eq!(unknown.field("otel.status_code"), Some("ERROR"));
    let not_json = spans.tool_call("c2");
    assert_eq!(not_json.field("error.type"), Some("argument"));
    assert_eq!(not_json.field("otel.status_code"), Some("ERROR"));
}

#[tokio::test]
async fn a_propagated_failure_marks_the_run_failed() {
    let (spans, _guard) = capture_spans();

    let error = agent(recovering_script())
        .failure_mode(ToolFailureMode::Propagate)
        .build()
        .unwrap()
        .run("Charge")
        .await
        .unwrap_err();
    assert!(matches!(error, reticent::AgentError::ToolFailed { .. }));

    let run = spans.one("invoke_agent");
    assert_eq!(run.field("otel.status_code"), Some("ERROR"));
    assert_eq!(run.field("error.type"), Some("tool_failed"));
    assert_eq!(run.field("gen_ai.usage.input_tokens"), Some("100"));
    assert_eq!(
        spans.tool_call("c1").field("error.type"),
        Some("GatewayError")
    );
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_run_is_marked_cancelled_and_no_tool_span_failed() {
    // On the paused clock the cancellation at 50ms comes before the tool's 1s limit.
    let (spans, _guard) = capture_spans();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "slow_report", json!({})),
        ModelResponse::text("never requested"),
    ]);
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    });

    let error = agent(model)
        .failure_options(ToolFailureOptions::default().timeout(Duration::from_secs(30)))
        .build()
        .unwrap()
        .run_with("Report", RunOptions::default().cancellation(token))
        .await
        .unwrap_err();
    assert!(error.is_cancelled());

    let run = spans.one("invoke_agent");
    assert_eq!(run.field("otel.status_code"), Some("ERROR"));
    assert_eq!(run.field("error.type"), Some("cancelled"));
    let tool = spans.tool_call("c1");
    assert_eq!(tool.field("error.type"), None);
    assert_eq!(tool.field("otel.status_code"), None);
}

#[tokio::test]
async fn a_failed_model_call_marks_its_chat_span_and_the_run() {
    let (spans, _guard) = capture_spans();

    let error = agent(ScriptedModel::new(vec![]))
        .build()
        .unwrap()
        .run("Hi")
        .await
        .unwrap_err();
    assert!(matches!(error, reticent::AgentError::Model { .. }));

    let chat = spans.one("chat");
    assert_eq!(chat.field("otel.status_code"), Some("ERROR"));
    assert_eq!(chat.field("error.type"), Some("model"));
    let run = spans.one("invoke_agent");
    assert_eq!(run.field("otel.status_code"), Some("ERROR"));
    assert_eq!(run.field("error.type"), Some("model"));
}

/// A provider that opens its own span when asked, before it returns its future, and another
/// while the future runs.
struct TracedProvider {
    inner: ScriptedModel,
}

impl Model for TracedProvider {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let _prepare = tracing::info_span!("provider_prepare").entered();
        let inner = &self.inner;
        Box::pin(async move {
            tracing::info_span!("provider_send").in_scope(|| ());
            inner.complete(request).await
        })
    }
}

#[tokio::test]
async fn spans_of_models_and_tools_nest_inside_chat_and_execute_tool() {
    let (spans, _guard) = capture_spans();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "lookup_order", json!({"order_id": "ORD-1042"})),
        ModelResponse::text("found"),
    ]);

    agent(TracedProvider { inner: model })
        .build()
        .unwrap()
        .run("Find it")
        .await
        .unwrap();

    for name in ["provider_prepare", "provider_send"] {
        let inside = spans.named(name);
        assert_eq!(inside.len(), 2, "{name}");
        for span in &inside {
            assert_eq!(spans.parent_name(span), Some("chat"), "{name}");
        }
    }
    let query = spans.one("db_query");
    assert_eq!(spans.parent_name(&query), Some("execute_tool"));
}
