use std::fmt;

// Like `anyhow::Error`: Debug and Display, but not `std::error::Error`.
struct Report(String);

impl fmt::Debug for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: String) -> Result<String, Report> {
    Err(Report(order_id))
}

fn main() {}
