// Refused by its type, however it is spelled.
type LookupError = anyhow::Error;

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum CustomerError {
    #[error("bad customer reference: {0}")]
    #[disclose(argument)]
    BadRef(LookupError),
}

fn main() {}
