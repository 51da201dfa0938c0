//! Nothing a tool, an error value or a drop does can crash or hang the caller's program: error
//! chains that loop or panic, tool futures that panic as they are dropped, sync tools under a
//! time limit or a cancellation, argument values kept off the spans, and calls the model makes
//! in a turn that offered no tools.

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use reticent::mcp::McpServer;
use reticent::mcp::rmcp::model::CallToolRequestParams;
use reticent::{
    Agent, AgentError, CancellationToken, ModelResponse, RunOptions, ScriptedModel, StopReason,
    ToolCall, ToolFailureOptions, failures::EffectOutcome,
};
use reticent_tests::spans::capture_spans;
use reticent_tests::transcript::tool_results;
use serde_json::json;

// ---- error values that misbehave -------------------------------------------------------------

/// An error whose `source()` is itself.
#[derive(Debug)]
struct Selfish;

impl fmt::Display for Selfish {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("selfish error")
    }
}

impl StdError for Selfish {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(self)
    }
}

/// An error whose `source()` panics.
#[derive(Debug)]
struct PanickingSource;

impl fmt::Display for PanickingSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an error with a bad source")
    }
}

impl StdError for PanickingSource {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        panic!("source() panicked")
    }
}

/// Fails with an error whose source is itself.
#[reticent::tool]
fn loops() -> Result<String, Selfish> {
    Err(Selfish)
}

/// Fails with an error whose source panics.
#[reticent::tool]
fn source_panics() -> Result<String, PanickingSource> {
    Err(PanickingSource)
}

fn two_bad_errors() -> ScriptedModel {
    ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "loops", json!({})),
            ToolCall::new("c2", "source_panics", json!({})),
        ]),
        ModelResponse::text("Both failed."),
    ])
}

#[tokio::test]
async fn error_chains_that_loop_or_panic_are_walked_within_bounds() {
    let (spans, _guard) = capture_spans();
    let agent = Agent::builder(two_bad_errors())
        .tool(Loops)
        .tool(SourcePanics)
        .build()
        .unwrap();

    let result = agent.run("Go").await.unwrap();

    assert_eq!(result.output, "Both failed.");
    let chains: Vec<String> = result
        .tool_failures
        .iter()
        .map(|f| f.error_chain())
        .collect();
    assert_eq!(
        chains,
        [
            "selfish error (the chain of sources loops back on itself)",
            "an error with a bad source (the error's source() panicked)",
        ]
    );
    // The spans, which record the chain, were recorded too.
    assert_eq!(
        spans.tool_call("c1").field("error.message"),
        Some("selfish error (the chain of sources loops back on itself)")
    );
    assert_eq!(
        spans.tool_call("c2").field("error.message"),
        Some("an error with a bad source (the error's source() panicked)")
    );
}

#[tokio::test]
async fn an_mcp_server_answers_calls_whose_error_chain_loops_or_panics() {
    let failures = reticent_tests::mcp::Failures::default();
    let server = McpServer::builder()
        .tool(Loops)
        .tool(SourcePanics)
        .on_failure(failures.hook())
        .build()
        .unwrap();
    let connection = reticent_tests::mcp::connect(server).await;
    for name in ["loops", "source_panics"] {
        let result = tokio::time::timeout(
            Duration::from_secs(10),
            connection
                .client
                .call_tool(CallToolRequestParams::new(name)),
        )
        .await
        .expect("the server answers")
        .expect("a result");
        assert_eq!(result.is_error, Some(true));
    }
    assert_eq!(failures.all().len(), 2);
}

// ---- a future that panics as it is dropped -----------------------------------------------------

/// Never finishes, and panics when dropped.
struct PanicOnDrop;

impl Future for PanicOnDrop {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("dropped while running");
    }
}

/// Waits forever; its future panics when it is dropped.
#[reticent::tool(timeout = "50ms")]
async fn hangs() -> String {
    PanicOnDrop.await;
    "never".into()
}

#[tokio::test]
async fn a_future_that_panics_when_timed_out_is_recorded_as_a_panic_and_the_run_goes_on() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "hangs", json!({})),
        ModelResponse::text("It hung."),
    ]);
    let agent = Agent::builder(model).tool(Hangs).build().unwrap();

    let result = agent.run("Go").await.unwrap();

    assert_eq!(result.output, "It hung.");
    let failure = &result.tool_failures[0];
    assert_eq!(failure.kind, "panic");
    assert!(failure.timed_out);
    assert_eq!(failure.shown_to_model, "Tool 'hangs' failed with panic");
    assert_eq!(
        failure.error.to_string(),
        "the tool `hangs` panicked: dropped while running (as it was stopped after its time limit of 50ms)"
    );
    assert_eq!(result.effects[0].outcome, EffectOutcome::Unknown);
}

#[tokio::test]
async fn a_future_that_panics_when_its_run_is_cancelled_does_not_crash_the_caller() {
    let model = ScriptedModel::new(vec![ModelResponse::tool_call("c1", "hangs", json!({}))]);
    let agent = Agent::builder(model)
        .tool(Hangs)
        // longer than the cancellation below
        .failure_options(ToolFailureOptions::default().timeout(Duration::from_secs(60)))
        .build()
        .unwrap();
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancel.cancel();
    });

    let error = agent
        .run_with("Go", RunOptions::default().cancellation(token))
        .await
        .unwrap_err();

    let AgentError::Cancelled { partial } = error else {
        panic!("expected Cancelled, got {error:?}");
    };
    assert_eq!(partial.effects[0].outcome, EffectOutcome::Unknown);
}

#[tokio::test]
async fn an_mcp_call_whose_future_panics_when_timed_out_is_answered() {
    let server = McpServer::builder().tool(Hangs).build().unwrap();
    let connection = reticent_tests::mcp::connect(server).await;
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        connection
            .client
            .call_tool(CallToolRequestParams::new("hangs")),
    )
    .await
    .expect("the server answers")
    .expect("a result");
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        reticent_tests::mcp::text(&result),
        "Tool 'hangs' failed with panic"
    );
}

// ---- sync tools under a time limit or a cancellation ------------------------------------------

static SLEPT: AtomicU32 = AtomicU32::new(0);

/// Blocks its thread for two seconds.
#[reticent::tool(timeout = "100ms")]
fn sleeps() -> String {
    std::thread::sleep(Duration::from_secs(2));
    SLEPT.fetch_add(1, Ordering::SeqCst);
    "woke up".into()
}

#[tokio::test]
async fn a_sync_tool_is_stopped_at_its_time_limit() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "sleeps", json!({})),
        ModelResponse::text("It was too slow."),
    ]);
    let agent = Agent::builder(model).tool(Sleeps).build().unwrap();

    let start = Instant::now();
    let result = agent.run("Go").await.unwrap();

    // The run did not wait for the tool's two seconds.
    assert!(
        start.elapsed() < Duration::from_millis(1500),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(result.output, "It was too slow.");
    let failure = &result.tool_failures[0];
    assert!(failure.timed_out);
    assert_eq!(
        failure.shown_to_model,
        "Tool 'sleeps' timed out after 100ms and was stopped; whether it took effect is unknown"
    );
    assert_eq!(result.effects[0].outcome, EffectOutcome::Unknown);
}

/// Blocks its thread for two seconds, with no time limit of its own.
#[reticent::tool]
fn sleeps_long() -> String {
    std::thread::sleep(Duration::from_secs(2));
    "woke up".into()
}

#[tokio::test]
async fn a_cancelled_run_does_not_wait_for_a_sync_tool() {
    let model = ScriptedModel::new(vec![ModelResponse::tool_call(
        "c1",
        "sleeps_long",
        json!({}),
    )]);
    let agent = Agent::builder(model).tool(SleepsLong).build().unwrap();
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });

    let start = Instant::now();
    let error = agent
        .run_with("Go", RunOptions::default().cancellation(token))
        .await
        .unwrap_err();

    assert!(error.is_cancelled());
    assert!(
        start.elapsed() < Duration::from_millis(1500),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(error.partial().effects[0].outcome, EffectOutcome::Unknown);
}

// ---- argument values stay off the spans ------------------------------------------------------

/// Books a room.
#[reticent::tool]
fn book(guest: String, nights: u32) -> String {
    format!("{guest}: {nights} nights")
}

#[tokio::test]
async fn without_record_content_no_span_field_holds_an_argument_value() {
    const VALUE: &str = "guest-name-7c1d-personal";
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "book", json!({"guest": "Ada", "nights": VALUE})),
        ModelResponse::text("Done."),
    ]);
    let (spans, _guard) = capture_spans();
    let agent = Agent::builder(model).tool(Book).build().unwrap();

    let result = agent.run("Book").await.unwrap();

    // The model and the caller see the whole message, value included.
    assert!(result.tool_failures[0].shown_to_model.contains(VALUE));
    for span in spans.all() {
        for (name, value) in &span.fields {
            assert!(!value.contains(VALUE), "{} {name} = {value}", span.name);
        }
    }
    assert_eq!(
        spans.tool_call("c1").field("error.message"),
        Some(
            "the model's arguments were refused at `nights` (the message echoes them: \
             record_content(true) records it)"
        )
    );
}

// ---- the last turn, offered no tools ----------------------------------------------------------

/// Looks an order up.
#[reticent::tool(read_only)]
fn lookup(order_id: String) -> String {
    format!("{order_id}: shipped")
}

#[tokio::test]
async fn calls_in_a_turn_without_tools_are_answered_and_the_run_says_there_is_no_answer() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "lookup", json!({"order_id": "A"})),
        // the last turn: the model calls tools anyway, and says nothing
        ModelResponse::tool_calls(vec![
            ToolCall::new("c2", "lookup", json!({"order_id": "B"})),
            ToolCall::new("c3", "lookup", json!({"order_id": "B"})),
        ]),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(Lookup)
        .max_turns(2)
        .build()
        .unwrap();

    let result = agent.run("Look").await.unwrap();

    assert_eq!(result.stop_reason, StopReason::TurnLimit);
    assert!(!result.answered);
    assert_eq!(result.output, "");
    // Every call in the transcript has its result, so it can be continued as a history.
    let results = tool_results(&result.messages);
    let ids: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    for result in &results[1..] {
        assert!(result.is_error);
        assert_eq!(
            result.content,
            "Tool 'lookup' was not run: tools are disabled for the rest of this conversation"
        );
    }
    let continued = Agent::builder(ScriptedModel::new(vec![ModelResponse::text("B shipped.")]))
        .tool(Lookup)
        .build()
        .unwrap()
        .run_with("And B?", RunOptions::default().history(result.messages))
        .await
        .unwrap();
    assert_eq!(continued.output, "B shipped.");
}

#[tokio::test]
async fn a_run_of_one_turn_offers_no_tools() {
    let model = ScriptedModel::new(vec![ModelResponse::text("Hello.")]);
    let agent = Agent::builder(model.clone())
        .tool(Lookup)
        .max_turns(1)
        .build()
        .unwrap();

    let result = agent.run("Hi").await.unwrap();

    assert!(result.answered);
    let requests = model.requests();
    assert!(requests[0].tools.is_empty());
    // no note about limits: the run simply has one turn
    assert_eq!(requests[0].messages.len(), 1);
}
