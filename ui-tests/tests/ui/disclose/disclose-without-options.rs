#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("no such order")]
    #[disclose]
    NotFound,
}

fn main() {}
