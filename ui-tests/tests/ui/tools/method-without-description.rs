struct Shop;

#[reticent::tools]
impl Shop {
    #[tool]
    fn lookup_order(&self, order_id: String) -> String {
        order_id
    }
}

fn main() {}
