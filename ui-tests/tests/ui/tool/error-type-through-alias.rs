// Classified by its type: an alias of a `Result` whose error is not an error type is refused
// as the `Result` written out would be.
type Outcome = Result<String, &'static str>;

/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: String) -> Outcome {
    Err(if order_id.is_empty() { "empty" } else { "unknown" })
}

fn main() {}
