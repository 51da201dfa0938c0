#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum GatewayError {
    #[error("gateway unavailable")]
    #[disclose(transient, permanent)]
    Unavailable,
}

fn main() {}
