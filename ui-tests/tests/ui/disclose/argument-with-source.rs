#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("bad order id")]
    #[disclose(argument)]
    BadId(#[source] std::num::ParseIntError),
}

fn main() {}
