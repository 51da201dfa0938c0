#[derive(serde::Deserialize)]
struct OrderId(String);

struct Shop;

#[reticent::tools]
impl Shop {
    /// Look up an order.
    #[tool]
    fn lookup_order(&self, order_id: OrderId) -> String {
        order_id.0
    }
}

fn main() {}
