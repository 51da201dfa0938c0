use reticent::{Tool, ToolContext};
use serde_json::json;

/// Add two numbers.
#[reticent::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    assert_eq!(add(1, 2), 3);
    assert_eq!(Add.definition().name, "add");
    assert_eq!(Add.definition().parameters["required"], json!(["a", "b"]));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = rt
        .block_on(Add.call(json!({"a": 2, "b": 40}), ToolContext::default()))
        .unwrap();
    assert_eq!(out, json!(42));
}
