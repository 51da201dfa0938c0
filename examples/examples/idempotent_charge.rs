//! A charge that must not happen twice: the tool sends its call's idempotency key to the card
//! gateway as `Idempotency-Key`, and a reconcile hook asks the gateway about that key before a
//! call cut off mid-flight runs again.
//!
//! ```text
//! cargo run --example idempotent_charge
//! ```
//!
//! The gateway here lives in the process and keeps its charges by key, as Stripe, Adyen and
//! most payment APIs do; a real tool sends the key with its HTTP request:
//!
//! ```text
//! client.post(url).header("Idempotency-Key", cx.idempotency_key()).json(&body).send().await
//! ```
//!
//! The run charges the card, and is cut off before the gateway's answer arrives (the process
//! is told to stop); its state is saved as JSON. A second agent resumes it: the charge's effect
//! is unknown, so before it runs again its hook asks the gateway, which has the charge under the
//! call's key — the call is recorded as applied and the card is charged once.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use reticent::tool::{Reconcile, Reconciled};
use reticent::{
    Agent, AgentResult, CancellationToken, Decisions, ModelResponse, RunOptions, RunState,
    ScriptedModel, ToolContext,
};
use serde_json::json;

/// The card gateway: each charge it took, by the idempotency key it was sent with.
pub static GATEWAY: Mutex<BTreeMap<String, (String, u64)>> = Mutex::new(BTreeMap::new());

/// While set, the gateway's answer never arrives (the charge is taken all the same).
static ANSWER_LOST: Mutex<bool> = Mutex::new(true);

/// Takes a charge once per key, as a payment API does: a request sent again with the same key
/// gets the first charge's id.
fn gateway_charge(key: &str, order_id: &str, cents: u64) -> String {
    let mut charges = GATEWAY.lock().unwrap_or_else(PoisonError::into_inner);
    charges
        .entry(key.to_owned())
        .or_insert_with(|| (order_id.to_owned(), cents));
    format!("ch_{}", &key[..8])
}

/// Charge the customer's card for an order.
#[reticent::tool(destructive, open_world, untrusted_output = false, reconcile = charge_landed)]
pub async fn charge_card(
    /// The order, like ORD-1042.
    order_id: String,
    /// The amount in cents.
    cents: u64,
    cx: &ToolContext,
) -> String {
    let charge = gateway_charge(cx.idempotency_key(), &order_id, cents);
    if *ANSWER_LOST.lock().unwrap_or_else(PoisonError::into_inner) {
        // The connection drops before the answer: the caller never learns of `charge`.
        std::future::pending::<()>().await;
    }
    format!("charged {cents} cents on {order_id} ({charge})")
}

/// Asks the gateway whether it has a charge under the call's key.
pub async fn charge_landed(call: Reconcile) -> Reconciled {
    let charges = GATEWAY.lock().unwrap_or_else(PoisonError::into_inner);
    match charges.get(call.idempotency_key()) {
        Some((order_id, cents)) => Reconciled::Applied(json!(format!(
            "charged {cents} cents on {order_id} (found at the gateway by its key)"
        ))),
        None => Reconciled::NotApplied,
    }
}

fn agent(responses: Vec<ModelResponse>) -> Agent {
    Agent::builder(ScriptedModel::new(responses))
        .system("You take payments for orders.")
        .tool(ChargeCard)
        .build()
        .expect("the agent is valid")
}

/// The first run, cut off while it waits for the gateway: its state, as JSON.
pub async fn cut_off() -> String {
    let agent = agent(vec![ModelResponse::tool_call(
        "call_1",
        "charge_card",
        json!({"order_id": "ORD-1042", "cents": 12_900}),
    )]);
    let stop = CancellationToken::new();
    let stopper = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        stopper.cancel();
    });
    let error = agent
        .run_with("Charge ORD-1042", RunOptions::default().cancellation(stop))
        .await
        .expect_err("the run is cut off");
    let state = error.into_partial().state.expect("a cut-off run can go on");
    serde_json::to_string(&state).expect("a state is JSON")
}

/// The run again, from `saved`, by another agent: the hook decides, nobody has to.
pub async fn resumed(saved: &str) -> AgentResult {
    *ANSWER_LOST.lock().unwrap_or_else(PoisonError::into_inner) = false;
    let state: RunState = serde_json::from_str(saved).expect("the saved state reads back");
    agent(vec![ModelResponse::text("ORD-1042 is paid.")])
        .resume(state, Decisions::new())
        .await
        .expect("the run goes on")
}

#[tokio::main]
async fn main() {
    let saved = cut_off().await;
    println!("cut off while charging; the state waits on: {saved:.120}…");
    let done = resumed(&saved).await;
    println!("model: {}", done.output);
    for effect in &done.effects {
        println!(
            "ledger: {} {} {:?}, reconciled: {:?}",
            effect.tool, effect.call_id, effect.outcome, effect.reconciled
        );
    }
    let charges = GATEWAY.lock().unwrap_or_else(PoisonError::into_inner);
    println!("charges at the gateway: {}", charges.len());
    for (key, (order_id, cents)) in charges.iter() {
        println!("  {key}: {order_id} {cents}");
    }
}
