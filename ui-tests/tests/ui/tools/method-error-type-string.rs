struct Shop;

#[reticent::tools]
impl Shop {
    /// Look up an order.
    #[tool]
    async fn lookup_order(&self, order_id: String) -> Result<String, String> {
        Err(order_id)
    }
}

fn main() {}
