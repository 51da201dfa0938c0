struct Shop;

#[reticent::tools]
impl Shop {
    /// Look up an order.
    #[tool]
    fn lookup_order(&self, order_id: String) -> String {
        order_id
    }
}

#[reticent::tools]
impl Shop {
    /// Ship an order.
    #[tool]
    fn ship_order(&self, order_id: String) -> String {
        order_id
    }
}

fn main() {}
