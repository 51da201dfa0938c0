#[derive(reticent::Disclose)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
