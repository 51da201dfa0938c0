use reticent::Secret;

#[derive(Debug, thiserror::Error)]
enum AuthError {
    #[error("invalid api key {key}")]
    InvalidKey { key: Secret<String> },
}

fn main() {}
