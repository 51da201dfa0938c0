use reticent::{ArgumentError, Tool, ToolContext};
use serde_json::json;

/// Parse a day of the month.
#[reticent::tool]
fn parse_day(day: String) -> Result<u8, ArgumentError> {
    day.parse()
        .ok()
        .filter(|d| (1..=31).contains(d))
        .ok_or_else(|| ArgumentError::new("`day` must be a number from 1 to 31"))
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let ok = rt.block_on(ParseDay.call(json!({"day": "5"}), ToolContext::default()));
    assert_eq!(ok.unwrap(), json!(5));
    let err = rt
        .block_on(ParseDay.call(json!({"day": "x"}), ToolContext::default()))
        .unwrap_err();
    assert!(err.is_argument());
    assert_eq!(
        err.model_text("parse_day", false),
        "Invalid arguments for tool 'parse_day': `day` must be a number from 1 to 31"
    );
}
