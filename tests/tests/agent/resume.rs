//! Resuming a run that was cut off — cancelled, crashed between checkpoints, or stopped by a
//! failed model call: calls the state says finished never run again, and calls cut off
//! mid-flight that may have changed the world go to the caller to reconcile first.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reticent::{
    Agent, AgentError, CancellationToken, Decisions, Message, ModelError, ModelRequest,
    ModelResponse, ResumeError, RunOptions, RunState, ScriptedModel, StopReason,
    ToolFailureOptions, Usage,
    agent::PendingReason,
    failures::{EffectOutcome, kinds},
};
use reticent_tests::shop::{Shop, calls, ledger, lookup, refund, results, ship, transfer, waiting};
use serde_json::json;

fn agent(model: impl reticent::Model, shop: &Arc<Shop>) -> Agent {
    Agent::builder(model)
        .toolbox(Arc::clone(shop))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_cancelled_run_resumes_without_running_a_finished_call_again() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![ModelResponse::tool_calls(vec![
        ship("c1"),
        transfer("c2"),
    ])]);
    let token = CancellationToken::new();
    let run = {
        let agent = agent(model, &shop);
        let token = token.clone();
        tokio::spawn(async move {
            agent
                .run_with("Ship and pay", RunOptions::default().cancellation(token))
                .await
        })
    };
    shop.transfer_started.notified().await;
    token.cancel();
    let partial = run.await.unwrap().unwrap_err().into_partial();

    // The shipment finished; the transfer was cut off mid-flight.
    assert_eq!(
        ledger(&partial.effects),
        [
            ("ship_order", "c1", EffectOutcome::Applied),
            ("transfer_funds", "c2", EffectOutcome::Unknown),
        ]
    );
    assert_eq!(partial.pending.len(), 1);
    assert_eq!(partial.pending[0].call_id, "c2");
    assert_eq!(partial.pending[0].reason, PendingReason::Unknown);
    let state = partial.state.expect("a cancelled run can go on");
    assert_eq!(state.effects(), partial.effects);

    let next = ScriptedModel::new(vec![ModelResponse::text(
        "Shipped; the transfer was not retried.",
    )]);
    let agent = agent(next, &shop);
    // Refused until the caller decides on the call that may have taken effect.
    let error = agent
        .resume(state.clone(), Decisions::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot resume the run: call `c2` of `transfer_funds` was cut off and may have taken \
         effect: reconcile it, then approve it (to run it again), reject it, or mark it applied"
    );
    assert!(matches!(error, ResumeError::Refused(_)));

    let decisions = Decisions::new().reject(waiting(&state.pending(), "c2"));
    let result = agent.resume(state, decisions).await.unwrap();
    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(
        Shop::count(&shop.shipments),
        1,
        "the finished call did not run again"
    );
    assert_eq!(Shop::count(&shop.transfers_started), 1);
    assert_eq!(
        results(&result.messages),
        [
            ("c1", "shipped ORD-7", false),
            (
                "c2",
                "Tool 'transfer_funds' was interrupted and was not run again; whether it took \
                 effect is unknown",
                true
            ),
        ]
    );
    assert_eq!(result.tool_failures[0].kind, kinds::INTERRUPTED);
    // Nobody knows whether the transfer happened: the ledger says so.
    assert_eq!(
        ledger(&result.effects),
        [
            ("ship_order", "c1", EffectOutcome::Applied),
            ("transfer_funds", "c2", EffectOutcome::Unknown),
        ]
    );
}

/// The last state a checkpoint saved, as JSON, the way a caller would store it.
#[derive(Clone, Default)]
struct Store {
    saved: Arc<Mutex<Vec<String>>>,
}

impl Store {
    fn options(&self) -> RunOptions {
        let saved = Arc::clone(&self.saved);
        RunOptions::default().checkpoint(move |state| {
            saved
                .lock()
                .unwrap()
                .push(serde_json::to_string(state).unwrap());
        })
    }

    fn last(&self) -> RunState {
        let saved = self.saved.lock().unwrap();
        serde_json::from_str(saved.last().expect("a checkpoint was saved")).unwrap()
    }

    fn count(&self) -> usize {
        self.saved.lock().unwrap().len()
    }
}

#[tokio::test]
async fn a_run_that_crashed_resumes_from_its_last_checkpoint_without_repeating_an_applied_call() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![
        calls([refund("c1", 4_500)]),
        ModelResponse::tool_calls(vec![lookup("c2"), ship("c3"), transfer("c4")]),
    ]);
    let store = Store::default();
    let run = {
        let agent = agent(model, &shop);
        let options = store.options();
        tokio::spawn(async move { agent.run_with("Refund, ship and pay", options).await })
    };
    // The lookup and the shipment finished (and were saved) before the transfer, which comes
    // after them in the turn, started. Now the process dies: the task is dropped where it
    // stands, with no cancellation and no result.
    shop.transfer_started.notified().await;
    run.abort();
    assert!(run.await.unwrap_err().is_cancelled());
    assert_eq!(Shop::count(&shop.refunds), 1);
    assert_eq!(Shop::count(&shop.shipments), 1);

    let state = store.last();
    assert_eq!(state.turns(), 2);
    let pending = state.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].call_id, "c4");
    assert_eq!(pending[0].reason, PendingReason::Unknown);
    assert_eq!(
        ledger(&state.effects()),
        [
            ("issue_refund", "c1", EffectOutcome::Applied),
            ("ship_order", "c3", EffectOutcome::Applied),
            ("transfer_funds", "c4", EffectOutcome::Unknown),
        ]
    );

    // A new process: a new agent, the state from storage, and the caller's reconciliation —
    // the bank says the transfer went through.
    let next = ScriptedModel::new(vec![ModelResponse::text("Refunded, shipped and paid.")]);
    let store_again = Store::default();
    let decisions =
        Decisions::new().applied(&pending[0], json!("moved 700 (confirmed by the bank)"));
    let result = agent(next.clone(), &shop)
        .resume_with(state, decisions, store_again.options())
        .await
        .unwrap();
    assert_eq!(result.output, "Refunded, shipped and paid.");
    assert_eq!(
        Shop::count(&shop.refunds),
        1,
        "the applied refund did not run again"
    );
    assert_eq!(
        Shop::count(&shop.shipments),
        1,
        "nor did the finished shipment"
    );
    assert_eq!(Shop::count(&shop.transfers_started), 1, "nor the transfer");
    // The lookup, read-only, may have been cut off too: it ran again, which is harmless.
    assert!(Shop::count(&shop.lookups) >= 1);
    assert_eq!(
        results(&result.messages),
        [
            ("c1", "refunded 4500 on ORD-7", false),
            ("c2", "ORD-7: 129.00, delivered", false),
            ("c3", "shipped ORD-7", false),
            ("c4", "moved 700 (confirmed by the bank)", false),
        ]
    );
    assert_eq!(
        ledger(&result.effects),
        [
            ("issue_refund", "c1", EffectOutcome::Applied),
            ("ship_order", "c3", EffectOutcome::Applied),
            ("transfer_funds", "c4", EffectOutcome::Applied),
        ]
    );
    assert_eq!(result.turns, 3);
    // The resumed run saved its own checkpoints, the last after its turn was recorded.
    assert!(store_again.count() >= 1);
}

#[tokio::test]
async fn a_call_cut_off_mid_flight_runs_again_only_when_the_caller_approves() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![calls([transfer("c1")])]);
    let store = Store::default();
    let run = {
        let agent = agent(model, &shop);
        let options = store.options();
        tokio::spawn(async move { agent.run_with("Pay", options).await })
    };
    shop.transfer_started.notified().await;
    run.abort();
    let _ = run.await;

    let state = store.last();
    let next = ScriptedModel::new(vec![ModelResponse::text("Paid.")]);
    let agent = agent(next, &shop);
    let resumed = {
        let agent = agent.clone();
        let decisions = Decisions::new().approve(waiting(&state.pending(), "c1"));
        tokio::spawn(async move { agent.resume(state, decisions).await })
    };
    shop.transfer_started.notified().await;
    shop.release_transfer.notify_one();
    let result = resumed.await.unwrap().unwrap();
    assert_eq!(result.output, "Paid.");
    assert_eq!(Shop::count(&shop.transfers_started), 2);
    assert_eq!(Shop::count(&shop.transfers_done), 1);
    assert_eq!(
        ledger(&result.effects),
        [("transfer_funds", "c1", EffectOutcome::Applied)]
    );
}

#[tokio::test]
async fn checkpoints_follow_the_run_step_by_step() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![lookup("c1"), ship("c2")]),
        ModelResponse::text("Shipped."),
    ]);
    let states: Arc<Mutex<Vec<RunState>>> = Arc::default();
    let options = {
        let states = Arc::clone(&states);
        RunOptions::default().checkpoint(move |state| states.lock().unwrap().push(state.clone()))
    };
    let result = agent(model, &shop)
        .run_with("Ship ORD-7", options)
        .await
        .unwrap();
    assert_eq!(result.stop_reason, StopReason::Completed);
    let states = states.lock().unwrap();
    // Before the calls run (both cut off if the run stopped there), as each finishes, and
    // after the turn is recorded.
    let pending: Vec<Vec<String>> = states
        .iter()
        .map(|s| s.pending().into_iter().map(|p| p.call_id).collect())
        .collect();
    assert_eq!(
        pending,
        [vec!["c2".to_owned()], vec!["c2".into()], vec![], vec![]],
        "the read-only lookup never needs a decision"
    );
    assert_eq!(results(states[3].messages()).len(), 2);
}

/// A model that fails its first call, then answers.
struct FailsOnce {
    calls: Mutex<u32>,
}

impl reticent::Model for FailsOnce {
    fn complete<'a>(
        &'a self,
        _request: &'a ModelRequest,
    ) -> futures::future::BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let mut calls = self.calls.lock().unwrap();
        *calls += 1;
        let answer = if *calls == 1 {
            Err(ModelError::new("upstream overloaded"))
        } else {
            Ok(ModelResponse::text("Here you are."))
        };
        Box::pin(std::future::ready(answer))
    }
}

#[tokio::test]
async fn a_run_stopped_by_a_failed_model_call_resumes_with_the_same_call() {
    let shop = Shop::new();
    let agent = agent(
        FailsOnce {
            calls: Mutex::new(0),
        },
        &shop,
    );
    let error = agent.run("Hello").await.unwrap_err();
    assert!(matches!(error, AgentError::Model { .. }));
    let partial = error.into_partial();
    assert!(partial.pending.is_empty());
    let result = agent
        .resume(partial.state.unwrap(), Decisions::new())
        .await
        .unwrap();
    assert_eq!(result.output, "Here you are.");
    assert_eq!(result.messages.len(), 2);
    assert_eq!(result.turns, 1);
}

#[tokio::test]
async fn a_last_turn_cut_off_resumes_as_the_last_turn_with_its_note_once() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![calls([lookup("c1")])]);
    // Two turns: the second is the last, offered no tools; the script has no answer for it.
    let agent1 = Agent::builder(model)
        .toolbox(Arc::clone(&shop))
        .max_turns(2)
        .build()
        .unwrap();
    let partial = agent1.run("Look it up").await.unwrap_err().into_partial();
    let state = partial.state.unwrap();

    let next = ScriptedModel::new(vec![ModelResponse::text("It was delivered.")]);
    let agent2 = Agent::builder(next.clone())
        .toolbox(Arc::clone(&shop))
        .max_turns(2)
        .build()
        .unwrap();
    let result = agent2.resume(state, Decisions::new()).await.unwrap();
    assert_eq!(result.stop_reason, StopReason::TurnLimit);
    let request = &next.requests()[0];
    assert!(request.tools.is_empty(), "the last turn offers no tools");
    let notes = request
        .messages
        .iter()
        .filter(|m| matches!(m, Message::User { text } if text.contains("limit of turns")))
        .count();
    assert_eq!(notes, 1);
}

#[tokio::test]
async fn a_state_of_another_version_is_refused_when_it_is_read() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![ModelResponse::tool_call(
        "c1",
        "transfer_funds",
        json!({"amount_cents": 1}),
    )]);
    let agent = Agent::builder(model)
        .toolbox(shop)
        .require_approval("transfer_funds")
        .build()
        .unwrap();
    let state = agent.run("Pay").await.unwrap().state.unwrap();
    let mut json = serde_json::to_value(&state).unwrap();
    assert_eq!(json["version"], 1);
    json["version"] = json!(99);
    let error = serde_json::from_value::<RunState>(json).unwrap_err();
    assert_eq!(
        error.to_string(),
        "a run state of version 99 cannot be read by this version of reticent, which reads \
         version 1"
    );
}

/// Before, a stored count at `u32::MAX` panicked `resume` in a debug build (`attempt to add
/// with overflow`) and wrapped to 0 in a release build. Every count a state holds saturates.
#[tokio::test(start_paused = true)]
async fn a_state_whose_counts_are_at_their_bound_resumes_and_they_saturate() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![calls([transfer("c1")])]);
    let agent = Agent::builder(model)
        .toolbox(Arc::clone(&shop))
        .require_approval("transfer_funds")
        .failure_options(ToolFailureOptions::default().timeout(Duration::from_secs(1)))
        .build()
        .unwrap();
    let paused = agent.run("Pay").await.unwrap();
    let mut json = serde_json::to_value(paused.state.unwrap()).unwrap();
    let full = json!({"calls": u32::MAX, "failures": u32::MAX, "timeouts": u32::MAX});
    json["tool_stats"]["transfer_funds"] = full.clone();
    json["consecutive_failures"] = json!(u32::MAX);
    json["usage"] = json!({"input_tokens": u64::MAX, "output_tokens": u64::MAX});
    let state: RunState = serde_json::from_value(json).unwrap();

    // The approved transfer never finishes (nobody releases it): it times out, which counts a
    // call, a failure and a timeout, and one more failure in a row.
    let next = ScriptedModel::new(vec![
        ModelResponse::text("The transfer timed out.").with_usage(Usage::new(10, 10)),
    ]);
    let decisions = Decisions::new().approve(&state.pending()[0]);
    let done = Agent::builder(next)
        .toolbox(Arc::clone(&shop))
        .require_approval("transfer_funds")
        .failure_options(ToolFailureOptions::default().timeout(Duration::from_secs(1)))
        .build()
        .unwrap()
        .resume(state, decisions)
        .await
        .unwrap();
    assert_eq!(Shop::count(&shop.transfers_started), 1);
    assert!(done.tool_failures[0].timed_out);
    assert_eq!(
        serde_json::to_value(done.tool_stats["transfer_funds"]).unwrap(),
        full
    );
    assert_eq!(done.usage, Usage::new(u64::MAX, u64::MAX));
    assert_eq!(done.usage.total(), u64::MAX);
    // The failures in a row are past any limit: the model had its last turn without tools.
    assert_eq!(done.stop_reason, StopReason::FailureLimit);
}
