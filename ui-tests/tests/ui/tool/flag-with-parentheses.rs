/// Look up an order.
#[reticent::tool(read_only(true))]
fn lookup_order(order_id: String) -> String {
    order_id
}

fn main() {}
