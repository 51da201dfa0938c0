use reticent::{Disclose, Tool, ToolContext};
use serde_json::json;

#[derive(Debug, thiserror::Error, Disclose)]
enum OrderError {
    #[error("no order {0}; order ids look like ORD-1042")]
    #[disclose(argument)]
    NotFound(String),
    #[error("database unavailable: {0}")]
    Database(#[from] std::io::Error),
    #[error("rate limited by {0}")]
    #[disclose(kind = "RateLimited")]
    Throttled(String),
}

/// Look up an order.
#[reticent::tool]
async fn lookup_order(order_id: String) -> Result<String, OrderError> {
    match order_id.as_str() {
        "db" => Err(std::io::Error::other("postgres://admin:hunter2@db").into()),
        "slow" => Err(OrderError::Throttled("upstream".into())),
        "ORD-1042" => Ok(order_id),
        _ => Err(OrderError::NotFound(order_id)),
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let text = |id: &str| {
        rt.block_on(LookupOrder.call(json!({"order_id": id}), ToolContext::default()))
            .unwrap_err()
            .model_text("lookup_order", false)
    };
    assert_eq!(
        text("db"),
        "Tool 'lookup_order' failed with OrderError::Database"
    );
    assert_eq!(text("slow"), "Tool 'lookup_order' failed with RateLimited");
    assert_eq!(
        text("x"),
        "Invalid arguments for tool 'lookup_order': no order x; order ids look like ORD-1042"
    );
}
