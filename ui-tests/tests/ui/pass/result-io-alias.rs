use reticent::{Tool, ToolContext};
use serde_json::json;

/// Read a file.
#[reticent::tool]
fn read_file(path: String) -> std::io::Result<String> {
    Err(std::io::Error::other(format!("cannot read {path}")))
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let err = rt
        .block_on(ReadFile.call(json!({"path": "/etc/shadow"}), ToolContext::default()))
        .unwrap_err();
    assert_eq!(
        err.model_text("read_file", false),
        "Tool 'read_file' failed with io::Error"
    );
}
