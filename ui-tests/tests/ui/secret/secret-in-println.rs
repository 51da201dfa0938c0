use reticent::Secret;

fn main() {
    let key = Secret::new(String::from("sk-live-123"));
    println!("using key {}", key);
}
