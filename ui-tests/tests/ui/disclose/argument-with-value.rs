#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("no such order")]
    #[disclose(argument = true)]
    NotFound,
}

fn main() {}
