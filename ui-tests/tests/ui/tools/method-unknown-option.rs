struct Shop;

#[reticent::tools]
impl Shop {
    /// Look up an order.
    #[tool(read_only, retries = 3)]
    fn lookup_order(&self, order_id: String) -> String {
        order_id
    }
}

fn main() {}
