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

/// Counts its steps in integers, of any type, and in floats.
#[reticent::tool]
fn count_steps(steps: u32, cx: &ToolContext) -> u32 {
    for step in 1..=steps {
        cx.progress(step, steps, "counting");
    }
    let total: usize = 4;
    cx.progress(1, 2, None);
    cx.progress(3, total, None);
    cx.progress(2u64, None, None);
    cx.progress(0.5, 1.0, "half way");
    cx.progress(0.75, Some(1.0), None);
    steps
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
    let out = rt.block_on(CountSteps.call(json!({"steps": 3}), ToolContext::default()));
    assert_eq!(out.unwrap(), json!(3));
}
