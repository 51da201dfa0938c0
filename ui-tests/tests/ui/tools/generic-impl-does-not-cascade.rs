struct Shop<T>(T);

#[reticent::tools]
impl<T: Send + Sync + 'static> Shop<T> {
    /// Look up an order.
    #[tool]
    fn lookup_order(&self, order_id: String) -> String {
        order_id
    }
}

fn use_toolbox<T: reticent::Toolbox>(_: T) {}

fn main() {
    // The `Toolbox` impl still exists: only the generic impl block is reported.
    use_toolbox(Shop(1_u8));
}
