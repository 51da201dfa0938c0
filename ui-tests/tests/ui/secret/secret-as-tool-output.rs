use reticent::Secret;

/// Fetch the api key.
#[reticent::tool]
fn api_key() -> Secret<String> {
    Secret::new(String::from("sk-live-123"))
}

fn main() {}
