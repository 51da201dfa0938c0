//! `run_stream`: what happens, as it happens; `AgentEvent::Finished` is always the last item.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use reticent::{
    Agent, AgentError, AgentEvent, ModelResponse, ScriptedModel, StopReason, ToolCall,
    ToolFailureMode, Usage,
};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
#[error("gateway returned 503 via postgres://pay:hunter2@10.0.0.7/pay")]
struct GatewayError;

/// Charge the customer's card.
#[reticent::tool]
fn charge_card(amount_cents: u64) -> Result<String, GatewayError> {
    let _ = amount_cents;
    Err(GatewayError)
}

/// Look up an order.
#[reticent::tool(read_only)]
fn lookup_order(order_id: String) -> String {
    format!("{order_id}: 1 lamp")
}

fn agent(model: &ScriptedModel) -> reticent::AgentBuilder {
    Agent::builder(model.clone())
        .tool(ChargeCard)
        .tool(LookupOrder)
}

fn script() -> ScriptedModel {
    ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "charge_card", json!({"amount_cents": 4200})),
            ToolCall::new("c2", "lookup_order", json!({"order_id": "ORD-1042"})),
        ])
        .with_usage(Usage::new(100, 10)),
        ModelResponse::text("The charge failed; the order is ORD-1042.")
            .with_usage(Usage::new(150, 20)),
    ])
}

/// A compact name for each event, for checking their order.
fn describe(event: &AgentEvent) -> String {
    match event {
        AgentEvent::TextDelta { turn, text } => format!("text {turn}: {text}"),
        AgentEvent::ToolCallRequested { turn, id, .. } => format!("requested {turn} {id}"),
        AgentEvent::ModelResponded { turn, .. } => format!("model {turn}"),
        AgentEvent::ToolStarted { call } => format!("started {}", call.id),
        AgentEvent::ToolSucceeded { call_id, .. } => format!("succeeded {call_id}"),
        AgentEvent::ToolFailed(failure) => format!("failed {}", failure.call_id),
        AgentEvent::Finished(Ok(_)) => "finished ok".into(),
        AgentEvent::Finished(Err(_)) => "finished err".into(),
        other => format!("{other:?}"),
    }
}

#[tokio::test]
async fn the_events_tell_the_run_in_order() {
    let model = script();
    let events: Vec<AgentEvent> = agent(&model)
        .build()
        .unwrap()
        .run_stream("Pay and look up")
        .collect()
        .await;

    assert_eq!(
        events.iter().map(describe).collect::<Vec<_>>(),
        [
            // the model's turn as it streams in, then whole
            "requested 1 c1",
            "requested 1 c2",
            "model 1",
            "started c1",
            "started c2",
            "failed c1",
            "succeeded c2",
            "text 2: The charge failed; the order is ORD-1042.",
            "model 2",
            "finished ok"
        ]
    );

    // events[0] and [1]: the calls requested as the turn streamed in
    let AgentEvent::ModelResponded { turn: 1, response } = &events[2] else {
        unreachable!()
    };
    assert_eq!(response.tool_calls.len(), 2);
    assert_eq!(response.usage, Usage::new(100, 10));
    let AgentEvent::ToolStarted { call } = &events[3] else {
        unreachable!()
    };
    assert_eq!(
        call,
        &ToolCall::new("c1", "charge_card", json!({"amount_cents": 4200}))
    );
    let AgentEvent::ToolFailed(failure) = &events[5] else {
        unreachable!()
    };
    assert_eq!(failure.tool, "charge_card");
    assert_eq!(failure.kind, "GatewayError");
    assert_eq!(
        failure.shown_to_model,
        "Tool 'charge_card' failed with GatewayError"
    );
    // The event is the caller's: it has the full error.
    assert!(failure.error.downcast_ref::<GatewayError>().is_some());
    let AgentEvent::ToolSucceeded {
        tool,
        call_id,
        output,
        ..
    } = &events[6]
    else {
        unreachable!()
    };
    assert_eq!(
        (tool.as_str(), call_id.as_str(), output.as_str()),
        ("lookup_order", "c2", "ORD-1042: 1 lamp")
    );

    let Some(AgentEvent::Finished(Ok(result))) = events.last() else {
        unreachable!()
    };
    assert_eq!(result.output, "The charge failed; the order is ORD-1042.");
    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(result.usage, Usage::new(250, 30));
    assert_eq!(result.tool_failures.len(), 1);
    assert_eq!(result.tool_failures[0].call_id, failure.call_id);
    assert_eq!(
        result.tool_failures[0].shown_to_model,
        failure.shown_to_model
    );
}

#[tokio::test]
async fn the_stream_gives_the_same_result_as_run() {
    let streamed: Vec<AgentEvent> = agent(&script())
        .build()
        .unwrap()
        .run_stream("Pay and look up")
        .collect()
        .await;
    let ran = agent(&script())
        .build()
        .unwrap()
        .run("Pay and look up")
        .await
        .unwrap();

    let Some(AgentEvent::Finished(Ok(streamed))) = streamed.last() else {
        panic!("{streamed:#?}");
    };
    assert_eq!(streamed.messages, ran.messages);
    assert_eq!(streamed.trajectory, ran.trajectory);
    assert_eq!(streamed.output, ran.output);
}

#[tokio::test]
async fn nothing_runs_until_the_stream_is_polled() {
    let model = script();
    let stream = agent(&model).build().unwrap().run_stream("Pay");
    tokio::task::yield_now().await;
    assert!(model.requests().is_empty());

    let events: Vec<AgentEvent> = stream.collect().await;

    assert_eq!(model.requests().len(), 2);
    // seven events, and the turns as they streamed in: two calls requested, one text delta
    assert_eq!(events.len(), 10);
}

#[tokio::test]
async fn finished_is_last_and_carries_the_error_when_the_run_fails() {
    let model = script();
    let events: Vec<AgentEvent> = agent(&model)
        .failure_mode(ToolFailureMode::Propagate)
        .build()
        .unwrap()
        .run_stream("Pay")
        .collect()
        .await;

    assert_eq!(
        events.iter().map(describe).collect::<Vec<_>>(),
        [
            "requested 1 c1",
            "requested 1 c2",
            "model 1",
            "started c1",
            "started c2",
            "failed c1",
            "succeeded c2",
            "finished err"
        ]
    );
    let Some(AgentEvent::Finished(Err(AgentError::ToolFailed { failure, partial }))) =
        events.last()
    else {
        panic!("{events:#?}");
    };
    assert_eq!(failure.call_id, "c1");
    assert_eq!(partial.tool_failures.len(), 1);

    // A model that cannot be called.
    let events: Vec<AgentEvent> = agent(&ScriptedModel::new(vec![]))
        .build()
        .unwrap()
        .run_stream("Pay")
        .collect()
        .await;
    assert_eq!(events.len(), 1);
    assert!(matches!(
        &events[0],
        AgentEvent::Finished(Err(AgentError::Model { .. }))
    ));
}

#[tokio::test]
async fn the_stream_can_be_driven_from_another_task() {
    let stream = agent(&script()).build().unwrap().run_stream("Pay");

    let events = tokio::spawn(stream.collect::<Vec<_>>()).await.unwrap();

    assert!(matches!(events.last(), Some(AgentEvent::Finished(Ok(_)))));
}

/// Sets a flag when dropped.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A tool that takes a minute and says when it is dropped.
struct Slow {
    dropped: Arc<AtomicBool>,
}

#[reticent::tools]
impl Slow {
    /// Take a minute.
    #[tool]
    async fn take_a_minute(&self) -> String {
        let _guard = SetOnDrop(Arc::clone(&self.dropped));
        tokio::time::sleep(Duration::from_secs(60)).await;
        "done".into()
    }
}

#[tokio::test]
async fn dropping_the_stream_stops_the_run() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "take_a_minute", json!({})),
        ModelResponse::text("never requested"),
    ]);
    let dropped = Arc::new(AtomicBool::new(false));
    let mut stream = Box::pin(
        Agent::builder(model.clone())
            .toolbox(Arc::new(Slow {
                dropped: Arc::clone(&dropped),
            }))
            .build()
            .unwrap()
            .run_stream("Wait"),
    );

    // Read until the tool has started, and once more so that it runs.
    while let Some(event) = stream.next().await {
        if matches!(event, AgentEvent::ToolStarted { .. }) {
            break;
        }
    }
    let next = tokio::time::timeout(Duration::from_millis(20), stream.next()).await;
    assert!(next.is_err(), "the slow tool finished: {next:?}");
    assert!(!dropped.load(Ordering::SeqCst));
    drop(stream);

    assert!(dropped.load(Ordering::SeqCst));
    assert_eq!(model.requests().len(), 1);
}

/// Wait a while.
#[reticent::tool]
async fn wait(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("waited {ms}ms")
}

#[tokio::test(start_paused = true)]
async fn a_call_is_reported_started_when_it_starts() {
    // One call at a time: the second starts when the first has finished.
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "wait", json!({"ms": 100})),
            ToolCall::new("c2", "wait", json!({"ms": 100})),
        ]),
        ModelResponse::text("done"),
    ]);
    let mut stream = Box::pin(
        Agent::builder(model)
            .tool(Wait)
            .max_parallel_tools(1)
            .build()
            .unwrap()
            .run_stream("Wait twice"),
    );
    let start = tokio::time::Instant::now();

    let mut started = Vec::new();
    while let Some(event) = stream.next().await {
        if let AgentEvent::ToolStarted { call } = event {
            started.push((call.id, start.elapsed()));
        }
    }

    assert_eq!(started.len(), 2);
    assert_eq!(started[0], ("c1".to_owned(), Duration::ZERO));
    assert_eq!(started[1].0, "c2");
    assert!(
        started[1].1 >= Duration::from_millis(100),
        "c2 was reported started at {:?}, before c1 finished",
        started[1].1
    );
}
