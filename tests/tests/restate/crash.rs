//! A durable run on a real Restate server survives its service being killed: after a restart
//! the run replays from the journal — the model is not called again for a finished turn, and
//! no tool that was applied runs again — and a call cut off mid-flight is not run again either:
//! the run waits for a person to reconcile it, through the ingress. The journal holds what the
//! model saw, never a tool's withheld message.

use crate::support::{Desk, Server, eventually, scratch};
use reticent::agent::CallDigest;
use reticent_tests::restate_desk::{CANARY, HOLD_TRANSFER, WORKFLOW};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_service_resumes_from_the_journal_without_applying_a_call_twice() {
    let Some(server) = Server::start("the durable run's crash and resume").await else {
        return;
    };
    let dir = scratch("crash-desk");
    let mut desk = Desk::start(&dir);
    server.register(&desk.uri()).await;

    // Turn 1 refunds (applied) and charges (fails, with a secret in its error); turn 2 looks
    // the order up and transfers money, and the transfer hangs.
    std::fs::write(dir.join(HOLD_TRANSFER), "").unwrap();
    let invocation = server
        .start_workflow(
            WORKFLOW,
            "crash-1",
            &json!("crash: refund, charge, then pay"),
        )
        .await;
    eventually("the transfer to start", || async {
        desk.lines("transfers.log")
            .iter()
            .any(|l| l.starts_with("started"))
            .then_some(())
    })
    .await;
    // The model's second turn came after the refund's step was journaled.
    assert_eq!(desk.lines("refunds.log"), ["ORD-7 4500"]);
    assert_eq!(desk.lines("model.log"), ["turn 1", "turn 2"]);

    // The process dies mid-transfer, and comes back.
    desk.kill().await;
    std::fs::remove_file(dir.join(HOLD_TRANSFER)).unwrap();
    desk.restart().await;

    // The replay reaches the transfer, which an earlier attempt started and never finished:
    // the run does not run it again, it waits for a person to say what happened.
    let pending: Value = eventually("the run to wait for a decision", || async {
        let (status, body) = server
            .post(&format!("/{WORKFLOW}/crash-1/pending"), None)
            .await;
        let awaiting: Value = serde_json::from_str(&body).ok()?;
        (status == 200 && !awaiting.is_null()).then_some(awaiting)
    })
    .await;
    let arguments = json!({"amount_cents": 700});
    let digest = CallDigest::of("transfer_funds", &arguments).to_string();
    assert_eq!(
        pending,
        json!({
            "round": 1,
            "pending": [{
                "call_id": "call_4",
                "tool": "transfer_funds",
                "arguments": arguments,
                "reason": "unknown",
                "digest": digest,
            }],
        })
    );
    assert_eq!(desk.lines("transfers.log"), ["started 700"]);

    // The bank says the transfer went through: the person says so through the ingress, naming
    // the call by its digest.
    let (status, body) = server
        .post(
            &format!("/{WORKFLOW}/crash-1/approve"),
            Some(&json!({"call_4": {
                "applied": "moved 700 (confirmed by the bank)",
                "digest": digest,
            }})),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    let outcome = server.outcome(WORKFLOW, "crash-1").await;
    assert_eq!(outcome["stop_reason"], "Completed");
    assert_eq!(outcome["output"], "Done after 3 turns.");
    let effects: Vec<(&str, &str)> = outcome["effects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["tool"].as_str().unwrap(), e["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        effects,
        [
            ("issue_refund", "Applied"),
            ("charge_card", "Failed"),
            ("transfer_funds", "Applied"),
        ]
    );
    let results: Vec<&str> = outcome["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        results,
        [
            "refunded 4500 on ORD-7",
            "Tool 'charge_card' failed with GatewayError",
            "ORD-7: 129.00, delivered",
            "moved 700 (confirmed by the bank)",
        ]
    );

    // Counted outside the process: every call applied exactly once, the model called once a
    // turn, the cut-off transfer never run again.
    assert_eq!(desk.lines("refunds.log"), ["ORD-7 4500"]);
    assert_eq!(desk.lines("charges.log"), ["ORD-7"]);
    assert_eq!(desk.lines("transfers.log"), ["started 700"]);
    assert_eq!(desk.lines("model.log"), ["turn 1", "turn 2", "turn 3"]);
    assert!(
        desk.lines("lookups.log").len() <= 2,
        "a read-only lookup may run again"
    );

    // What Restate stored holds what the model saw, never the charge's secret.
    let journal = server.journal(&invocation).await;
    assert!(journal.len() > 10, "{journal:#?}");
    let stored = journal.join("\n");
    assert!(
        stored.contains("Tool 'charge_card' failed with GatewayError"),
        "{stored}"
    );
    assert!(stored.contains("refunded 4500 on ORD-7"));
    assert!(!stored.contains(CANARY), "{stored}");
    assert!(!outcome.to_string().contains(CANARY));
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cut_off_by_a_crash_and_run_again_keeps_its_idempotency_key() {
    let Some(server) = Server::start("a call's idempotency key across a replay").await else {
        return;
    };
    let dir = scratch("crash-key-desk");
    let mut desk = Desk::start(&dir);
    server.register(&desk.uri()).await;

    std::fs::write(dir.join(HOLD_TRANSFER), "").unwrap();
    server
        .start_workflow(
            WORKFLOW,
            "crash-key",
            &json!("crash: refund, charge, then pay"),
        )
        .await;
    eventually("the transfer to start", || async {
        (!desk.lines("transfer-keys.log").is_empty()).then_some(())
    })
    .await;
    desk.kill().await;
    std::fs::remove_file(dir.join(HOLD_TRANSFER)).unwrap();
    desk.restart().await;

    let pending: Value = eventually("the run to wait for a decision", || async {
        let (status, body) = server
            .post(&format!("/{WORKFLOW}/crash-key/pending"), None)
            .await;
        let awaiting: Value = serde_json::from_str(&body).ok()?;
        (status == 200 && !awaiting.is_null()).then_some(awaiting)
    })
    .await;
    assert_eq!(pending["pending"][0]["call_id"], "call_4", "{pending}");
    // The bank has no record of the transfer: the person runs it again.
    let digest = pending["pending"][0]["digest"].as_str().unwrap().to_owned();
    let (status, body) = server
        .post(
            &format!("/{WORKFLOW}/crash-key/approve"),
            Some(&json!({"call_4": {"approve": digest}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    let outcome = server.outcome(WORKFLOW, "crash-key").await;
    assert_eq!(outcome["stop_reason"], "Completed", "{outcome}");
    assert_eq!(
        desk.lines("transfers.log"),
        ["started 700", "started 700", "done 700"]
    );
    // The process that ran it the second time was another, and the run was replayed from the
    // journal: the call had the same key, which the bank would have been sent both times.
    let keys = desk.lines("transfer-keys.log");
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert_eq!(keys[0], keys[1]);
    assert_eq!(keys[0].len(), 36, "{keys:?}");
    drop(server);
}
