use std::collections::HashMap;

use reticent::{Tool, ToolContext};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Address {
    street: String,
    city: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Speed {
    Standard,
    Express,
}

#[derive(Deserialize, JsonSchema)]
struct Line {
    sku: String,
    quantity: u32,
}

/// Create a shipment.
#[reticent::tool]
fn ship(
    address: Address,
    speed: Speed,
    lines: Vec<Line>,
    labels: HashMap<String, String>,
    notes: Option<Vec<String>>,
) -> String {
    let speed = match speed {
        Speed::Standard => "standard",
        Speed::Express => "express",
    };
    let items: u32 = lines.iter().map(|l| l.quantity).sum();
    let _ = (&lines[0].sku, &address.street, notes);
    format!("{}:{speed}:{items}:{}", address.city, labels.len())
}

fn main() {
    let params = &Ship.definition().parameters;
    assert_eq!(
        params["required"],
        json!(["address", "speed", "lines", "labels"])
    );
    assert!(params["$defs"]["Address"].is_object());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let args = json!({
        "address": {"street": "1 Main St", "city": "Oslo"},
        "speed": "express",
        "lines": [{"sku": "A", "quantity": 2}, {"sku": "B", "quantity": 1}],
        "labels": {"gift": "yes"},
    });
    let out = rt
        .block_on(Ship.call(args, ToolContext::default()))
        .unwrap();
    assert_eq!(out, json!("Oslo:express:3:1"));
}
