struct Shop;

#[reticent::tools]
impl Shop {
    /// Look up an order.
    #[tool]
    fn lookup_order(&self, order_id: String) -> String {
        order_id
    }

    /// Look up an order, the other way.
    #[tool(name = "lookup_order")]
    fn find_order(&self, order_id: String) -> String {
        order_id
    }
}

fn main() {}
