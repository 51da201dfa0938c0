use reticent::{Disclose, Tool, ToolContext, ToolError};
use serde_json::json;

#[derive(Debug, serde::Serialize)]
struct Order {
    id: String,
}

#[derive(Debug, thiserror::Error, Disclose)]
enum OrderError {
    #[error("no order {0}")]
    #[disclose(argument)]
    NotFound(String),
    #[error("db down: {0}")]
    Database(String),
}

/// Look up.
#[reticent::tool(read_only, timeout = "5s")]
async fn lookup_order(
    /// The id.
    order_id: String,
    with_items: Option<bool>,
    cx: &ToolContext,
) -> Result<Order, OrderError> {
    let _ = (with_items, cx);
    if order_id == "db" {
        return Err(OrderError::Database("postgres://secret".into()));
    }
    if order_id == "x" {
        return Err(OrderError::NotFound(order_id));
    }
    Ok(Order { id: order_id })
}

/// Sync io.
#[reticent::tool]
fn read_it(path: String) -> std::io::Result<String> {
    Err(std::io::Error::other(format!("cannot read {path}")))
}

struct Shop;
#[reticent::tools]
impl Shop {
    /// Ship.
    #[tool(destructive)]
    async fn ship_order(&self, order_id: String) -> Result<String, reticent::ArgumentError> {
        Ok(order_id)
    }
}

#[tokio::test]
async fn smoke() {
    println!(
        "{}",
        serde_json::to_string_pretty(LookupOrder.definition()).unwrap()
    );
    let r = LookupOrder
        .call(json!({"order_id": "a"}), ToolContext::default())
        .await
        .unwrap();
    assert_eq!(r, json!({"id": "a"}));
    let e = LookupOrder
        .call(json!({"order_id": "db"}), ToolContext::default())
        .await
        .unwrap_err();
    assert_eq!(
        e.model_text("lookup_order", false),
        "Tool 'lookup_order' failed with OrderError::Database"
    );
    let e = LookupOrder
        .call(json!({"order_id": "x"}), ToolContext::default())
        .await
        .unwrap_err();
    assert_eq!(
        e.model_text("lookup_order", false),
        "Invalid arguments for tool 'lookup_order': no order x"
    );
    let e = LookupOrder
        .call(json!({"order_id": 5}), ToolContext::default())
        .await
        .unwrap_err();
    println!("{}", e.model_text("lookup_order", false));
    let e = LookupOrder
        .call(json!({"order": 5}), ToolContext::default())
        .await
        .unwrap_err();
    println!("{}", e.model_text("lookup_order", false));
    let e = LookupOrder
        .call(json!({}), ToolContext::default())
        .await
        .unwrap_err();
    println!("{}", e.model_text("lookup_order", false));
    let e = ReadIt
        .call(json!({"path": "/etc"}), ToolContext::default())
        .await
        .unwrap_err();
    println!("{}", e.model_text("read_it", true));
    let tools = reticent::Toolbox::tools(std::sync::Arc::new(Shop));
    println!("{:?}", tools[0].definition());
    let _ = ToolError::from_error(std::io::Error::other("x"));
}
