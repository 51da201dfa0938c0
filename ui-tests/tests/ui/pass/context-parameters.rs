use reticent::{Tool, ToolContext};
use serde_json::json;

/// Which call is this.
#[reticent::tool]
fn call_id(cx: &ToolContext) -> String {
    cx.call_id().to_owned()
}

/// Which tool is this, taking the context by value after an argument.
#[reticent::tool]
async fn tool_name(prefix: String, cx: ToolContext) -> String {
    format!("{prefix}{}", cx.tool_name())
}

fn main() {
    assert_eq!(
        CallId.definition().parameters,
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(
        ToolName.definition().parameters["required"],
        json!(["prefix"])
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = rt.block_on(CallId.call(json!({}), ToolContext::new("call-7", "call_id")));
    assert_eq!(out.unwrap(), json!("call-7"));
    let out =
        rt.block_on(ToolName.call(json!({"prefix": ">"}), ToolContext::new("c", "tool_name")));
    assert_eq!(out.unwrap(), json!(">tool_name"));
}
