use std::rc::Rc;

#[derive(Debug, thiserror::Error)]
#[error("order {0} is locked")]
struct OrderLocked(Rc<String>);

/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: String) -> Result<String, OrderLocked> {
    Err(OrderLocked(Rc::new(order_id)))
}

fn main() {}
