struct Order {
    id: String,
}

/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: String) -> Order {
    Order { id: order_id }
}

fn main() {}
