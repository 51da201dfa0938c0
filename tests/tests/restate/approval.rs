//! An approval on a real Restate server: a durable run stops before a call that needs approval,
//! waits on a durable promise — also across a restart of its service — and a person resolves it
//! through the ingress; bad decisions are refused at once, a rejection is told to the model.

use crate::support::{Desk, Server, eventually, scratch};
use reticent::agent::CallDigest;
use reticent_tests::restate_desk::WORKFLOW;
use serde_json::{Value, json};

/// Waits until the workflow `id` waits for decisions; what it waits for.
async fn pending(server: &Server, id: &str) -> Value {
    eventually("the run to wait for approval", || async {
        let (status, body) = server
            .post(&format!("/{WORKFLOW}/{id}/pending"), None)
            .await;
        let awaiting: Value = serde_json::from_str(&body).ok()?;
        (status == 200 && !awaiting.is_null()).then_some(awaiting)
    })
    .await
}

/// Sends a person's decisions for the workflow `id` through the ingress: status and body.
async fn decide(server: &Server, id: &str, decisions: Value) -> (u16, String) {
    server
        .post(&format!("/{WORKFLOW}/{id}/approve"), Some(&decisions))
        .await
}

fn tool_results(outcome: &Value) -> Vec<&str> {
    outcome["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_approves_a_waiting_call_through_the_ingress() {
    let Some(server) = Server::start("approving a durable run through the ingress").await else {
        return;
    };
    let dir = scratch("approval-desk");
    let mut desk = Desk::start(&dir);
    server.register(&desk.uri()).await;

    // Turn 1: a lookup, and a refund of 500.00, which needs approval.
    server
        .start_workflow(WORKFLOW, "approve-1", &json!("Refund 500.00 on ORD-7"))
        .await;
    let awaiting = pending(&server, "approve-1").await;
    let arguments = json!({"order_id": "ORD-7", "amount_cents": 50_000});
    // The digest a person's decision names the call by.
    let digest = CallDigest::of("issue_refund", &arguments).to_string();
    assert_eq!(
        awaiting,
        json!({
            "round": 1,
            "pending": [{
                "call_id": "call_2",
                "tool": "issue_refund",
                "arguments": arguments,
                "reason": "approval",
                "digest": digest,
            }],
        })
    );
    // Nothing of the turn ran.
    assert!(desk.lines("refunds.log").is_empty());
    assert!(desk.lines("lookups.log").is_empty());

    // The service restarts while the run waits: the wait is durable.
    desk.restart().await;

    // Decisions that do not fit are refused at once, and say why.
    let (status, body) = decide(&server, "approve-1", json!({})).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("call `call_2` of `issue_refund` awaits approval and has no decision"),
        "{body}"
    );
    let (status, body) = decide(
        &server,
        "approve-1",
        json!({"call_2": {"approve": digest}, "call_9": "reject"}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("`call_9`, which is not waiting for one"),
        "{body}"
    );
    // An approval by id alone could approve whatever waits under the id: it must name the
    // call by its digest.
    let (status, body) = decide(&server, "approve-1", json!({"call_2": "approve"})).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains(
            "the approval of `call_2` (issue_refund) does not say which call it approves"
        ),
        "{body}"
    );
    // An approval of another call: the digest of a refund of another amount.
    let other = CallDigest::of(
        "issue_refund",
        &json!({"order_id": "ORD-7", "amount_cents": 5_000_000}),
    );
    let (status, body) = decide(
        &server,
        "approve-1",
        json!({"call_2": {"approve": other.to_string()}}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("the decision for `call_2` was made for another call"),
        "{body}"
    );
    // A call decided twice does not read.
    let (status, body) = server
        .post_text(
            &format!("/{WORKFLOW}/approve-1/approve"),
            &format!(r#"{{"call_2": "reject", "call_2": {{"approve": "{digest}"}}}}"#),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("the call `call_2` is decided twice"),
        "{body}"
    );
    assert!(desk.lines("refunds.log").is_empty(), "nothing ran");

    let (status, body) = decide(&server, "approve-1", json!({"call_2": {"approve": digest}})).await;
    assert_eq!(status, 200, "{body}");
    let outcome = server.outcome(WORKFLOW, "approve-1").await;
    assert_eq!(outcome["stop_reason"], "Completed");
    assert_eq!(
        tool_results(&outcome),
        ["ORD-7: 129.00, delivered", "refunded 50000 on ORD-7"]
    );
    assert_eq!(desk.lines("refunds.log"), ["ORD-7 50000"]);
    assert_eq!(desk.lines("model.log"), ["turn 1", "turn 2"]);
    // Nothing waits any more, and a late decision is refused.
    let (status, body) = decide(&server, "approve-1", json!({"call_2": {"approve": digest}})).await;
    assert_eq!(status, 409, "{body}");

    // A rejected call is not run, and the model is told so in fixed text.
    server
        .start_workflow(WORKFLOW, "reject-1", &json!("Refund 500.00 on ORD-7 again"))
        .await;
    pending(&server, "reject-1").await;
    let (status, body) = decide(&server, "reject-1", json!({"call_2": "reject"})).await;
    assert_eq!(status, 200, "{body}");
    let outcome = server.outcome(WORKFLOW, "reject-1").await;
    assert_eq!(
        tool_results(&outcome),
        [
            "ORD-7: 129.00, delivered",
            "Tool 'issue_refund' was not approved"
        ]
    );
    assert_eq!(outcome["failures"][0]["kind"], "not_approved");
    assert_eq!(
        desk.lines("refunds.log"),
        ["ORD-7 50000"],
        "still one refund"
    );
}
