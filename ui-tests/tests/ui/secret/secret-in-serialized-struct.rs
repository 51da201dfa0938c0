use reticent::Secret;

#[derive(serde::Serialize)]
struct Credentials {
    user: String,
    password: Secret<String>,
}

fn main() {}
