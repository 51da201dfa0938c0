#[derive(Debug)]
struct OrderError;

/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: String) -> Result<String, OrderError> {
    let _ = order_id;
    Err(OrderError)
}

fn main() {}
