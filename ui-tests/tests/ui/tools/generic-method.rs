struct Shop;

#[reticent::tools]
impl Shop {
    /// Echo a value.
    #[tool]
    fn echo<T: serde::Serialize>(&self, value: T) -> T {
        value
    }
}

fn main() {}
