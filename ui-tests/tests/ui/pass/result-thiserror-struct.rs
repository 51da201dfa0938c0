use reticent::{Tool, ToolContext};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
#[error("gateway returned {status} for {url}")]
struct GatewayError {
    status: u16,
    url: String,
}

/// Charge a card.
#[reticent::tool]
fn charge_card(cents: u64) -> Result<u64, GatewayError> {
    let _ = cents;
    Err(GatewayError {
        status: 503,
        url: "https://pay.internal/charge".into(),
    })
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let err = rt
        .block_on(ChargeCard.call(json!({"cents": 100}), ToolContext::default()))
        .unwrap_err();
    assert_eq!(
        err.model_text("charge_card", false),
        "Tool 'charge_card' failed with GatewayError"
    );
    assert_eq!(
        err.model_text("charge_card", true),
        "Tool 'charge_card' failed with GatewayError: gateway returned 503 for https://pay.internal/charge"
    );
}
