// A known limitation: an attribute cannot see that it is inside an impl block, so the struct
// `#[tool]` declares beside the function is refused there by the compiler. Tool methods go in
// an impl block marked `#[reticent::tools]`.
struct Shop;

impl Shop {
    /// Look up an order.
    #[reticent::tool]
    fn lookup_order(order_id: String) -> String {
        order_id
    }
}

fn main() {}
