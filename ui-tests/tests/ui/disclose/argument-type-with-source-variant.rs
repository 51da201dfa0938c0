#[derive(Debug, thiserror::Error, reticent::Disclose)]
#[disclose(argument)]
enum DateError {
    #[error("dates look like 2024-05-01")]
    Format,
    #[error("bad day")]
    Day(#[source] std::num::ParseIntError),
}

fn main() {}
