#[derive(Debug, thiserror::Error, reticent::Disclose)]
#[disclose(argument)]
enum OrderError {
    #[error("no such order")]
    #[disclose(kind = "NotFound")]
    NotFound,
}

fn main() {}
