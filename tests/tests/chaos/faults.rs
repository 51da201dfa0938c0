//! Each kind of broken stream, scripted at llmock for the next streamed request, for both
//! providers: the run completes, the turn is asked again after `TurnRestarted`, llmock's verdict
//! passes, and no request carries the failed tool's secret.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use reticent::AgentEvent;
use reticent_tests::llmock::{Faults, Llmock};
use serde_json::json;

use crate::desk::{Desk, Limits, PROVIDERS, agent, caller_has_the_secret, check_run, run_streamed};

/// Breaks the next streamed request with `kind` once its tool call began, runs the desk
/// streamed, and checks the run. (Gemini sends a call whole in one chunk, so its turn cannot
/// break after the call began: it is covered by the random faults and the stream scenarios.)
async fn broken_once(kind: &str) {
    let what = format!("a {kind} stream");
    // Paced, so that the events before the fault reach the loop before it.
    let faults = Faults::none().chunk_delay(Duration::from_millis(20));
    let Some(server) = Llmock::start(&what, &faults).await else {
        return;
    };
    for provider in PROVIDERS {
        let Some(after) = provider.began_after() else {
            continue;
        };
        let what = format!("{provider:?}, {kind} after {after} chunks");
        server.reset().await;
        server
            .script(json!([{"type": "stream_fault", "kind": kind, "after_chunks": after}]))
            .await;
        let desk = Arc::new(Desk::default());
        let (events, result) =
            run_streamed(&agent(provider.model(&server, Limits::default()), &desk)).await;
        let result = result.unwrap_or_else(|e| panic!("{what}: the run failed: {e}"));
        assert!(caller_has_the_secret(&result), "{what}");
        assert_eq!(
            desk.charges.load(Ordering::SeqCst),
            1,
            "{what}: the charge ran once"
        );

        // The turn was asked again, after `TurnRestarted`, and the restarted turn's events
        // come after it.
        let restart = events
            .iter()
            .position(|e| matches!(e, AgentEvent::TurnRestarted { .. }))
            .unwrap_or_else(|| panic!("{what}: no TurnRestarted in {events:#?}"));
        let AgentEvent::TurnRestarted { turn, attempt, .. } = &events[restart] else {
            unreachable!()
        };
        assert_eq!((*turn, *attempt), (1, 2), "{what}");
        let responded = events
            .iter()
            .position(|e| matches!(e, AgentEvent::ModelResponded { turn: 1, .. }))
            .expect("turn 1 responded");
        assert!(
            restart < responded,
            "{what}: the restart comes before the turn's answer"
        );
        // One assistant message per turn.
        let assistant = result
            .messages
            .iter()
            .filter(|m| matches!(m, reticent::Message::Assistant { .. }))
            .count();
        assert_eq!(assistant, result.turns as usize, "{what}");
        assert_eq!(result.turns, 2, "{what}");

        let journal = server.requests().await;
        let faults: Vec<_> = journal.iter().filter_map(|r| r.fault.clone()).collect();
        assert_eq!(faults.len(), 1, "{what}: {faults:?}");
        assert!(
            faults[0].starts_with(&format!("stream:{kind}")),
            "{what}: {faults:?}"
        );
        check_run(&what, &server).await;
    }
}

#[tokio::test]
async fn a_truncated_stream_is_asked_again_as_a_turn() {
    broken_once("truncate").await;
}

#[tokio::test]
async fn a_disconnected_stream_is_asked_again_as_a_turn() {
    broken_once("disconnect").await;
}

#[tokio::test]
async fn a_stream_with_a_malformed_event_is_asked_again_as_a_turn() {
    broken_once("malformed").await;
}

#[tokio::test]
async fn a_stream_stalled_after_it_began_is_cut_at_the_idle_limit_and_asked_again() {
    let idle = Duration::from_secs(1);
    let faults = Faults::none().chunk_delay(Duration::from_millis(20));
    let Some(server) = Llmock::start("a stalled stream", &faults).await else {
        return;
    };
    let limits = Limits {
        stream_idle: Some(idle),
        ..Limits::default()
    };
    for provider in PROVIDERS {
        let Some(after) = provider.began_after() else {
            continue;
        };
        let what = format!("{provider:?}, a stall of 30 s after {after} chunks");
        server.reset().await;
        server
            .script(
                json!([{"type": "stream_fault", "kind": "stall", "after_chunks": after,
                            "stall_seconds": 30}]),
            )
            .await;
        let desk = Arc::new(Desk::default());
        let started = std::time::Instant::now();
        let (events, result) = run_streamed(&agent(provider.model(&server, limits), &desk)).await;
        let result = result.unwrap_or_else(|e| panic!("{what}: the run failed: {e}"));
        assert_eq!(result.turns, 2, "{what}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{what}: {:?}",
            started.elapsed()
        );
        let reason = events
            .iter()
            .find_map(|e| match e {
                AgentEvent::TurnRestarted { reason, .. } => Some(reason),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{what}: no TurnRestarted"));
        assert!(
            reason.message().contains("(`stream_idle_timeout`)"),
            "{what}: {reason}"
        );
        // The client hung up within the idle limit (and the slack of a loaded machine).
        let journal = server.requests().await;
        let stalled = journal
            .iter()
            .find(|r| {
                r.fault
                    .as_deref()
                    .is_some_and(|f| f.starts_with("stream:stall"))
            })
            .unwrap_or_else(|| panic!("{what}: no stall in {journal:?}"));
        let waited = stalled
            .stall_waited
            .expect("llmock says how long the client waited");
        assert!(
            waited < idle.as_secs_f64() + 1.5,
            "{what}: the client sat through {waited} s of the stall"
        );
        check_run(&what, &server).await;
    }
}

#[tokio::test]
async fn a_stream_stalled_before_it_began_is_a_timeout_the_provider_retries() {
    let first = Duration::from_secs(1);
    let Some(server) = Llmock::start("a stream stalled at its start", &Faults::none()).await else {
        return;
    };
    let limits = Limits {
        first_event: Some(first),
        ..Limits::default()
    };
    for provider in PROVIDERS {
        let what = format!("{provider:?}, a stall of 30 s before the first chunk");
        server.reset().await;
        server
            .script(
                json!([{"type": "stream_fault", "kind": "stall", "after_chunks": 0,
                            "stall_seconds": 30}]),
            )
            .await;
        let desk = Arc::new(Desk::default());
        let (events, result) = run_streamed(&agent(provider.model(&server, limits), &desk)).await;
        result.unwrap_or_else(|e| panic!("{what}: the run failed: {e}"));
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, AgentEvent::TurnRestarted { .. })),
            "{what}: the provider retried it, before anything was shown"
        );
        let journal = server.requests().await;
        let stalled = journal
            .iter()
            .find(|r| {
                r.fault
                    .as_deref()
                    .is_some_and(|f| f.starts_with("stream:stall"))
            })
            .unwrap_or_else(|| panic!("{what}: no stall in {journal:?}"));
        let waited = stalled
            .stall_waited
            .expect("llmock says how long the client waited");
        assert!(
            waited < first.as_secs_f64() + 1.5,
            "{what}: waited {waited} s"
        );
        check_run(&what, &server).await;
    }
}
