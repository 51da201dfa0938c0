/// Add two numbers.
#[reticent::tool]
fn add((a, b): (u32, u32)) -> u32 {
    a + b
}

fn main() {}
