use reticent::{Tool, ToolContext};
use serde_json::json;

/// Look up an order.
#[reticent::tool]
async fn lookup_order(order_id: String) -> String {
    order_id
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert_eq!(rt.block_on(lookup_order("ORD-1".into())), "ORD-1");
    let def = LookupOrder.definition();
    assert_eq!(def.name, "lookup_order");
    assert_eq!(def.description, "Look up an order.");
    let out = rt
        .block_on(LookupOrder.call(json!({"order_id": "ORD-1"}), ToolContext::default()))
        .unwrap();
    assert_eq!(out, json!("ORD-1"));
}
