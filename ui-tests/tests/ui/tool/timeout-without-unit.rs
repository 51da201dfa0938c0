/// Look up an order.
#[reticent::tool(timeout = "5")]
fn lookup_order(order_id: String) -> String {
    order_id
}

fn main() {}
