/// Delete an order.
#[reticent::tool(read_only, destructive)]
fn delete_order(order_id: String) {
    let _ = order_id;
}

fn main() {}
