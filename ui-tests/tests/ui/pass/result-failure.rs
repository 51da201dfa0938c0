use reticent::{Failure, Tool, ToolContext};
use serde_json::json;

/// Charge a card.
#[reticent::tool]
async fn charge_card(cents: u64) -> Result<u64, Failure> {
    if cents == 0 {
        return Err(Failure::new(
            "GatewayUnavailable",
            std::io::Error::other("503 from gateway"),
        ));
    }
    Ok(cents)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let err = rt
        .block_on(ChargeCard.call(json!({"cents": 0}), ToolContext::default()))
        .unwrap_err();
    assert_eq!(
        err.model_text("charge_card", false),
        "Tool 'charge_card' failed with GatewayUnavailable"
    );
}
