#[reticent::tools]
struct Shop;

fn main() {}
