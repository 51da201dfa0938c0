use reticent::tool::Reconcile;

async fn charge_landed(_call: Reconcile) -> bool {
    true
}

/// Charge the card on file.
#[reticent::tool(reconcile = charge_landed)]
async fn charge_card(order_id: String) -> String {
    order_id
}

fn main() {}
