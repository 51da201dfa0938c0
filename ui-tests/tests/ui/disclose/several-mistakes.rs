#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("bad order id: {0}")]
    #[disclose(argument)]
    BadId(#[from] std::num::ParseIntError),
    #[error("database unavailable")]
    #[disclose(kind = "")]
    Database,
    #[error("other")]
    #[disclose(secret)]
    Other,
}

fn main() {}
