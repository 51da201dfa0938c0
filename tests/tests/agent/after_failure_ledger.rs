//! The effects ledger: every call of a tool that is not `read_only`, in call order, with
//! whether it took effect (`Applied`, `Failed`, `Unknown`), on every result, also the partial
//! result of a cancelled, propagated or model-failed run.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reticent::{
    Agent, AgentError, ArgumentError, CancellationToken, ModelResponse, RunOptions, ScriptedModel,
    ToolCall, ToolFailureMode, ToolFailureOptions, agent::Effect, failures::EffectOutcome,
};
use reticent_tests::transcript::last_tool_result;
use serde_json::{Value, json};
use tokio::sync::Notify;

#[derive(Debug, thiserror::Error)]
#[error("gateway returned 503")]
struct GatewayError;

/// A payments back end that counts what its tools got to do.
#[derive(Default)]
struct Payments {
    transfers_started: AtomicUsize,
    transfers_done: AtomicUsize,
    notices: AtomicUsize,
    transfer_started: Notify,
    notice_sent: Notify,
}

#[reticent::tools]
impl Payments {
    /// Look up a balance.
    #[tool(read_only)]
    fn balance(&self, account: String) -> String {
        format!("{account}: 120.00")
    }

    /// Charge a card.
    #[tool]
    fn charge_card(&self, amount_cents: u64) -> Result<String, GatewayError> {
        if amount_cents > 10_000 {
            Err(GatewayError)
        } else {
            Ok(format!("charged {amount_cents}"))
        }
    }

    /// Refund a charge.
    #[tool(idempotent)]
    fn refund(&self, charge_id: String) -> Result<String, ArgumentError> {
        if charge_id.starts_with("ch_") {
            Ok(format!("refunded {charge_id}"))
        } else {
            Err(ArgumentError::new("charge ids look like ch_123"))
        }
    }

    /// Move money; takes a minute.
    #[tool(destructive)]
    async fn transfer_funds(&self, amount_cents: u64) -> String {
        self.transfers_started.fetch_add(1, Ordering::SeqCst);
        self.transfer_started.notify_one();
        tokio::time::sleep(Duration::from_secs(60)).await;
        self.transfers_done.fetch_add(1, Ordering::SeqCst);
        format!("moved {amount_cents}")
    }

    /// Notify the payee.
    // Async, so that it finishes on the run's own task: a sync tool in a run that can be
    // cancelled runs on the blocking pool, and one that finishes as the run is cancelled may
    // be recorded as cut off (`Unknown`).
    #[tool]
    async fn notify_payee(&self, note: String) -> String {
        self.notices.fetch_add(1, Ordering::SeqCst);
        self.notice_sent.notify_one();
        format!("sent {note}")
    }

    /// Reconcile the books; panics.
    #[tool]
    fn reconcile(&self) -> String {
        panic!("books out of balance")
    }
}

fn effect(tool: &str, call_id: &str, arguments: Value, outcome: EffectOutcome) -> Effect {
    // `Effect` is non-exhaustive: build it the way a caller reads it, from JSON.
    serde_json::from_value(json!({
        "tool": tool,
        "call_id": call_id,
        "arguments": arguments,
        "outcome": outcome,
    }))
    .unwrap()
}

/// The ledger as (tool, call id, outcome).
fn ledger(effects: &[Effect]) -> Vec<(&str, &str, EffectOutcome)> {
    effects
        .iter()
        .map(|e| (e.tool.as_str(), e.call_id.as_str(), e.outcome))
        .collect()
}

#[tokio::test]
async fn every_call_of_a_tool_that_is_not_read_only_is_in_the_ledger_in_call_order() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "balance", json!({"account": "acc_1"})),
            ToolCall::new("c2", "charge_card", json!({"amount_cents": 25_000})),
            ToolCall::new("c3", "charge_card", json!({"amount_cents": 500})),
        ]),
        ModelResponse::tool_calls(vec![
            ToolCall::new("c4", "refund", json!({"charge_id": "42"})),
            ToolCall::new("c5", "refund", json!({"charge_id": "ch_42"})),
            // Arguments that do not decode: the tool never ran.
            ToolCall::new("c6", "refund", json!({"charge": "ch_42"})),
            // A tool that does not exist changes nothing.
            ToolCall::new("c7", "wire_money", json!({})),
        ]),
        ModelResponse::text("Charged $5 and refunded ch_42."),
    ]);
    let agent = Agent::builder(model)
        .toolbox(Arc::new(Payments::default()))
        .max_consecutive_failures(10)
        .build()
        .unwrap();

    let result = agent.run("Charge and refund").await.unwrap();

    assert_eq!(
        result.effects,
        vec![
            effect(
                "charge_card",
                "c2",
                json!({"amount_cents": 25_000}),
                EffectOutcome::Failed
            ),
            effect(
                "charge_card",
                "c3",
                json!({"amount_cents": 500}),
                EffectOutcome::Applied
            ),
            effect(
                "refund",
                "c4",
                json!({"charge_id": "42"}),
                EffectOutcome::Failed
            ),
            effect(
                "refund",
                "c5",
                json!({"charge_id": "ch_42"}),
                EffectOutcome::Applied
            ),
            effect(
                "refund",
                "c6",
                json!({"charge": "ch_42"}),
                EffectOutcome::Failed
            ),
        ]
    );
}

#[tokio::test]
async fn a_call_refused_by_a_prerequisite_is_failed() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "notify_payee", json!({"note": "paid"})),
        ModelResponse::text("I have to charge first."),
    ]);
    let payments = Arc::new(Payments::default());
    let agent = Agent::builder(model)
        .toolbox(Arc::clone(&payments))
        .require("notify_payee", "charge_card")
        .build()
        .unwrap();

    let result = agent.run("Notify").await.unwrap();

    assert_eq!(
        ledger(&result.effects),
        [("notify_payee", "c1", EffectOutcome::Failed)]
    );
    assert_eq!(payments.notices.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_is_unknown_in_the_ledger_and_in_the_models_text() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "transfer_funds", json!({"amount_cents": 900})),
        ModelResponse::text("The transfer may or may not have gone through."),
    ]);
    let payments = Arc::new(Payments::default());
    let agent = Agent::builder(model.clone())
        .toolbox(Arc::clone(&payments))
        .failure_options(ToolFailureOptions::default().timeout(Duration::from_secs(10)))
        .build()
        .unwrap();

    let result = agent.run("Transfer").await.unwrap();

    assert_eq!(
        result.effects,
        [effect(
            "transfer_funds",
            "c1",
            json!({"amount_cents": 900}),
            EffectOutcome::Unknown
        )]
    );
    assert_eq!(
        last_tool_result(&model.requests()[1]).content,
        "Tool 'transfer_funds' timed out after 10s and was stopped; whether it took effect is \
         unknown"
    );
    // It did start, and it was stopped before it finished.
    assert_eq!(payments.transfers_started.load(Ordering::SeqCst), 1);
    assert_eq!(payments.transfers_done.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_panicked_call_is_unknown() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "reconcile", json!({})),
        ModelResponse::text("Reconciliation crashed."),
    ]);
    let agent = Agent::builder(model)
        .toolbox(Arc::new(Payments::default()))
        .build()
        .unwrap();

    let result = agent.run("Reconcile").await.unwrap();

    assert_eq!(
        ledger(&result.effects),
        [("reconcile", "c1", EffectOutcome::Unknown)]
    );
}

#[tokio::test]
async fn a_cancelled_turn_keeps_finished_and_mid_flight_calls_and_leaves_out_calls_not_started() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "charge_card", json!({"amount_cents": 500})),
        ModelResponse::tool_calls(vec![
            // Still running when the run is cancelled.
            ToolCall::new("c2", "transfer_funds", json!({"amount_cents": 900})),
            // Finished before the cancellation, while c2 was still running.
            ToolCall::new("c3", "notify_payee", json!({"note": "on its way"})),
            // Waiting for a free slot (two run at once): never started.
            ToolCall::new("c4", "notify_payee", json!({"note": "done"})),
            ToolCall::new("c5", "balance", json!({"account": "acc_1"})),
        ]),
        ModelResponse::text("never requested"),
    ]);
    let payments = Arc::new(Payments::default());
    let agent = Agent::builder(model.clone())
        .toolbox(Arc::clone(&payments))
        .max_parallel_tools(2)
        .build()
        .unwrap();
    let token = CancellationToken::new();
    {
        let payments = Arc::clone(&payments);
        let token = token.clone();
        tokio::spawn(async move {
            payments.transfer_started.notified().await;
            payments.notice_sent.notified().await;
            token.cancel();
        });
    }

    let run = agent.run_with("Pay", RunOptions::default().cancellation(token));
    let error = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the run did not end promptly")
        .unwrap_err();

    let AgentError::Cancelled { partial } = error else {
        panic!("expected Cancelled, got {error:?}");
    };
    assert_eq!(
        partial.effects,
        [
            effect(
                "charge_card",
                "c1",
                json!({"amount_cents": 500}),
                EffectOutcome::Applied
            ),
            effect(
                "transfer_funds",
                "c2",
                json!({"amount_cents": 900}),
                EffectOutcome::Unknown
            ),
            effect(
                "notify_payee",
                "c3",
                json!({"note": "on its way"}),
                EffectOutcome::Applied
            ),
        ]
    );
    assert_eq!(payments.transfers_started.load(Ordering::SeqCst), 1);
    assert_eq!(payments.transfers_done.load(Ordering::SeqCst), 0);
    assert_eq!(payments.notices.load(Ordering::SeqCst), 1);
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn a_propagated_run_keeps_the_ledger_of_its_whole_last_turn() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "refund", json!({"charge_id": "ch_1"})),
        ModelResponse::tool_calls(vec![
            ToolCall::new("c2", "charge_card", json!({"amount_cents": 25_000})),
            ToolCall::new("c3", "notify_payee", json!({"note": "charged"})),
        ]),
        ModelResponse::text("never requested"),
    ]);
    let agent = Agent::builder(model)
        .toolbox(Arc::new(Payments::default()))
        .failure_mode(ToolFailureMode::Propagate)
        .build()
        .unwrap();

    let error = agent.run("Refund and charge").await.unwrap_err();

    let AgentError::ToolFailed { failure, partial } = error else {
        panic!("expected ToolFailed, got {error:?}");
    };
    assert_eq!(failure.call_id, "c2");
    assert_eq!(
        ledger(&partial.effects),
        [
            ("refund", "c1", EffectOutcome::Applied),
            ("charge_card", "c2", EffectOutcome::Failed),
            ("notify_payee", "c3", EffectOutcome::Applied),
        ]
    );
}

#[tokio::test]
async fn a_run_whose_model_fails_keeps_the_ledger_so_far() {
    // The script runs out after the first turn: the second model call fails.
    let model = ScriptedModel::new(vec![ModelResponse::tool_call(
        "c1",
        "charge_card",
        json!({"amount_cents": 500}),
    )]);
    let agent = Agent::builder(model)
        .toolbox(Arc::new(Payments::default()))
        .build()
        .unwrap();

    let error = agent.run("Charge").await.unwrap_err();

    assert!(matches!(error, AgentError::Model { .. }), "{error:?}");
    assert_eq!(
        ledger(&error.partial().effects),
        [("charge_card", "c1", EffectOutcome::Applied)]
    );
}

#[tokio::test]
async fn a_run_of_read_only_calls_has_an_empty_ledger() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "balance", json!({"account": "acc_1"})),
        ModelResponse::text("120.00"),
    ]);
    let agent = Agent::builder(model)
        .toolbox(Arc::new(Payments::default()))
        .build()
        .unwrap();

    let result = agent.run("Balance?").await.unwrap();

    assert!(result.effects.is_empty(), "{:?}", result.effects);
}

#[test]
fn the_ledger_serializes_for_reconciliation_elsewhere() {
    let effect = effect(
        "transfer_funds",
        "c2",
        json!({"amount_cents": 900}),
        EffectOutcome::Unknown,
    );
    assert_eq!(
        serde_json::to_value(&effect).unwrap(),
        json!({
            "tool": "transfer_funds",
            "call_id": "c2",
            "arguments": {"amount_cents": 900},
            "outcome": "Unknown",
        })
    );
}
