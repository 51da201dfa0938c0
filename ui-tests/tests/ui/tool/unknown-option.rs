/// Look up an order.
#[reticent::tool(readonly)]
fn lookup_order(order_id: String) -> String {
    order_id
}

fn main() {}
