use reticent::ToolContext;

/// Search.
#[reticent::tool]
fn search(text: String, #[serde(default)] cx: &ToolContext) -> String {
    format!("{text} {}", cx.call_id())
}

fn main() {}
