#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum GatewayError {
    #[error("gateway unavailable")]
    #[disclose(transient)]
    #[disclose(transient)]
    Unavailable,
}

fn main() {}
