use reticent::Secret;

fn main() {
    let key = Secret::new(String::from("sk-live-123"));
    let _message = key.to_string();
}
