use reticent::{Disclose, Disclosure, Tool, ToolContext};
use serde_json::json;

// Generic over the backend's error, which only a variant that is not an argument error holds.
#[derive(Debug, thiserror::Error, Disclose)]
enum LookupError<E: std::error::Error + 'static> {
    #[error("no record {0}")]
    #[disclose(argument)]
    NotFound(u32),
    #[error("backend failed")]
    Backend(#[source] E),
}

/// Look up a record.
#[reticent::tool]
fn lookup(id: u32) -> Result<String, LookupError<std::io::Error>> {
    if id == 0 {
        return Err(LookupError::Backend(std::io::Error::other(
            "postgres://app:hunter2@db",
        )));
    }
    Err(LookupError::NotFound(id))
}

fn main() {
    assert_eq!(
        LookupError::Backend(std::io::Error::other("down")).disclosure(),
        Disclosure::Kind("LookupError::Backend")
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let err = rt
        .block_on(Lookup.call(json!({"id": 7}), ToolContext::default()))
        .unwrap_err();
    assert_eq!(
        err.model_text("lookup", false),
        "Invalid arguments for tool 'lookup': no record 7"
    );
    let err = rt
        .block_on(Lookup.call(json!({"id": 0}), ToolContext::default()))
        .unwrap_err();
    assert_eq!(
        err.model_text("lookup", false),
        "Tool 'lookup' failed with LookupError::Backend"
    );
}
