struct Counter {
    n: u32,
}

#[reticent::tools]
impl Counter {
    /// Add another counter to this one.
    #[tool]
    fn add(&self, other: Option<Self>) -> u32 {
        self.n + other.map_or(0, |o| o.n)
    }
}

fn main() {}
