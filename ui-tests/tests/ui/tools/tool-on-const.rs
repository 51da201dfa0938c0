struct Shop;

#[reticent::tools]
impl Shop {
    /// The currency.
    #[tool]
    const CURRENCY: &'static str = "EUR";

    /// Look up an order.
    #[tool]
    fn lookup_order(&self, order_id: String) -> String {
        order_id
    }
}

fn main() {}
