#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("bad order id: {0}")]
    #[disclose(argument)]
    BadId(#[from] std::num::ParseIntError),
}

fn main() {}
