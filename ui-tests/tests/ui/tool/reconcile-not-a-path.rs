use reticent::tool::{Reconcile, Reconciled};

async fn charge_landed(_call: Reconcile) -> Reconciled {
    Reconciled::Unknown
}

/// Charge the card on file.
#[reticent::tool(reconcile = "charge_landed")]
async fn charge_card(order_id: String) -> String {
    order_id
}

fn main() {}
