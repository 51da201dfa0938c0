mod shop {
    pub struct Shop;

    #[reticent::tools]
    impl Shop {
        /// Look up an order.
        #[tool]
        pub fn lookup_order(&self, order_id: String) -> String {
            order_id
        }

        /// Count the orders.
        #[tool]
        pub(crate) async fn count_orders(&self) -> std::io::Result<u64> {
            Ok(3)
        }
    }
}

use std::sync::Arc;

use reticent::Toolbox;

fn main() {
    let tools = Arc::new(shop::Shop).tools();
    assert_eq!(tools.len(), 2);
    assert_eq!(shop::Shop.lookup_order("a".into()), "a");
}
