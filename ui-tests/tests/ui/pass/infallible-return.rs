use reticent::{Tool, ToolContext};
use serde::Serialize;
use serde_json::json;

#[derive(Serialize)]
struct Order {
    id: String,
    total_cents: u64,
}

/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: String) -> Order {
    Order {
        id: order_id,
        total_cents: 4200,
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = rt
        .block_on(LookupOrder.call(json!({"order_id": "ORD-1"}), ToolContext::default()))
        .unwrap();
    assert_eq!(out, json!({"id": "ORD-1", "total_cents": 4200}));
}
