#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("bad order id {id}")]
    #[disclose(argument)]
    BadId {
        id: String,
        source: std::num::ParseIntError,
    },
}

fn main() {}
