use reticent::Secret;

#[derive(Debug, thiserror::Error)]
#[error("invalid api key {0}")]
struct InvalidKey(Secret<String>);

fn main() {}
