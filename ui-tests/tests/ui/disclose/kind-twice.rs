#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("database unavailable")]
    #[disclose(kind = "Unavailable", kind = "Down")]
    Database,
}

fn main() {}
