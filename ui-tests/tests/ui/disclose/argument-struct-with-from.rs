#[derive(Debug, thiserror::Error, reticent::Disclose)]
#[error("bad date: {0}")]
#[disclose(argument)]
struct BadDate(#[from] std::num::ParseIntError);

fn main() {}
