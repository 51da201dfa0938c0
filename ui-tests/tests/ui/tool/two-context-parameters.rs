use reticent::ToolContext;

/// Look up an order.
#[reticent::tool]
fn lookup_order(first: &ToolContext, order_id: String, second: ToolContext) -> String {
    let _ = (first, second);
    order_id
}

fn main() {}
