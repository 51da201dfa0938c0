#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum CustomerError {
    #[error("bad customer reference: {0}")]
    #[disclose(argument)]
    BadRef(anyhow::Error),
}

fn main() {}
