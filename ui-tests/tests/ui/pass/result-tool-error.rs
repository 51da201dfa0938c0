use reticent::{ArgumentError, Failure, Tool, ToolContext, ToolError};
use serde_json::json;

/// Check a code.
#[reticent::tool]
fn check(code: u32) -> Result<u32, ToolError> {
    match code {
        0 => Err(ArgumentError::new("code 0 is reserved").into()),
        1 => Err(Failure::new("Locked", std::io::Error::other("row 7 is locked")).into()),
        n => Ok(n),
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let call = |code: u32| rt.block_on(Check.call(json!({"code": code}), ToolContext::default()));
    assert_eq!(call(2).unwrap(), json!(2));
    assert!(call(0).unwrap_err().is_argument());
    assert_eq!(call(1).unwrap_err().kind(), "Locked");
}
