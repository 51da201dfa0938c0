#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("database unavailable")]
    #[disclose(kind = Unavailable)]
    Database,
}

fn main() {}
