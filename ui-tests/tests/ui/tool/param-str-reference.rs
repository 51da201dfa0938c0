/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: &str) -> String {
    order_id.to_owned()
}

fn main() {}
