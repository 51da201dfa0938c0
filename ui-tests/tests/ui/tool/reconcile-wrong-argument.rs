use reticent::tool::Reconciled;

async fn charge_landed(_order_id: String) -> Reconciled {
    Reconciled::Unknown
}

/// Charge the card on file.
#[reticent::tool(reconcile = charge_landed)]
async fn charge_card(order_id: String) -> String {
    order_id
}

fn main() {}
