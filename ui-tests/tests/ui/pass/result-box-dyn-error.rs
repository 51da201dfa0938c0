use reticent::{Tool, ToolContext};
use serde_json::json;

/// Read a file.
#[reticent::tool]
fn read_file(path: String) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    Err(format!("cannot read {path}").into())
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let err = rt
        .block_on(ReadFile.call(json!({"path": "/etc/shadow"}), ToolContext::default()))
        .unwrap_err();
    assert!(!err.is_argument());
    assert!(!err.model_text("read_file", false).contains("/etc/shadow"));
}
