use std::sync::Arc;

struct Shop;

#[reticent::tools]
impl Shop {
    /// Look up an order.
    #[tool]
    fn lookup_order(self: Arc<Self>, order_id: String) -> String {
        order_id
    }
}

fn main() {}
