//! Runs under every fault at once, injected at random by llmock: HTTP errors, truncated,
//! disconnected, malformed and stalled streams. llmock's faults cannot be seeded, so each provider runs
//! enough times, streamed and whole, that a regression cannot hide: every run completes or
//! ends, after its bounded retries, with a model error that says why; llmock's verdict of each
//! run (its journal reset in between) has no failure; and no request carries the failed tool's
//! secret.

use std::sync::Arc;
use std::time::Duration;

use reticent::AgentError;
use reticent_tests::llmock::{Faults, Llmock, StreamFault};

use crate::desk::{
    Desk, Limits, PROVIDERS, REQUEST, agent, caller_has_the_secret, check_run, run_streamed,
};

/// Runs of each provider, streamed and whole.
const RUNS: usize = 8;

fn faults() -> Faults {
    Faults::none()
        .error_rate(429, 0.05)
        .error_rate(503, 0.05)
        .stream_fault(StreamFault::Truncate, 0.05)
        .stream_fault(StreamFault::Disconnect, 0.05)
        .stream_fault(StreamFault::Malformed, 0.03)
        .stream_fault(StreamFault::Stall, 0.03)
        .stall_seconds(30.0)
        .chunk_delay(Duration::from_millis(2))
}

/// A budget under which giving up is rare (a run that gives up must still pass the verdict,
/// and llmock judges a call whose last attempt was truncated as accepted), and whose
/// worst case (`2 × 4 + 1` requests for a turn) stays below llmock's retry-storm threshold.
fn limits() -> Limits {
    Limits {
        max_retries: 4,
        stream_idle: Some(Duration::from_secs(1)),
        first_event: Some(Duration::from_secs(2)),
        ..Limits::default()
    }
}

#[tokio::test]
async fn every_run_under_random_faults_completes_or_ends_clearly_and_passes_the_verdict() {
    let Some(server) = Llmock::start("runs under random faults", &faults()).await else {
        return;
    };
    for provider in PROVIDERS {
        let mut completed = 0;
        for run in 0..RUNS {
            for streamed in [true, false] {
                let what = format!("{provider:?}, run {run}, streamed: {streamed}");
                server.reset().await;
                let desk = Arc::new(Desk::default());
                let agent = agent(provider.model(&server, limits()), &desk);
                let result = if streamed {
                    run_streamed(&agent).await.1
                } else {
                    agent.run(REQUEST).await
                };
                match result {
                    Ok(result) => {
                        assert!(caller_has_the_secret(&result), "{what}");
                        completed += 1;
                    }
                    Err(AgentError::Model { error, .. }) => {
                        // bounded: two turns of at most `2 × max_retries + 1` requests
                        let attempts = server.requests().await.len();
                        let bound = 2 * (2 * limits().max_retries as usize + 1);
                        assert!((1..=bound).contains(&attempts), "{what}: {attempts}");
                        assert!(!error.message().is_empty(), "{what}");
                        eprintln!("{what}: ended with {error}");
                    }
                    Err(other) => panic!("{what}: {other}"),
                }
                check_run(&what, &server).await;
            }
        }
        // 1 in 200 turns gives up at most, by the numbers: most runs complete
        assert!(
            completed >= 2 * RUNS - 2,
            "{provider:?}: {completed} of {} completed",
            2 * RUNS
        );
    }
}
