trait Orders {
    /// Look up an order.
    #[reticent::tool]
    fn lookup_order(&self, order_id: String) -> String {
        order_id
    }
}

fn main() {}
