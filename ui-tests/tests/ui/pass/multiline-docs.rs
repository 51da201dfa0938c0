use reticent::Tool;
use serde_json::json;

/// Look up an order.
///
/// Returns the order with its lines.
#[reticent::tool]
#[doc = "Never for refunds."]
fn lookup_order(
    /// The order id,
    /// like "ORD-1042".
    order_id: String,
) -> String {
    order_id
}

fn main() {
    let def = LookupOrder.definition();
    assert_eq!(
        def.description,
        "Look up an order.\n\nReturns the order with its lines.\nNever for refunds."
    );
    assert_eq!(
        def.parameters["properties"]["order_id"],
        json!({"type": "string", "description": "The order id,\nlike \"ORD-1042\"."})
    );
}
