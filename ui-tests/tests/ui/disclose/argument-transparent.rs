#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error(transparent)]
    #[disclose(argument)]
    BadId(std::num::ParseIntError),
}

fn main() {}
