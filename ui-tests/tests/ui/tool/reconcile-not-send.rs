use std::rc::Rc;

use reticent::tool::{Reconcile, Reconciled};

async fn charge_landed(call: Reconcile) -> Reconciled {
    let key = Rc::new(call.idempotency_key().to_owned());
    std::future::ready(()).await;
    Reconciled::Applied(key.as_str().into())
}

/// Charge the card on file.
#[reticent::tool(reconcile = charge_landed)]
async fn charge_card(order_id: String) -> String {
    order_id
}

fn main() {}
