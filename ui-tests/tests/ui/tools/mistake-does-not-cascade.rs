struct Shop;

#[reticent::tools]
impl Shop {
    /// Look up an order.
    #[tool(timeout = "soon")]
    fn lookup_order(&self, order_id: String) -> String {
        order_id
    }
}

fn use_toolbox<T: reticent::Toolbox>(_: T) {}

fn main() {
    // The methods and the `Toolbox` impl still exist: only the timeout is reported.
    let _ = Shop.lookup_order(String::new());
    use_toolbox(Shop);
}
