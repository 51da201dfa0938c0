/// Echo a value.
#[reticent::tool]
fn echo<T: serde::Serialize>(value: T) -> T {
    value
}

fn main() {}
