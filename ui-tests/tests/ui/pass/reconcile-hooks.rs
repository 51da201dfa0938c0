//! A reconcile hook on a free tool and on a method of a `#[tools]` impl (through `Self`).

use std::sync::Arc;

use reticent::tool::{Reconcile, Reconciled};
use reticent::{Tool, Toolbox};

async fn charge_landed(call: Reconcile) -> Reconciled {
    if call.idempotency_key().is_empty() {
        Reconciled::Unknown
    } else {
        Reconciled::NotApplied
    }
}

/// Charge the card on file.
#[reticent::tool(destructive, reconcile = charge_landed)]
async fn charge_card(order_id: String) -> String {
    order_id
}

struct Bank;

#[reticent::tools]
impl Bank {
    /// Move money.
    #[tool(reconcile = Self::transfer_landed)]
    async fn transfer(&self, cents: u64) -> u64 {
        cents
    }
}

impl Bank {
    async fn transfer_landed(_call: Reconcile) -> Reconciled {
        Reconciled::Applied(serde_json::json!("moved"))
    }
}

fn main() {
    assert!(ChargeCard.definition().reconcile().is_some());
    let tools = Arc::new(Bank).tools();
    assert!(tools[0].definition().reconcile().is_some());
}
