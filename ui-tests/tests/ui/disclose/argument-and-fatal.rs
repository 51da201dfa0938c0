#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum TransferError {
    #[error("account ids look like acc_123")]
    #[disclose(argument, fatal)]
    BadAccount,
}

fn main() {}
