// `reticent` is built without its feature `anyhow`.
/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: String) -> anyhow::Result<String> {
    Ok(order_id)
}

fn main() {}
