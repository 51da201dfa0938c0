//! Calls that may run twice: a call cut off mid-flight (its effect unknown) that is about to run
//! again asks its tool's reconcile hook first (`#[tool(reconcile = path)]`). Applied: it does
//! not run again and is recorded as applied; not applied: it runs; unknown: as without a hook.
//! The answer is on the call's `Effect`; what a hook panics with never reaches the model.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use reticent::tool::{Reconcile, Reconciled};
use reticent::{
    Agent, AgentResult, CancellationToken, Decisions, ModelResponse, RunOptions, RunState,
    ScriptedModel, StopReason, ToolCall, ToolContext,
    agent::{CallRecord, ModelStep, PendingReason, StepError, StepExecutor, ToolStep},
    failures::EffectOutcome,
};
use serde_json::json;

/// The secret a hook panics with: never in what the model sees, nor in a saved state.
const CANARY: &str = "CANARY-reconcile-51c7-https://gw:s3cr3t@10.0.0.7/charges";

/// The card gateway: each charge it took, with the idempotency key it was sent.
static CHARGES: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
/// The orders whose charge has started once: the first run of each is cut off.
static STARTED: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn charges_of(order_id: &str) -> Vec<String> {
    CHARGES
        .lock()
        .unwrap()
        .iter()
        .filter(|(order, _)| order == order_id)
        .map(|(_, key)| key.clone())
        .collect()
}

/// Charge the card on file. The first charge of an order is cut off: for an order that ends
/// in `-late`, after the gateway took the charge; otherwise before.
#[reticent::tool(destructive, reconcile = charge_landed)]
async fn charge_card(order_id: String, cents: u64, cx: &ToolContext) -> String {
    let first = STARTED
        .lock()
        .unwrap()
        .get_or_insert_with(HashSet::new)
        .insert(order_id.clone());
    let late = order_id.ends_with("-late");
    if first && !late {
        std::future::pending::<()>().await;
    }
    // The gateway is sent the call's key as `Idempotency-Key`.
    CHARGES
        .lock()
        .unwrap()
        .push((order_id.clone(), cx.idempotency_key().to_owned()));
    if first {
        std::future::pending::<()>().await;
    }
    format!("charged {cents} on {order_id}")
}

/// Asks the gateway whether it took a charge with the call's key.
async fn charge_landed(call: Reconcile) -> Reconciled {
    let order_id = call.arguments()["order_id"].as_str().unwrap_or_default();
    if order_id.starts_with("ORD-PANIC") {
        panic!("gateway lookup failed: {CANARY}");
    }
    if order_id.starts_with("ORD-UNSURE") {
        return Reconciled::Unknown;
    }
    let key = call.idempotency_key();
    let taken = CHARGES.lock().unwrap().iter().any(|(_, k)| k == key);
    if taken {
        Reconciled::Applied(json!(format!("charged on {order_id} (the gateway has it)")))
    } else {
        Reconciled::NotApplied
    }
}

fn agent(responses: Vec<ModelResponse>) -> Agent {
    Agent::builder(ScriptedModel::new(responses))
        .tool(ChargeCard)
        .build()
        .unwrap()
}

/// Runs a charge of `order_id` until its first call is cut off, and hands back the state,
/// stored and read back as another process would.
async fn cut_off(order_id: &str) -> RunState {
    let call = ToolCall::new(
        "c1",
        "charge_card",
        json!({"order_id": order_id, "cents": 700}),
    );
    let token = CancellationToken::new();
    let run = {
        let agent = agent(vec![ModelResponse::tool_calls(vec![call])]);
        let token = token.clone();
        tokio::spawn(async move {
            agent
                .run_with("Charge", RunOptions::default().cancellation(token))
                .await
        })
    };
    let started = || {
        STARTED
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|s| s.contains(order_id))
    };
    tokio::time::timeout(Duration::from_secs(10), async {
        while !started() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await
    .expect("the charge starts");
    // Cut off where it stands (the gateway's side of a `-late` charge is done already).
    tokio::time::sleep(Duration::from_millis(20)).await;
    token.cancel();
    let partial = run.await.unwrap().unwrap_err().into_partial();
    let state = partial.state.expect("a cancelled run can go on");
    assert_eq!(state.pending()[0].reason, PendingReason::Unknown);
    serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap()
}

async fn resume(state: RunState, decisions: Decisions) -> AgentResult {
    agent(vec![ModelResponse::text("Done.")])
        .resume(state, decisions)
        .await
        .unwrap()
}

fn shown(result: &AgentResult) -> String {
    serde_json::to_string(&result.messages).unwrap()
}

#[tokio::test]
async fn a_charge_that_went_through_before_the_run_was_cut_off_is_not_made_twice() {
    let state = cut_off("ORD-1-late").await;
    assert_eq!(charges_of("ORD-1-late").len(), 1);

    // No decision: the tool's hook can find out, and it finds the charge by its key.
    let result = resume(state, Decisions::new()).await;
    assert_eq!(result.output, "Done.");
    assert_eq!(
        charges_of("ORD-1-late").len(),
        1,
        "the card is charged once"
    );
    let effect = &result.effects[0];
    assert_eq!(
        (effect.call_id.as_str(), effect.outcome),
        ("c1", EffectOutcome::Applied)
    );
    assert_eq!(
        effect.reconciled,
        Some(Reconciled::Applied(json!(
            "charged on ORD-1-late (the gateway has it)"
        )))
    );
    // The model is shown the hook's output as the call's result.
    assert!(
        shown(&result).contains("charged on ORD-1-late (the gateway has it)"),
        "{}",
        shown(&result)
    );
}

#[tokio::test]
async fn an_approved_call_the_hook_finds_applied_does_not_run_again_either() {
    let state = cut_off("ORD-2-late").await;
    let decisions = Decisions::new().approve(&state.pending()[0]);
    let result = resume(state, decisions).await;
    assert_eq!(charges_of("ORD-2-late").len(), 1);
    assert!(matches!(
        result.effects[0].reconciled,
        Some(Reconciled::Applied(_))
    ));
}

#[tokio::test]
async fn a_charge_cut_off_before_the_gateway_took_it_runs_again_under_its_key() {
    let state = cut_off("ORD-3").await;
    assert!(charges_of("ORD-3").is_empty());

    let result = resume(state, Decisions::new()).await;
    assert_eq!(charges_of("ORD-3").len(), 1);
    let effect = &result.effects[0];
    assert_eq!(effect.outcome, EffectOutcome::Applied);
    assert_eq!(effect.reconciled, Some(Reconciled::NotApplied));
    assert!(shown(&result).contains("charged 700 on ORD-3"));
}

#[tokio::test]
async fn a_hook_that_cannot_tell_leaves_the_call_to_the_caller() {
    let state = cut_off("ORD-UNSURE-late").await;
    // Without a decision, the run stops again with the call pending, as without a hook.
    let paused = resume(state, Decisions::new()).await;
    assert_eq!(paused.stop_reason, StopReason::AwaitingApproval);
    assert_eq!(paused.pending[0].reason, PendingReason::Unknown);
    assert_eq!(charges_of("ORD-UNSURE-late").len(), 1);

    // Approved, it runs again (the gateway would see the same key).
    let state = paused.state.unwrap();
    let decisions = Decisions::new().approve(&state.pending()[0]);
    let result = resume(state, decisions).await;
    let keys = charges_of("ORD-UNSURE-late");
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0], keys[1], "the same idempotency key both times");
    assert_eq!(result.effects[0].reconciled, Some(Reconciled::Unknown));
}

#[tokio::test]
async fn what_a_hook_panics_with_never_reaches_the_model_or_the_state() {
    let state = cut_off("ORD-PANIC-late").await;
    let paused = resume(state, Decisions::new()).await;
    // A panic is an answer of `unknown`: the call waits for the caller.
    assert_eq!(paused.stop_reason, StopReason::AwaitingApproval);
    let state = paused.state.clone().unwrap();
    assert!(!shown(&paused).contains(CANARY));
    assert!(!serde_json::to_string(&state).unwrap().contains(CANARY));
    assert!(!format!("{paused:?}").contains(CANARY));

    let decisions = Decisions::new().reject(&state.pending()[0]);
    let result = resume(state, decisions).await;
    assert!(!shown(&result).contains(CANARY));
    assert!(
        !serde_json::to_string(&result.trajectory)
            .unwrap()
            .contains(CANARY)
    );
    assert_eq!(charges_of("ORD-PANIC-late").len(), 1);
}

/// A durable executor's second attempt: every call of `charge_card` was started by the first
/// attempt and never recorded, so it is reconciled rather than run.
struct SecondAttempt;

impl StepExecutor for SecondAttempt {
    fn model_call(&self, step: ModelStep) -> BoxFuture<'_, Result<ModelResponse, StepError>> {
        Box::pin(async move { step.run().await.map_err(StepError::Model) })
    }

    fn tool_call(&self, step: ToolStep) -> BoxFuture<'_, Result<CallRecord, StepError>> {
        Box::pin(async move { Ok(step.reconcile().await) })
    }
}

#[tokio::test]
async fn a_replayed_call_the_hook_finds_applied_goes_on_without_a_person() {
    let call = || {
        ToolCall::new(
            "c1",
            "charge_card",
            json!({"order_id": "ORD-4-late", "cents": 700}),
        )
    };
    // The first attempt: the charge is taken, and the process dies before it is recorded.
    let token = CancellationToken::new();
    let first = {
        let agent = agent(vec![ModelResponse::tool_calls(vec![call()])]);
        let options = RunOptions::default()
            .run_id("durable-4")
            .cancellation(token.clone());
        tokio::spawn(async move { agent.run_with("Charge", options).await })
    };
    tokio::time::timeout(Duration::from_secs(10), async {
        while charges_of("ORD-4-late").is_empty() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await
    .expect("the charge is taken");
    token.cancel();
    let _ = first.await;

    // The replay, named alike: the hook finds the charge under the call's key.
    let agent = agent(vec![
        ModelResponse::tool_calls(vec![call()]),
        ModelResponse::text("Done."),
    ]);
    let done = agent
        .run_on(
            "Charge",
            RunOptions::default().run_id("durable-4"),
            &SecondAttempt,
        )
        .await
        .unwrap();
    assert_eq!(done.stop_reason, StopReason::Completed);
    assert_eq!(charges_of("ORD-4-late").len(), 1);
    assert!(matches!(
        done.effects[0].reconciled,
        Some(Reconciled::Applied(_))
    ));
    // A tool without a hook, or a hook that cannot tell, still stops the run (as
    // `ToolStep::interrupted` does): see `a_hook_that_cannot_tell_leaves_the_call_to_the_caller`.
}
