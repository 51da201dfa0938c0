//! What running a sync tool on the blocking pool costs: an agent run of `ROUND_TRIPS` calls of
//! a sync tool, with a time limit (so the tool runs on tokio's blocking pool, where the limit
//! can stop waiting for it) against the same run without one (the tool runs inline), and an
//! async tool with the same limit (a timer, no thread hop) against the same run without one.
//! Paired, interleaved batches in one process (see `support/paired.rs`).
//!
//! ```text
//! cargo bench -p reticent --bench sync_tools
//! ```

use std::time::Duration;

use reticent::{Agent, ToolFailureOptions};

#[path = "support/fixed_model.rs"]
mod fixed_model;
#[path = "support/paired.rs"]
mod paired;

use fixed_model::FixedModel;

/// Round trips per run.
const ROUND_TRIPS: usize = 10;

/// Add two numbers (sync).
#[reticent::tool(name = "add")]
fn add_sync(a: i64, b: i64) -> i64 {
    a + b
}

/// Add two numbers (async).
#[reticent::tool(name = "add")]
async fn add_async(a: i64, b: i64) -> i64 {
    a + b
}

fn agent(sync: bool, limit: Option<Duration>) -> Agent {
    let builder = Agent::builder(FixedModel::new(ROUND_TRIPS))
        .max_turns(ROUND_TRIPS as u32 + 1)
        .failure_options(ToolFailureOptions::default().timeout(limit));
    let builder = if sync {
        builder.tool(AddSync)
    } else {
        builder.tool(AddAsync)
    };
    builder.build().expect("valid")
}

fn main() {
    // The multi-threaded runtime an application runs agents on.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("runtime");
    let limit = Some(Duration::from_secs(30));
    let run =
        |agent: &Agent| runtime.block_on(async { agent.run("go").await.expect("completes").turns });
    let pairs = [
        (
            "sync tool: blocking pool (time limit) / inline (none)",
            true,
        ),
        ("async tool: time limit / none", false),
    ];
    println!("{ROUND_TRIPS} round trips per run; ratio of medians per round (interquartile range)");
    for (what, sync) in pairs {
        let without = agent(sync, None);
        let with = agent(sync, limit);
        let result = paired::compare(200, 20, || (), |()| run(&without), |()| run(&with));
        let per_call = |d: Duration| d / ROUND_TRIPS as u32;
        println!(
            "{what}: {:.2}× ({:.2}–{:.2}×); per round trip {:.2?} vs {:.2?}",
            result.ratio,
            result.ratio_iqr.0,
            result.ratio_iqr.1,
            per_call(result.candidate),
            per_call(result.baseline),
        );
    }
}
