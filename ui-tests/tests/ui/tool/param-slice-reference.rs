/// Sum some numbers.
#[reticent::tool]
fn sum(numbers: &[u32]) -> u32 {
    numbers.iter().sum()
}

fn main() {}
