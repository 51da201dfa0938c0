use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use reticent::{ArgumentError, ToolContext, Toolbox};
use serde_json::json;

struct Shop {
    shipped: AtomicU64,
}

#[reticent::tools]
impl Shop {
    /// Ship an order.
    #[tool(destructive)]
    async fn ship_order(&self, order_id: String) -> Result<String, ArgumentError> {
        if !order_id.starts_with("ORD-") {
            return Err(ArgumentError::new("order ids look like ORD-1042"));
        }
        self.shipped.fetch_add(1, Ordering::SeqCst);
        Ok(order_id)
    }

    /// How many orders were shipped.
    #[reticent::tool(read_only, name = "shipped-count")]
    fn shipped(&self) -> u64 {
        self.shipped.load(Ordering::SeqCst)
    }

    /// Which call is this.
    #[tool]
    fn whoami(&self, cx: &ToolContext) -> String {
        cx.call_id().to_owned()
    }

    /// Not a tool: a helper the tools may use.
    fn helper(&self) -> u64 {
        self.shipped()
    }
}

fn main() {
    let shop = Arc::new(Shop {
        shipped: AtomicU64::new(0),
    });
    let tools = Arc::clone(&shop).tools();
    let names: Vec<_> = tools.iter().map(|t| t.definition().name.clone()).collect();
    assert_eq!(names, ["ship_order", "shipped-count", "whoami"]);
    assert!(tools[0].definition().annotations.destructive);
    assert!(tools[1].definition().annotations.read_only);

    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = rt.block_on(tools[0].call(json!({"order_id": "ORD-1"}), ToolContext::default()));
    assert_eq!(out.unwrap(), json!("ORD-1"));
    assert!(
        rt.block_on(tools[0].call(json!({"order_id": "1"}), ToolContext::default()))
            .unwrap_err()
            .is_argument()
    );
    let out = rt.block_on(tools[1].call(json!({}), ToolContext::default()));
    assert_eq!(out.unwrap(), json!(1));
    let out = rt.block_on(tools[2].call(json!({}), ToolContext::new("call-9", "whoami")));
    assert_eq!(out.unwrap(), json!("call-9"));
    assert_eq!(shop.helper(), 1);
}
