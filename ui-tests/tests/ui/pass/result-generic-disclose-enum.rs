use std::fmt::{Debug, Display};

use reticent::{Disclose, Disclosure, Tool, ToolContext};
use serde_json::json;

#[derive(Debug, thiserror::Error, Disclose)]
enum LookupError<K: Debug + Display> {
    #[error("no record {0}")]
    #[disclose(argument)]
    NotFound(K),
    #[error("backend failed")]
    Backend,
}

/// Look up a record.
#[reticent::tool]
fn lookup(id: u32) -> Result<String, LookupError<u32>> {
    if id == 0 {
        return Err(LookupError::Backend);
    }
    Err(LookupError::NotFound(id))
}

fn main() {
    assert_eq!(
        LookupError::<u32>::Backend.disclosure(),
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
