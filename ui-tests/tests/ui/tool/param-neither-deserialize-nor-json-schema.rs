struct OrderId(String);

/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: OrderId) -> String {
    order_id.0
}

fn main() {}
