struct Shop;

#[reticent::tools]
impl Shop {
    #[tool]
    fn lookup_order(&mut self, order_id: &str) -> String {
        order_id.to_owned()
    }

    /// Look up an order, again.
    #[tool(name = "lookup_order", timeout = "soon")]
    fn find_order<T>(&self, order_id: String) -> String {
        order_id
    }
}

fn main() {}
