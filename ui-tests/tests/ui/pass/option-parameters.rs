use reticent::{Tool, ToolContext};
use serde_json::json;

/// Search orders.
#[reticent::tool]
fn search(
    /// What to look for.
    query: String,
    /// At most this many (default 10).
    limit: Option<u32>,
    cursor: std::option::Option<String>,
) -> String {
    format!(
        "{query}:{}:{}",
        limit.unwrap_or(10),
        cursor.unwrap_or_default()
    )
}

fn main() {
    let params = &Search.definition().parameters;
    assert_eq!(params["required"], json!(["query"]));
    assert_eq!(
        params["properties"]["limit"]["description"],
        "At most this many (default 10)."
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let call = |args| {
        rt.block_on(Search.call(args, ToolContext::default()))
            .unwrap()
    };
    assert_eq!(call(json!({"query": "q"})), json!("q:10:"));
    assert_eq!(
        call(json!({"query": "q", "limit": null, "cursor": "c"})),
        json!("q:10:c")
    );
    assert_eq!(call(json!({"query": "q", "limit": 3})), json!("q:3:"));
}
