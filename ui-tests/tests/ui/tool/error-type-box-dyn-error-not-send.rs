/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: String) -> Result<String, Box<dyn std::error::Error>> {
    Err(order_id.into())
}

fn main() {}
