/// Look up an order.
#[reticent::tool]
unsafe fn lookup_order(order_id: String) -> String {
    order_id
}

fn main() {}
