struct Shop<T>(T);

#[reticent::tools]
impl<T: Send + Sync + 'static> Shop<T> {
    /// Look up an order.
    #[tool]
    fn lookup_order(&self, order_id: String) -> String {
        order_id
    }
}

fn main() {}
