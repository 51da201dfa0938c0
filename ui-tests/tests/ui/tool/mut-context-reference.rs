use reticent::ToolContext;

/// Look up an order.
#[reticent::tool]
fn lookup_order(cx: &mut ToolContext, order_id: String) -> String {
    let _ = cx;
    order_id
}

fn main() {}
