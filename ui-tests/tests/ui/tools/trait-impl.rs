struct Shop;

trait Lookup {
    fn lookup_order(&self, order_id: String) -> String;
}

#[reticent::tools]
impl Lookup for Shop {
    /// Look up an order.
    #[tool]
    fn lookup_order(&self, order_id: String) -> String {
        order_id
    }
}

fn main() {}
