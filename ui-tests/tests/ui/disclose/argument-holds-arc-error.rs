use std::error::Error;
use std::sync::Arc;

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum CustomerError {
    #[error("bad customer reference: {0}")]
    #[disclose(argument)]
    BadRef(Arc<dyn Error + Send + Sync>),
}

fn main() {}
