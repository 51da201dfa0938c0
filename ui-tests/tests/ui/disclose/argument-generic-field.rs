#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum Invalid<T: std::fmt::Debug + std::fmt::Display> {
    #[error("invalid value: {0}")]
    #[disclose(argument)]
    Value(T),
}

fn main() {}
