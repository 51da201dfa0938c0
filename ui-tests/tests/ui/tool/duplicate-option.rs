/// Look up an order.
#[reticent::tool(timeout = "5s", read_only, timeout = "10s")]
fn lookup_order(order_id: String) -> String {
    order_id
}

fn main() {}
