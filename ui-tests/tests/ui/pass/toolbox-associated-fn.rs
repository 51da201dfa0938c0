use std::sync::Arc;

use reticent::{ToolContext, Toolbox};
use serde_json::json;

struct Clock;

#[reticent::tools]
impl Clock {
    /// The server's time zone.
    #[tool]
    fn time_zone() -> &'static str {
        "UTC"
    }

    /// Add hours to a time of day.
    #[tool]
    async fn add_hours(hour: u8, hours: u8) -> u8 {
        (hour + hours) % 24
    }
}

fn main() {
    assert_eq!(Clock::time_zone(), "UTC");
    let tools = Arc::new(Clock).tools();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = rt.block_on(tools[0].call(json!({}), ToolContext::default()));
    assert_eq!(out.unwrap(), json!("UTC"));
    let out = rt.block_on(tools[1].call(json!({"hour": 23, "hours": 2}), ToolContext::default()));
    assert_eq!(out.unwrap(), json!(1));
}
