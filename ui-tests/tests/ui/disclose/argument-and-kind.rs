#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("no such order")]
    #[disclose(argument, kind = "NotFound")]
    NotFound,
}

fn main() {}
