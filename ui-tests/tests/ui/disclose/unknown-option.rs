#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("no such order")]
    #[disclose(model)]
    NotFound,
}

fn main() {}
