// `eyre::Report` is not a `std::error::Error`, and `reticent` is built without its feature
// `eyre`: the field is refused because it derefs to `dyn Error`.
#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum CustomerError {
    #[error("bad customer reference: {0}")]
    #[disclose(argument)]
    BadRef(eyre::Report),
}

fn main() {}
