//! The `mcp_server` example, built once per test binary, for the tests that run it as a
//! process.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use super::python::workspace;

/// Builds the `mcp_server` example and returns its path.
///
/// The whole workspace with all features is selected so that features resolve as they do for
/// `cargo test --workspace --all-features`: after that command, which builds the examples,
/// this build has nothing to do.
pub fn server_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let output = Command::new(cargo)
            .current_dir(workspace())
            .args([
                "build",
                "--quiet",
                "--workspace",
                "--all-features",
                "--example",
                "mcp_server",
                "--message-format=json",
            ])
            .stderr(Stdio::inherit())
            .output()
            .expect("cargo runs");
        assert!(
            output.status.success(),
            "building the mcp_server example failed"
        );
        let stdout = String::from_utf8(output.stdout).expect("cargo's messages are UTF-8");
        stdout
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "mcp_server")
            .find_map(|m| m["executable"].as_str().map(PathBuf::from))
            .expect("cargo names the mcp_server executable")
    })
}
