#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum CustomerError {
    #[error("bad customer reference: {cause}")]
    #[disclose(argument)]
    BadRef {
        cause: Box<dyn std::error::Error + Send + Sync>,
    },
}

fn main() {}
