//! A running tool's progress and log lines (`ToolContext::progress`, `ToolContext::log`):
//! `AgentEvent::ToolProgress` and `AgentEvent::ToolLog` on the stream, events on the call's
//! `execute_tool` span, and never a word of them to the model.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use reticent::{
    Agent, AgentEvent, ModelResponse, RunOptions, ScriptedModel, ToolCall, ToolContext,
    ToolFailureOptions, tool::LogLevel,
};
use reticent_tests::spans::capture_spans;
use serde_json::json;

/// What the tools say, which must never reach the model.
const WORDS: &str = "PROGRESS-CANARY";

/// Copy files, reporting each one.
#[reticent::tool]
async fn copy_files(count: u32, cx: &ToolContext) -> String {
    cx.log(
        LogLevel::Info,
        format_args!("copying {count} files {WORDS}"),
    );
    for i in 1..=count {
        // counted in integers, as steps are
        cx.progress(i, count, format!("file {i} {WORDS}").as_str());
        tokio::task::yield_now().await;
    }
    cx.progress(1, None, "going back is dropped");
    cx.log(LogLevel::Debug, "done");
    format!("copied {count}")
}

/// Sync work on the blocking pool (a time limit applies), reporting from its thread.
#[reticent::tool]
fn crunch(steps: u32, cx: &ToolContext) -> u32 {
    for i in 1..=steps {
        cx.progress(i, None, None);
    }
    cx.log(LogLevel::Warning, format_args!("crunched {steps} {WORDS}"));
    steps
}

/// Logs a line far longer than any line passed on.
#[reticent::tool]
fn chatty(cx: &ToolContext) -> &'static str {
    cx.log(LogLevel::Error, "x".repeat(10_000));
    "said a lot"
}

/// Records what its context says about itself.
#[reticent::tool]
fn introspect(cx: &ToolContext) -> String {
    format!("{cx:?}")
}

fn model(calls: Vec<ToolCall>) -> ScriptedModel {
    ScriptedModel::new(vec![
        ModelResponse::tool_calls(calls),
        ModelResponse::text("done"),
    ])
}

fn agent(model: &ScriptedModel) -> Agent {
    Agent::builder(model.clone())
        .tool(CopyFiles)
        .tool(Crunch)
        .tool(Chatty)
        .tool(Introspect)
        .failure_options(ToolFailureOptions::default().timeout(Duration::from_secs(10)))
        .build()
        .unwrap()
}

/// The run's events, and its result.
async fn stream(agent: &Agent) -> (Vec<AgentEvent>, reticent::AgentResult) {
    let mut events: Vec<AgentEvent> = agent.run_stream("go").collect().await;
    let Some(AgentEvent::Finished(result)) = events.pop() else {
        panic!("the last event is Finished")
    };
    (events, result.expect("the run succeeds"))
}

#[tokio::test]
async fn progress_and_log_lines_are_events_between_start_and_end() {
    let model = model(vec![ToolCall::new("c1", "copy_files", json!({"count": 3}))]);
    let (events, result) = stream(&agent(&model)).await;

    let described: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolStarted { call } => Some(format!("started {}", call.id)),
            AgentEvent::ToolProgress {
                call_id,
                tool,
                progress,
                total,
                message,
            } => Some(format!(
                "{call_id} {tool} progress {progress} of {total:?}: {}",
                message.as_deref().unwrap_or("-")
            )),
            AgentEvent::ToolLog {
                call_id,
                tool,
                level,
                message,
            } => Some(format!("{call_id} {tool} {level}: {message}")),
            AgentEvent::ToolSucceeded { call_id, .. } => Some(format!("succeeded {call_id}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        described,
        [
            "started c1".to_owned(),
            format!("c1 copy_files info: copying 3 files {WORDS}"),
            format!("c1 copy_files progress 1 of Some(3.0): file 1 {WORDS}"),
            format!("c1 copy_files progress 2 of Some(3.0): file 2 {WORDS}"),
            format!("c1 copy_files progress 3 of Some(3.0): file 3 {WORDS}"),
            // `progress` only increases: the report going back was dropped.
            "c1 copy_files debug: done".to_owned(),
            "succeeded c1".to_owned(),
        ]
    );
    assert_never_shown_to_the_model(&result, &model);
}

#[tokio::test]
async fn a_sync_tool_on_the_blocking_pool_reports_from_its_thread() {
    let model = model(vec![ToolCall::new("c1", "crunch", json!({"steps": 4}))]);
    let (events, result) = stream(&agent(&model)).await;
    let progress: Vec<f64> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolProgress { progress, .. } => Some(*progress),
            _ => None,
        })
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0, 4.0]);
    let logs: Vec<(LogLevel, &str)> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolLog { level, message, .. } => Some((*level, message.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        logs,
        [(LogLevel::Warning, format!("crunched 4 {WORDS}").as_str())]
    );
    assert_never_shown_to_the_model(&result, &model);
}

#[tokio::test]
async fn lines_are_cut_to_length() {
    let model = model(vec![ToolCall::new("c1", "chatty", json!({}))]);
    let (events, _) = stream(&agent(&model)).await;
    let message = events
        .iter()
        .find_map(|event| match event {
            AgentEvent::ToolLog { message, .. } => Some(message.clone()),
            _ => None,
        })
        .expect("the line was passed on");
    assert!(message.len() <= 2048, "{}", message.len());
    assert!(message.starts_with("xxxx"), "{message}");
    assert!(message.ends_with("… (cut)"), "{message}");
}

#[tokio::test]
async fn a_call_nobody_watches_has_no_observer() {
    // No stream and no subscriber that records the call's span: the context is not observed,
    // so progress and log lines cost a branch.
    let model = model(vec![ToolCall::new("c1", "introspect", json!({}))]);
    let result = agent(&model).run("go").await.unwrap();
    let shown = reticent_tests::transcript::tool_results(&result.messages)[0]
        .content
        .clone();
    assert!(shown.contains("observed: false"), "{shown}");

    // Streaming, it is.
    let model = self::model(vec![ToolCall::new("c1", "introspect", json!({}))]);
    let (_, result) = stream(&agent(&model)).await;
    let shown = reticent_tests::transcript::tool_results(&result.messages)[0]
        .content
        .clone();
    assert!(shown.contains("observed: true"), "{shown}");
}

#[tokio::test]
async fn progress_and_log_lines_are_events_on_the_calls_span() {
    let (spans, _guard) = capture_spans();
    let model = model(vec![ToolCall::new("c1", "copy_files", json!({"count": 2}))]);
    // Not streamed: the span alone watches the call.
    let result = agent(&model).run("go").await.unwrap();
    let span = spans.tool_call("c1");
    let events = spans.events_in(&span);
    let progress: Vec<_> = events
        .iter()
        .filter(|e| e.field("message") == Some("tool progress"))
        .map(|e| {
            (
                e.field("progress").unwrap().to_owned(),
                e.field("total").unwrap().to_owned(),
                e.field("progress.message").unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        [
            ("1.0".into(), "2.0".into(), format!("file 1 {WORDS}")),
            ("2.0".into(), "2.0".into(), format!("file 2 {WORDS}")),
        ]
    );
    let logs: Vec<_> = events
        .iter()
        .filter(|e| e.field("tool.log") == Some("true"))
        .map(|e| (e.level, e.field("message").unwrap().to_owned()))
        .collect();
    assert_eq!(
        logs,
        [
            (tracing::Level::INFO, format!("copying 2 files {WORDS}")),
            (tracing::Level::DEBUG, "done".to_owned()),
        ]
    );
    assert_never_shown_to_the_model(&result, &model);
}

#[tokio::test]
async fn a_cancelled_run_stops_passing_reports_on() {
    /// Reports until cancelled.
    #[reticent::tool]
    async fn endless(cx: &ToolContext) -> String {
        let mut i = 0.0;
        loop {
            i += 1.0;
            cx.progress(i, None, None);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    let model = model(vec![ToolCall::new("c1", "endless", json!({}))]);
    let agent = Agent::builder(model.clone()).tool(Endless).build().unwrap();
    let token = reticent::CancellationToken::new();
    let seen = Arc::new(Mutex::new(0u32));
    let mut stream = std::pin::pin!(
        agent.run_stream_with("go", RunOptions::default().cancellation(token.clone()))
    );
    let mut last = None;
    while let Some(event) = stream.next().await {
        if let AgentEvent::ToolProgress { .. } = event {
            let mut seen = seen.lock().unwrap();
            *seen += 1;
            if *seen == 3 {
                token.cancel();
            }
        }
        last = Some(event);
    }
    assert!(
        matches!(
            last,
            Some(AgentEvent::Finished(Err(
                reticent::AgentError::Cancelled { .. }
            )))
        ),
        "{last:?}"
    );
}

/// Nothing a tool reported reached the transcript, the trajectory or a model request.
fn assert_never_shown_to_the_model(result: &reticent::AgentResult, model: &ScriptedModel) {
    let messages = format!("{:?}", result.messages);
    assert!(!messages.contains(WORDS), "{messages}");
    let trajectory = serde_json::to_string(&result.trajectory).unwrap();
    assert!(!trajectory.contains(WORDS), "{trajectory}");
    let requests = format!("{:?}", model.requests());
    assert!(!requests.contains(WORDS), "{requests}");
}
