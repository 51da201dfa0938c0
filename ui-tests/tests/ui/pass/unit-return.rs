use std::sync::atomic::{AtomicU32, Ordering};

use reticent::{Tool, ToolContext};
use serde_json::json;

static CALLS: AtomicU32 = AtomicU32::new(0);

/// Ping the server.
#[reticent::tool]
fn ping() {
    CALLS.fetch_add(1, Ordering::SeqCst);
}

/// Ping the server, spelled out.
#[reticent::tool]
async fn ping_unit() -> () {
    CALLS.fetch_add(1, Ordering::SeqCst);
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert_eq!(
        rt.block_on(Ping.call(json!({}), ToolContext::default()))
            .unwrap(),
        json!(null)
    );
    assert_eq!(
        rt.block_on(PingUnit.call(json!({}), ToolContext::default()))
            .unwrap(),
        json!(null)
    );
    assert_eq!(CALLS.load(Ordering::SeqCst), 2);
}
