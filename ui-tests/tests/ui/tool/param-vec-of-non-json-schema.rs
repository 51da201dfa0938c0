#[derive(serde::Deserialize)]
struct OrderId(String);

/// Look up orders.
#[reticent::tool]
fn lookup_orders(order_ids: Vec<OrderId>) -> usize {
    order_ids.len()
}

fn main() {}
