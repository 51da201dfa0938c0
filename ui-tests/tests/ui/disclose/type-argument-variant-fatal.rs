#[derive(Debug, thiserror::Error, reticent::Disclose)]
#[disclose(argument)]
enum DateError {
    #[error("dates look like 2024-05-01")]
    BadFormat,
    #[error("the calendar is corrupt")]
    #[disclose(fatal)]
    Corrupt,
}

fn main() {}
