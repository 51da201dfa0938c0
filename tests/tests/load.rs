//! Load and faults: 1,000 concurrent runs share one `Agent` on a multi-thread runtime, with
//! tools that succeed, fail, panic and time out, and with runs cancelled at random times
//! (seeded, so a failure replays). Every run must finish; every failed call must be recorded
//! exactly once, in its own run; no run's data may appear in another run's record; and a
//! second batch of 1,000 runs must not grow the process's memory by more than a bound.
//!
//! Run alone, with the numbers printed: `cargo test -p reticent-tests --test load -- --nocapture`

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use reticent::{
    Agent, AgentError, AgentResult, CancellationToken, Message, Model, ModelError, ModelRequest,
    ModelResponse, RunOptions, Tool as _, ToolCall,
};
use serde_json::json;

/// Runs per batch.
const RUNS: usize = 1000;

/// The most a second batch may grow the resident set, in KiB. What the first batch leaves
/// behind (the allocator's free memory, the runtime's pools) the second reuses: measured, it
/// grows the set by about 0.5 MiB (the first batch by about 17 MiB). Runs that each kept
/// their record alive would grow it by about 22 MiB a batch (measured by leaking a clone of
/// each record); the bound sits well between the two.
const MAX_SECOND_BATCH_GROWTH_KIB: u64 = 8 * 1024;

/// Every batch must finish within this: a batch that does not has hung.
const BATCH_LIMIT: Duration = Duration::from_secs(60);

/// The model's time limit for the tool that never finishes.
const STALL_LIMIT: Duration = Duration::from_millis(30);

// ---- the tools -------------------------------------------------------------------------------

#[derive(Debug, thiserror::Error)]
#[error("the backend refused the request for {0}")]
struct BackendError(String);

/// Answer at once.
#[reticent::tool]
fn succeed(
    /// The run's canary.
    canary: String,
) -> String {
    format!("done for {canary}")
}

/// Fail with the canary in the error's message.
#[reticent::tool]
fn fail(
    /// The run's canary.
    canary: String,
) -> Result<String, BackendError> {
    Err(BackendError(canary))
}

/// Panic with the canary in the payload.
#[reticent::tool]
fn explode(
    /// The run's canary.
    canary: String,
) -> String {
    panic!("exploded for {canary}")
}

/// Take far longer than the time limit.
#[reticent::tool(timeout = "30ms")]
async fn stall(
    /// The run's canary.
    canary: String,
) -> String {
    tokio::time::sleep(Duration::from_secs(10)).await;
    canary
}

const TOOLS: [&str; 4] = ["succeed", "fail", "explode", "stall"];

// ---- the plan of each run, from its number -----------------------------------------------------

/// xorshift64*: small, seeded, good enough to pick tools and delays.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        // never zero
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The marker that starts every canary; a record is scanned for it.
const CANARY: &str = "canary#";

fn canary(run: usize) -> String {
    format!("{CANARY}{run:05}#")
}

/// The runs in `record`'s canaries.
fn canaries_in(record: &str) -> Vec<usize> {
    record
        .match_indices(CANARY)
        .map(|(at, _)| {
            let digits = &record[at + CANARY.len()..at + CANARY.len() + 5];
            digits.parse().expect("a canary's run number")
        })
        .collect()
}

/// When run `run` is cancelled, if it is: about one run in four, 0 to 60 ms after it starts.
fn cancellation(run: usize) -> Option<Duration> {
    let mut rng = Rng::new(0xCA9CE1 ^ run as u64);
    (rng.below(4) == 0).then(|| Duration::from_millis(rng.below(60)))
}

/// One model for every run: it reads the run's number from the first message and plays that
/// run's plan: one or two turns of one to four calls of random tools, then an answer.
struct LoadModel;

impl Model for LoadModel {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let Some(Message::User { text }) = request.messages.first() else {
                return Err(ModelError::new("no user message"));
            };
            let run: usize = text
                .strip_prefix("run ")
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| ModelError::new("no run number"))?;
            let canary = canary(run);
            let turn = request
                .messages
                .iter()
                .filter(|m| matches!(m, Message::Assistant { .. }))
                .count();
            let mut rng = Rng::new((run as u64) << 8 | turn as u64);
            // a little latency, so that runs interleave
            tokio::time::sleep(Duration::from_micros(rng.below(2000))).await;
            let tool_turns = 1 + run % 2;
            if request.tools.is_empty() || turn >= tool_turns {
                return Ok(ModelResponse::text(format!("finished {canary}")));
            }
            let calls = (0..1 + rng.below(4))
                .map(|i| {
                    let tool = TOOLS[rng.below(TOOLS.len() as u64) as usize];
                    ToolCall::new(
                        format!("r{run}-t{turn}-c{i}"),
                        tool,
                        json!({ "canary": canary }),
                    )
                })
                .collect();
            Ok(ModelResponse::tool_calls(calls))
        })
    }
}

// ---- checking one run ------------------------------------------------------------------------

#[derive(Debug, Default)]
struct Tally {
    completed: usize,
    cancelled: usize,
    calls: usize,
    /// failures by kind
    failures: HashMap<String, usize>,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.completed += other.completed;
        self.cancelled += other.cancelled;
        self.calls += other.calls;
        for (kind, n) in other.failures {
            *self.failures.entry(kind).or_default() += n;
        }
    }
}

/// Checks one run's outcome and counts it.
fn check(run: usize, outcome: Result<AgentResult, AgentError>) -> Tally {
    let mut tally = Tally::default();
    let record = match outcome {
        Ok(result) => {
            tally.completed = 1;
            result
        }
        Err(AgentError::Cancelled { partial }) => {
            tally.cancelled = 1;
            *partial
        }
        Err(other) => panic!("run {run} ended with {other:?}"),
    };
    let own = canary(run);

    // What the model asked for, and what it was answered.
    let mut calls: HashMap<&str, &str> = HashMap::new();
    let mut answered: HashMap<&str, (usize, bool)> = HashMap::new();
    for message in &record.messages {
        match message {
            Message::Assistant { tool_calls, .. } => {
                for call in tool_calls {
                    assert!(
                        calls.insert(&call.id, &call.name).is_none(),
                        "run {run}: call {} made twice",
                        call.id
                    );
                }
            }
            Message::Tool(result) => {
                let entry = answered.entry(&result.call_id).or_default();
                entry.0 += 1;
                entry.1 = result.is_error;
            }
            Message::User { .. } => {}
        }
    }
    tally.calls = calls.len();
    for (id, (times, _)) in &answered {
        assert!(
            calls.contains_key(id),
            "run {run}: an answer to unknown call {id}"
        );
        assert_eq!(*times, 1, "run {run}: call {id} answered {times} times");
    }
    if tally.completed == 1 {
        assert_eq!(
            answered.len(),
            calls.len(),
            "run {run}: every call answered"
        );
    }

    // Every failed call is recorded once, as what it was.
    let mut recorded: HashMap<&str, usize> = HashMap::new();
    for failure in &record.tool_failures {
        *recorded.entry(&failure.call_id).or_default() += 1;
        let tool = calls
            .get(failure.call_id.as_str())
            .unwrap_or_else(|| panic!("run {run}: a failure of unknown call {}", failure.call_id));
        let expected = match *tool {
            "fail" => "BackendError",
            "explode" => "panic",
            "stall" => "timeout",
            other => panic!("run {run}: {other} failed: {failure:?}"),
        };
        assert_eq!(failure.kind, expected, "run {run}: {}", failure.call_id);
        assert_eq!(failure.timed_out, *tool == "stall", "run {run}");
        if *tool != "stall" {
            assert!(
                failure.error_chain().contains(&own),
                "run {run}: the error holds the run's canary: {}",
                failure.error_chain()
            );
        }
        *tally.failures.entry(failure.kind.clone()).or_default() += 1;
    }
    for (id, (_, is_error)) in &answered {
        let times = recorded.get(id).copied().unwrap_or(0);
        assert_eq!(
            times,
            usize::from(*is_error),
            "run {run}: call {id} recorded {times} times"
        );
    }

    // Nothing of another run: every canary in the whole record is this run's.
    let text = format!("{record:?}");
    let found = canaries_in(&text);
    assert!(
        !found.is_empty(),
        "run {run}: its own canary is in its record"
    );
    if let Some(other) = found.iter().find(|&&r| r != run) {
        panic!("run {run}: the canary of run {other} is in its record");
    }
    tally
}

// ---- the test --------------------------------------------------------------------------------

/// The resident set size, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status")
}

/// Runs `RUNS` runs at once, numbered from `first`, each in its own task.
async fn batch(agent: &Agent, first: usize) -> Tally {
    let mut tasks = Vec::with_capacity(RUNS);
    for run in first..first + RUNS {
        let agent = agent.clone();
        tasks.push(tokio::spawn(async move {
            let mut options = RunOptions::default();
            if let Some(after) = cancellation(run) {
                let token = CancellationToken::new();
                options = options.cancellation(token.clone());
                tokio::spawn(async move {
                    tokio::time::sleep(after).await;
                    token.cancel();
                });
            }
            let outcome = agent
                .run_with(format!("run {run} {}", canary(run)), options)
                .await;
            check(run, outcome)
        }));
    }
    let all = futures::future::join_all(tasks);
    let mut tally = Tally::default();
    for joined in tokio::time::timeout(BATCH_LIMIT, all)
        .await
        .expect("a batch of runs hung")
    {
        tally.add(joined.expect("a run's task panicked"));
    }
    tally
}

#[test]
fn a_thousand_concurrent_runs_with_faults_stay_separate_and_bounded() {
    // The panicking tool panics a few hundred times: keep the default hook for anything else.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload().downcast_ref::<String>();
        if !payload.is_some_and(|p| p.starts_with("exploded for ")) {
            default_hook(info);
        }
    }));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let agent = Agent::builder(LoadModel)
        .tool(Succeed)
        .tool(Fail)
        .tool(Explode)
        .tool(Stall)
        .max_parallel_tools(4)
        .build()
        .unwrap();
    assert_eq!(Stall.timeout(), Some(STALL_LIMIT));

    let before = rss_kib();
    let started = Instant::now();
    let first = runtime.block_on(batch(&agent, 0));
    let first_time = started.elapsed();
    let after_first = rss_kib();
    let started = Instant::now();
    let second = runtime.block_on(batch(&agent, RUNS));
    let second_time = started.elapsed();
    let after_second = rss_kib();

    println!(
        "load: batch 1: {first_time:.2?}, {} completed, {} cancelled, {} calls, failures {:?}",
        first.completed, first.cancelled, first.calls, first.failures
    );
    println!(
        "load: batch 2: {second_time:.2?}, {} completed, {} cancelled, {} calls, failures {:?}",
        second.completed, second.cancelled, second.calls, second.failures
    );
    println!(
        "load: VmRSS {before} KiB before, {after_first} KiB after batch 1 (+{}), \
         {after_second} KiB after batch 2 (+{})",
        after_first.saturating_sub(before),
        after_second.saturating_sub(after_first),
    );

    for tally in [&first, &second] {
        assert_eq!(
            tally.completed + tally.cancelled,
            RUNS,
            "every run finished"
        );
        assert!(tally.cancelled > 0 && tally.completed > 0, "{tally:?}");
        for kind in ["BackendError", "panic", "timeout"] {
            assert!(
                tally.failures.get(kind).copied().unwrap_or(0) > 0,
                "no {kind} failure in {tally:?}"
            );
        }
    }
    let growth = after_second.saturating_sub(after_first);
    assert!(
        growth <= MAX_SECOND_BATCH_GROWTH_KIB,
        "the second batch grew the resident set by {growth} KiB (at most {MAX_SECOND_BATCH_GROWTH_KIB})"
    );
}
