/// Look up an order.
#[reticent::tool(name = "has space")]
fn lookup_order(order_id: String) -> String {
    order_id
}

fn main() {}
