//! The calls of one turn run concurrently, at most `max_parallel_tools` at a time, and their
//! results are given to the model in call order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reticent::{Agent, ModelResponse, ScriptedModel, ToolCall};
use reticent_tests::transcript::{shown, shown_with_errors, tool_results};
use serde_json::json;
use tokio::sync::Barrier;

#[derive(Debug, thiserror::Error)]
#[error("job {0} broke")]
struct JobFailed(String);

/// Tools that meet at a barrier or take their time, and a log of what they did.
struct Crew {
    barrier: Barrier,
    log: Mutex<Vec<String>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl Crew {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            barrier: Barrier::new(2),
            log: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
        })
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

#[reticent::tools]
impl Crew {
    /// Wait until the other crew member arrives.
    #[tool]
    async fn meet(&self, who: String) -> String {
        self.barrier.wait().await;
        format!("{who} met the other")
    }

    /// Do a job that takes `ms` milliseconds; jobs named `bad..` fail.
    #[tool]
    async fn job(&self, name: String, ms: u64) -> Result<String, JobFailed> {
        self.log.lock().unwrap().push(format!("start {name}"));
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.log.lock().unwrap().push(format!("end {name}"));
        if name.starts_with("bad") {
            Err(JobFailed(name))
        } else {
            Ok(format!("{name} done"))
        }
    }
}

fn job(id: &str, name: &str, ms: u64) -> ToolCall {
    ToolCall::new(id, "job", json!({"name": name, "ms": ms}))
}

fn script(calls: Vec<ToolCall>) -> ScriptedModel {
    ScriptedModel::new(vec![
        ModelResponse::tool_calls(calls),
        ModelResponse::text("all done"),
    ])
}

#[tokio::test]
async fn calls_of_one_turn_run_concurrently() {
    // Each call waits at a barrier for two: run one after the other, they would never finish.
    let model = script(vec![
        ToolCall::new("c1", "meet", json!({"who": "ann"})),
        ToolCall::new("c2", "meet", json!({"who": "bob"})),
    ]);
    let agent = Agent::builder(model.clone())
        .toolbox(Crew::new())
        .build()
        .unwrap();

    let result = tokio::time::timeout(Duration::from_secs(10), agent.run("Meet"))
        .await
        .expect("the calls did not run concurrently")
        .unwrap();

    let results = shown(&result.messages);
    assert_eq!(
        results,
        [("c1", "ann met the other"), ("c2", "bob met the other")]
    );
    assert!(result.tool_failures.is_empty());
}

#[tokio::test(start_paused = true)]
async fn max_parallel_tools_one_runs_them_one_at_a_time() {
    // The same two barrier calls, one at a time: the first waits forever. The paused clock
    // jumps to the guard's deadline as soon as nothing else can happen.
    let model = script(vec![
        ToolCall::new("c1", "meet", json!({"who": "ann"})),
        ToolCall::new("c2", "meet", json!({"who": "bob"})),
    ]);
    let agent = Agent::builder(model)
        .toolbox(Crew::new())
        .max_parallel_tools(1)
        .build()
        .unwrap();

    let outcome = tokio::time::timeout(Duration::from_secs(60), agent.run("Meet")).await;

    assert!(outcome.is_err(), "the calls ran concurrently: {outcome:?}");
}

#[tokio::test(start_paused = true)]
async fn results_are_in_call_order_whatever_order_the_calls_finish_in() {
    let model = script(vec![
        job("c1", "slow", 300),
        job("c2", "bad-medium", 200),
        job("c3", "fast", 100),
    ]);
    let crew = Crew::new();
    let agent = Agent::builder(model.clone())
        .toolbox(Arc::clone(&crew))
        .build()
        .unwrap();
    let start = tokio::time::Instant::now();

    let result = agent.run("Do the jobs").await.unwrap();

    // All three started before any ended, and they ended fastest first.
    assert_eq!(
        crew.log(),
        [
            "start slow",
            "start bad-medium",
            "start fast",
            "end fast",
            "end bad-medium",
            "end slow"
        ]
    );
    // Together they took as long as the slowest (not the 600ms of all three), on the
    // runtime's paused clock.
    let elapsed = start.elapsed();
    assert!(
        elapsed >= Duration::from_millis(300) && elapsed < Duration::from_millis(400),
        "{elapsed:?}"
    );

    let requests = model.requests();
    let shown = shown_with_errors(&requests[1].messages);
    assert_eq!(
        shown,
        [
            ("c1", "slow done", false),
            ("c2", "Tool 'job' failed with JobFailed", true),
            ("c3", "fast done", false),
        ]
    );
    assert_eq!(result.tool_failures.len(), 1);
    assert_eq!(result.tool_failures[0].call_id, "c2");
    let elapsed = result.tool_failures[0].elapsed;
    assert!(
        elapsed >= Duration::from_millis(200) && elapsed < Duration::from_millis(300),
        "{elapsed:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn max_parallel_tools_one_keeps_call_order_strictly() {
    let model = script(vec![
        job("c1", "a", 300),
        job("c2", "b", 100),
        job("c3", "c", 200),
    ]);
    let crew = Crew::new();
    let agent = Agent::builder(model.clone())
        .toolbox(Arc::clone(&crew))
        .max_parallel_tools(1)
        .build()
        .unwrap();
    let start = tokio::time::Instant::now();

    let result = agent.run("Do the jobs").await.unwrap();

    assert_eq!(
        crew.log(),
        ["start a", "end a", "start b", "end b", "start c", "end c"]
    );
    assert_eq!(crew.max_in_flight.load(Ordering::SeqCst), 1);
    assert!(start.elapsed() >= Duration::from_millis(600));
    let ids: Vec<&str> = tool_results(&result.messages)
        .into_iter()
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
}

#[tokio::test(start_paused = true)]
async fn max_parallel_tools_bounds_the_calls_in_flight() {
    let calls = (1..=5)
        .map(|i| job(&format!("c{i}"), &format!("j{i}"), 100))
        .collect();
    let crew = Crew::new();
    let agent = Agent::builder(script(calls))
        .toolbox(Arc::clone(&crew))
        .max_parallel_tools(2)
        .build()
        .unwrap();
    let start = tokio::time::Instant::now();

    let result = agent.run("Do the jobs").await.unwrap();

    assert_eq!(crew.max_in_flight.load(Ordering::SeqCst), 2);
    // Five 100ms jobs, two at a time: three rounds.
    let elapsed = start.elapsed();
    assert!(
        elapsed >= Duration::from_millis(300) && elapsed < Duration::from_millis(400),
        "{elapsed:?}"
    );
    let ids: Vec<&str> = tool_results(&result.messages)
        .into_iter()
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4", "c5"]);
}

#[tokio::test(start_paused = true)]
async fn the_default_limit_is_eight() {
    let calls = (1..=10)
        .map(|i| job(&format!("c{i}"), &format!("j{i}"), 100))
        .collect();
    let crew = Crew::new();
    let agent = Agent::builder(script(calls))
        .toolbox(Arc::clone(&crew))
        .build()
        .unwrap();

    agent.run("Do the jobs").await.unwrap();

    assert_eq!(crew.max_in_flight.load(Ordering::SeqCst), 8);
}

#[tokio::test]
async fn max_parallel_tools_zero_is_refused() {
    let error = Agent::builder(ScriptedModel::default())
        .max_parallel_tools(0)
        .build()
        .unwrap_err();

    assert_eq!(error.to_string(), "`max_parallel_tools` must be at least 1");
}
