/// Look up an order.
#[reticent::tool]
struct LookupOrder {
    order_id: String,
}

fn main() {}
