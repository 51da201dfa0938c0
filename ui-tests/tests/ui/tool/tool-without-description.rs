#[reticent::tool]
fn lookup_order(order_id: String) -> String {
    order_id
}

fn main() {}
