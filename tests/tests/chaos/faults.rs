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

/// Breaks the next streamed request with `kind` after `after` chunks, runs the desk streamed,
/// and checks the run.
async fn broken_once(kind: &str, after: u32) {
    let what = format!("a {kind} stream");
    // Paced, so that the events before the fault reach the loop before it.
    let faults = Faults::none().chunk_delay(Duration::from_millis(20));
    let Some(server) = Llmock::start(&what, &faults).await else {
        return;
    };
    for provider in PROVIDERS {
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
    broken_once("truncate", 2).await;
}

#[tokio::test]
async fn a_disconnected_stream_is_asked_again_as_a_turn() {
    broken_once("disconnect", 2).await;
}

#[tokio::test]
async fn a_stream_with_a_malformed_event_is_asked_again_as_a_turn() {
    broken_once("malformed", 2).await;
}
