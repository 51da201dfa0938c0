/// Ignore the input.
#[reticent::tool]
fn ignore(_: String) {}

fn main() {}
