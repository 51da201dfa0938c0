//! With `reticent`'s feature `anyhow`, a tool may return `anyhow::Result<T>`: the model is shown
//! the first argument error in the chain, else the kind of the first `Failure` or `Disclose`
//! error, else `Error`, never a context string.

use anyhow::{Context as _, bail};
use reticent::{ArgumentError, Disclose, Failure, Tool, ToolContext};
use serde_json::json;

#[derive(Debug, thiserror::Error, Disclose)]
enum StoreError {
    #[error("store unavailable at {0}")]
    Unavailable(String),
}

/// Look up an order.
#[reticent::tool]
async fn lookup_order(order_id: String) -> anyhow::Result<String> {
    match order_id.as_str() {
        "bad" => bail!(ArgumentError::new("order ids look like ORD-1042")),
        "down" => Err(StoreError::Unavailable("postgres://db".into()))
            .context("looking up an order with token tok_live_123"),
        "upstream" => Err(Failure::new("Upstream", std::io::Error::other("503")))
            .context("tok_live_123"),
        "plain" => Err(anyhow::anyhow!("tok_live_123")),
        _ => Ok(order_id),
    }
}

fn text(order_id: &str) -> String {
    let future = LookupOrder.call(json!({ "order_id": order_id }), ToolContext::default());
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
        .expect_err("the tool fails")
        .model_text("lookup_order", false)
}

fn main() {
    assert_eq!(
        text("bad"),
        "Invalid arguments for tool 'lookup_order': order ids look like ORD-1042"
    );
    assert_eq!(
        text("down"),
        "Tool 'lookup_order' failed with StoreError::Unavailable"
    );
    assert_eq!(text("upstream"), "Tool 'lookup_order' failed with Upstream");
    assert_eq!(text("plain"), "Tool 'lookup_order' failed with Error");
}
