#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("database unavailable")]
    #[disclose(kind = "")]
    Database,
}

fn main() {}
