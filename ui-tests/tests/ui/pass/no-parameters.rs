use reticent::{Tool, ToolContext};
use serde_json::json;

/// The current version.
#[reticent::tool]
fn version() -> &'static str {
    "1.0"
}

fn main() {
    assert_eq!(
        Version.definition().parameters,
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = rt
        .block_on(Version.call(json!({}), ToolContext::default()))
        .unwrap();
    assert_eq!(out, json!("1.0"));
    assert!(
        rt.block_on(Version.call(json!({"x": 1}), ToolContext::default()))
            .is_err()
    );
}
