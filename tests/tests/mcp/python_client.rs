//! The `mcp_server` example driven by the official MCP Python SDK, over stdio and over
//! streamable HTTP: `tests/mcp_client/check_server.py` does the checking.
//!
//! The SDK lives in a virtual environment (see `reticent_tests::mcp::python`): `RETICENT_MCP_PYTHON`
//! names its python (`.ci/run` sets it), else `target/mcp-venv` is used, and created with the
//! pinned SDK if missing. `RETICENT_SKIP_PYTHON=1` skips these tests, loudly.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reticent_tests::mcp::example::server_binary;
use reticent_tests::mcp::python::{python, workspace};

/// The longest one run of the script may take.
const LIMIT: Duration = Duration::from_secs(240);

/// Runs the script against the example with `extra` arguments; fails with its output.
fn check(extra: &[&str]) {
    let Some(python) = python("the MCP server (the mcp_server example)") else {
        return;
    };
    let server = server_binary();
    let script = workspace().join("tests/mcp_client/check_server.py");
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(server)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));

    let start = Instant::now();
    while child.try_wait().expect("the script's status").is_none() {
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let output = child.wait_with_output().expect("the script's output");
            panic!(
                "the MCP client script did not finish within {LIMIT:?}:\n{}\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("the script's output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the MCP Python SDK client checks failed:\n{stdout}\n{stderr}"
    );
    // The script ends with `TRANSPORT: N passed, 0 failed`; make sure it ran its checks.
    let summary = stdout.lines().last().unwrap_or_default();
    let passed: u32 = summary
        .split_once(": ")
        .and_then(|(_, rest)| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(passed >= 12, "fewer checks ran than expected:\n{stdout}");
    print!("{stdout}");
}

#[test]
fn the_python_sdk_over_stdio() {
    check(&[]);
}

#[test]
fn the_python_sdk_over_streamable_http() {
    check(&["--http"]);
}
