//! Timeouts: `ToolFailureOptions::timeout` and `#[tool(timeout = ..)]`, the shorter wins; the
//! tool is stopped and the model is told how long it was given and that the effect is unknown.
//!
//! The clock is paused: tokio advances it to the next timer whenever the runtime is idle, so a
//! 60-second tool costs no wall-clock time and every limit is exact.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reticent::{
    Agent, AgentError, CancellationToken, ModelResponse, ScriptedModel, StopReason, ToolContext,
    ToolFailureMode, ToolFailureOptions, ToolResult, failures::ToolTimedOut,
};
use reticent_tests::transcript::{last_tool_result, tool_results};
use serde_json::json;

/// Tools that take their time, and a record of what they got to do.
#[derive(Default)]
struct Reports {
    started: AtomicUsize,
    finished: AtomicUsize,
    tokens: Mutex<Vec<CancellationToken>>,
}

impl Reports {
    async fn work(&self, cx: &ToolContext, time: Duration) -> String {
        self.started.fetch_add(1, Ordering::SeqCst);
        self.tokens.lock().unwrap().push(cx.cancellation().clone());
        tokio::time::sleep(time).await;
        self.finished.fetch_add(1, Ordering::SeqCst);
        format!("done after {time:?}")
    }
}

#[reticent::tools]
impl Reports {
    /// Build the monthly report; takes a minute.
    #[tool]
    async fn monthly_report(&self, cx: &ToolContext) -> String {
        self.work(cx, Duration::from_secs(60)).await
    }

    /// Export the ledger; given 50ms.
    #[tool(timeout = "50ms")]
    async fn quick_export(&self, cx: &ToolContext) -> String {
        self.work(cx, Duration::from_secs(60)).await
    }

    /// Archive old orders; given 10s.
    #[tool(timeout = "10s")]
    async fn archive(&self, cx: &ToolContext) -> String {
        self.work(cx, Duration::from_secs(60)).await
    }

    /// Check the service; answers in 10ms, given 5s.
    #[tool(timeout = "5s")]
    async fn ping(&self, cx: &ToolContext) -> String {
        self.work(cx, Duration::from_millis(10)).await;
        "pong".into()
    }
}

struct Setup {
    model: ScriptedModel,
    reports: Arc<Reports>,
    agent: Agent,
}

fn setup(tool: &str, timeout: Option<Duration>) -> Setup {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("call_1", tool, json!({})),
        ModelResponse::text("The report is not ready yet."),
    ]);
    let reports = Arc::new(Reports::default());
    let agent = Agent::builder(model.clone())
        .toolbox(Arc::clone(&reports))
        .failure_options(ToolFailureOptions::default().timeout(timeout))
        .build()
        .unwrap();
    Setup {
        model,
        reports,
        agent,
    }
}

fn shown(setup: &Setup) -> String {
    last_tool_result(&setup.model.requests()[1]).content.clone()
}

#[tokio::test(start_paused = true)]
async fn the_agent_timeout_stops_the_tool_and_the_run_goes_on() {
    let setup = setup("monthly_report", Some(Duration::from_secs(1)));

    let result = setup.agent.run("Build the report").await.unwrap();

    let expected = ToolResult {
        call_id: "call_1".into(),
        name: "monthly_report".into(),
        content: "Tool 'monthly_report' timed out after 1s and was stopped; whether it took \
                  effect is unknown"
            .into(),
        is_error: true,
    };
    assert_eq!(last_tool_result(&setup.model.requests()[1]), &expected);
    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(result.output, "The report is not ready yet.");

    let failure = &result.tool_failures[0];
    assert_eq!(failure.kind, "timeout");
    assert!(failure.timed_out);
    assert_eq!(failure.shown_to_model, expected.content);
    assert_eq!(failure.arguments, json!({}));
    let timed_out = failure.error.downcast_ref::<ToolTimedOut>().unwrap();
    assert_eq!(timed_out.tool, "monthly_report");
    assert_eq!(timed_out.limit, Duration::from_secs(1));
    assert_eq!(
        failure.error.to_string(),
        "the tool `monthly_report` did not finish within 1s"
    );
    // The elapsed time is the time the tool was given, on the runtime's clock.
    assert!(
        failure.elapsed >= Duration::from_secs(1) && failure.elapsed < Duration::from_secs(60),
        "{:?}",
        failure.elapsed
    );

    // The tool was stopped: it never finished, and its cancellation token fired.
    assert_eq!(setup.reports.started.load(Ordering::SeqCst), 1);
    assert_eq!(setup.reports.finished.load(Ordering::SeqCst), 0);
    assert!(setup.reports.tokens.lock().unwrap()[0].is_cancelled());
}

#[tokio::test(start_paused = true)]
async fn the_tools_own_timeout_wins_when_shorter() {
    let setup = setup("quick_export", Some(Duration::from_secs(30)));

    let result = setup.agent.run("Export").await.unwrap();

    assert_eq!(
        shown(&setup),
        "Tool 'quick_export' timed out after 50ms and was stopped; whether it took effect is \
         unknown"
    );
    let failure = &result.tool_failures[0];
    assert!(failure.timed_out);
    assert_eq!(
        failure.error.downcast_ref::<ToolTimedOut>().unwrap().limit,
        Duration::from_millis(50)
    );
}

#[tokio::test(start_paused = true)]
async fn the_agent_timeout_wins_when_shorter() {
    let setup = setup("archive", Some(Duration::from_secs(2)));

    setup.agent.run("Archive").await.unwrap();

    assert_eq!(
        shown(&setup),
        "Tool 'archive' timed out after 2s and was stopped; whether it took effect is unknown"
    );
}

#[tokio::test(start_paused = true)]
async fn the_tools_own_timeout_applies_without_an_agent_timeout() {
    let setup = setup("archive", None);

    let result = setup.agent.run("Archive").await.unwrap();

    assert_eq!(
        shown(&setup),
        "Tool 'archive' timed out after 10s and was stopped; whether it took effect is unknown"
    );
    assert!(result.tool_failures[0].timed_out);
}

#[tokio::test(start_paused = true)]
async fn without_any_timeout_a_slow_tool_runs_to_the_end() {
    let setup = setup("monthly_report", None);

    let result = setup.agent.run("Build the report").await.unwrap();

    assert!(result.tool_failures.is_empty());
    assert_eq!(shown(&setup), "done after 60s");
    assert_eq!(setup.reports.finished.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_finishes_in_time_succeeds() {
    let setup = setup("ping", Some(Duration::from_secs(1)));

    let result = setup.agent.run("Ping").await.unwrap();

    assert!(result.tool_failures.is_empty());
    assert_eq!(
        last_tool_result(&setup.model.requests()[1]),
        &ToolResult {
            call_id: "call_1".into(),
            name: "ping".into(),
            content: "pong".into(),
            is_error: false,
        }
    );
    assert!(!setup.reports.tokens.lock().unwrap()[0].is_cancelled());
}

#[tokio::test(start_paused = true)]
async fn the_limit_is_written_as_a_person_writes_it() {
    let setup = setup("monthly_report", Some(Duration::from_millis(1500)));

    setup.agent.run("Build the report").await.unwrap();

    assert_eq!(
        shown(&setup),
        "Tool 'monthly_report' timed out after 1.5s and was stopped; whether it took effect is \
         unknown"
    );
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_is_a_failure_not_the_end_of_other_calls() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            reticent::ToolCall::new("c1", "quick_export", json!({})),
            reticent::ToolCall::new("c2", "ping", json!({})),
        ]),
        ModelResponse::text("done"),
    ]);
    let reports = Arc::new(Reports::default());
    let agent = Agent::builder(model.clone())
        .toolbox(Arc::clone(&reports))
        .build()
        .unwrap();

    let result = agent.run("Export and ping").await.unwrap();

    let results = tool_results(&result.messages);
    assert_eq!(results.len(), 2);
    assert!(results[0].is_error);
    assert!(
        results[0]
            .content
            .starts_with("Tool 'quick_export' timed out after 50ms")
    );
    assert_eq!(
        (results[1].content.as_str(), results[1].is_error),
        ("pong", false)
    );
    assert_eq!(result.tool_failures.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_under_propagate_ends_the_run() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("call_1", "quick_export", json!({})),
        ModelResponse::text("never requested"),
    ]);
    let agent = Agent::builder(model.clone())
        .toolbox(Arc::new(Reports::default()))
        .failure_mode(ToolFailureMode::Propagate)
        .build()
        .unwrap();

    let error = agent.run("Export").await.unwrap_err();

    let AgentError::ToolFailed { failure, partial } = error else {
        panic!("expected ToolFailed, got {error:?}");
    };
    assert!(failure.timed_out);
    assert_eq!(failure.kind, "timeout");
    assert_eq!(partial.tool_failures.len(), 1);
    assert_eq!(model.requests().len(), 1);
}
