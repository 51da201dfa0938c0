use std::sync::Arc;

use reticent::{ToolContext, Toolbox};
use serde_json::json;

/// A `Self` in a tool method's parameters names the impl block's type.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Counter {
    n: u32,
}

#[reticent::tools]
impl Counter {
    /// Add other counters to this one.
    #[tool]
    fn add(&self, other: Option<Self>, more: Vec<Self>) -> u32 {
        self.n + other.map_or(0, |o| o.n) + more.iter().map(|c| c.n).sum::<u32>()
    }
}

fn main() {
    let tools = Arc::new(Counter { n: 1 }).tools();
    let schema = &tools[0].definition().parameters;
    assert_eq!(schema["properties"]["more"]["items"]["$ref"], "#/$defs/Counter");
    let args = json!({"other": {"n": 2}, "more": [{"n": 3}, {"n": 4}]});
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let out = rt.block_on(tools[0].call(args.clone(), ToolContext::default()));
    assert_eq!(out.unwrap(), json!(10));
    let out = rt.block_on(tools[0].call_text(&args.to_string(), ToolContext::default()));
    assert_eq!(out.unwrap(), json!(10));
}
