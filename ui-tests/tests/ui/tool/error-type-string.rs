/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: String) -> Result<String, String> {
    Err(format!("no order {order_id}"))
}

fn main() {}
