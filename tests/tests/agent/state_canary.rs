//! A saved run state holds what the model saw, never a withheld error message: a canary secret
//! planted in a tool's error is on the caller's result, and never in a state, a checkpoint, or
//! the transcript of the run resumed from it.

use std::sync::{Arc, Mutex};

use reticent::{
    Agent, CancellationToken, Decisions, ModelResponse, RunOptions, RunState, ScriptedModel,
    StopReason, failures::ErrorNotKept,
};
use reticent_tests::shop::{CANARY, Shop, calls, charge, refund, transfer};

fn script() -> Vec<ModelResponse> {
    vec![calls([charge("c1")]), calls([refund("c2", 100)])]
}

#[tokio::test]
async fn a_paused_state_and_its_checkpoints_hold_no_withheld_message() {
    let shop = Shop::new();
    let saved: Arc<Mutex<Vec<String>>> = Arc::default();
    let options = {
        let saved = Arc::clone(&saved);
        RunOptions::default().checkpoint(move |state| {
            saved
                .lock()
                .unwrap()
                .push(serde_json::to_string(state).unwrap())
        })
    };
    let agent = Agent::builder(ScriptedModel::new(script()))
        .toolbox(Arc::clone(&shop))
        .require_approval("issue_refund")
        .build()
        .unwrap();
    let paused = agent
        .run_with("Charge, then refund", options)
        .await
        .unwrap();
    assert_eq!(paused.stop_reason, StopReason::AwaitingApproval);

    // The caller has the full error ...
    let failure = &paused.tool_failures[0];
    assert!(
        failure.error_chain().contains(CANARY),
        "{}",
        failure.error_chain()
    );
    assert_eq!(
        failure.shown_to_model,
        "Tool 'charge_card' failed with GatewayError"
    );
    // ... the state and every checkpoint do not.
    let state = paused.state.unwrap();
    let json = serde_json::to_string(&state).unwrap();
    assert!(!json.contains(CANARY), "{json}");
    assert!(json.contains("Tool 'charge_card' failed with GatewayError"));
    let saved = saved.lock().unwrap().clone();
    assert!(saved.len() >= 3, "{}", saved.len());
    for checkpoint in &saved {
        assert!(!checkpoint.contains(CANARY), "{checkpoint}");
    }

    // Resumed elsewhere: the failure is there as the model saw it, its error says where the
    // full one went, and nothing the model sees holds the secret.
    let state: RunState = serde_json::from_str(&json).unwrap();
    let decisions = Decisions::new().approve(&state.pending()[0]);
    let next = ScriptedModel::new(vec![ModelResponse::text("The charge failed; refunded.")]);
    let resumed = Agent::builder(next.clone())
        .toolbox(Arc::clone(&shop))
        .require_approval("issue_refund")
        .build()
        .unwrap()
        .resume(state, decisions)
        .await
        .unwrap();
    let restored = &resumed.tool_failures[0];
    assert_eq!(restored.call_id, "c1");
    assert_eq!(restored.kind, "GatewayError");
    assert_eq!(restored.shown_to_model, failure.shown_to_model);
    let not_kept = restored
        .error
        .downcast_ref::<ErrorNotKept>()
        .expect("a restored failure says its full error was not kept");
    assert_eq!(not_kept.call_id, "c1");
    assert!(!restored.error_chain().contains(CANARY));
    for request in next.requests() {
        let sent = serde_json::to_string(&request).unwrap();
        assert!(!sent.contains(CANARY), "{sent}");
    }
    let trajectory = serde_json::to_string(&resumed.trajectory).unwrap();
    assert!(!trajectory.contains(CANARY));
    assert_eq!(
        Shop::count(&shop.charges),
        1,
        "the failed charge did not run again"
    );
}

#[tokio::test]
async fn the_state_of_a_cancelled_turn_holds_no_withheld_message() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![ModelResponse::tool_calls(vec![
        charge("c1"),
        transfer("c2"),
    ])]);
    let token = CancellationToken::new();
    let run = {
        let agent = Agent::builder(model)
            .toolbox(Arc::clone(&shop))
            .build()
            .unwrap();
        let token = token.clone();
        tokio::spawn(async move {
            agent
                .run_with("Charge and pay", RunOptions::default().cancellation(token))
                .await
        })
    };
    shop.transfer_started.notified().await;
    token.cancel();
    let partial = run.await.unwrap().unwrap_err().into_partial();
    let json = serde_json::to_string(&partial.state.unwrap()).unwrap();
    // The charge finished (failed) inside the cut-off turn: the state keeps what the model is
    // to be shown for it, not the error.
    assert!(
        json.contains("Tool 'charge_card' failed with GatewayError"),
        "{json}"
    );
    assert!(!json.contains(CANARY), "{json}");
}
