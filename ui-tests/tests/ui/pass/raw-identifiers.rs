use reticent::{Tool, ToolContext};
use serde_json::json;

/// Find things of a type.
#[reticent::tool]
fn r#find(r#type: String, r#in: Option<String>) -> String {
    format!("{type}/{}", r#in.unwrap_or_default(), type = r#type)
}

fn main() {
    let def = Find.definition();
    assert_eq!(def.name, "find");
    assert_eq!(def.parameters["required"], json!(["type"]));
    assert!(def.parameters["properties"]["in"].is_object());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = rt.block_on(Find.call(json!({"type": "order", "in": "eu"}), ToolContext::default()));
    assert_eq!(out.unwrap(), json!("order/eu"));
}
