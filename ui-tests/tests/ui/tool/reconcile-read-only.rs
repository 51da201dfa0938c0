use reticent::tool::{Reconcile, Reconciled};

async fn order_found(_call: Reconcile) -> Reconciled {
    Reconciled::Unknown
}

/// Look up an order.
#[reticent::tool(read_only, reconcile = order_found)]
async fn lookup_order(order_id: String) -> String {
    order_id
}

fn main() {}
