use reticent::Tool;

/// Look up an order.
#[reticent::tool(timeout = "soon")]
fn lookup_order(order_id: String) -> String {
    order_id
}

fn main() {
    // The function and the `LookupOrder` struct still exist: only the timeout is reported.
    let _ = lookup_order(String::new());
    let _ = LookupOrder.definition();
}
