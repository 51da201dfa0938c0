struct Shop {
    orders: Vec<String>,
}

#[reticent::tools]
impl Shop {
    /// Add an order.
    #[tool]
    fn add_order(&mut self, order_id: String) {
        self.orders.push(order_id);
    }
}

fn main() {}
