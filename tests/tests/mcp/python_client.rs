//! The `mcp_server` example driven by the official MCP Python SDK, over stdio and over
//! streamable HTTP: `tests/mcp_client/check_server.py` does the checking.
//!
//! The SDK lives in a virtual environment: `RETICENT_MCP_PYTHON` names its python (`.ci/run`
//! sets it), else `target/mcp-venv` is used, and created with the pinned SDK if missing.
//! `RETICENT_SKIP_PYTHON=1` skips these tests, loudly.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The longest one run of the script may take.
const LIMIT: Duration = Duration::from_secs(240);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is in the workspace")
        .to_owned()
}

/// The virtual environment's python, or `None` when the test is to be skipped.
///
/// When `RETICENT_MCP_PYTHON` is not set and `target/mcp-venv` does not exist yet, the
/// environment is created here (once per test run) with the same line `.ci/run` uses, so
/// `cargo test --workspace --all-features` works on a fresh clone without a setup step.
fn python() -> Option<PathBuf> {
    if std::env::var("RETICENT_SKIP_PYTHON").is_ok_and(|v| v == "1") {
        // Straight to stderr, past the test harness's capture, so it is seen.
        let _ = writeln!(
            std::io::stderr(),
            "\n\
             ************************************************************************\n\
             SKIPPED: the MCP Python SDK client tests (RETICENT_SKIP_PYTHON=1).\n\
             The MCP server was NOT checked against the Python SDK.\n\
             ************************************************************************\n"
        );
        return None;
    }
    if let Some(python) = std::env::var_os("RETICENT_MCP_PYTHON") {
        let python = PathBuf::from(python);
        assert!(
            python.exists(),
            "RETICENT_MCP_PYTHON is {}, which does not exist",
            python.display()
        );
        return Some(python);
    }
    static CREATED: OnceLock<PathBuf> = OnceLock::new();
    Some(CREATED.get_or_init(create_venv).clone())
}

/// Creates `target/mcp-venv` with the pinned MCP SDK, unless it is already there.
fn create_venv() -> PathBuf {
    let venv = workspace().join("target/mcp-venv");
    let python = venv.join("bin/python");
    let requirements = workspace().join("tests/mcp_client/requirements.txt");
    let run = |command: &mut Command| {
        let status = command
            .status()
            .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
        assert!(
            status.success(),
            "{command:?} failed ({status}); the MCP Python SDK tests need python3 with venv \
             and access to the Python package index (or RETICENT_SKIP_PYTHON=1 to skip them)"
        );
    };
    if !python.exists() {
        let _ = writeln!(
            std::io::stderr(),
            "creating {} with the MCP Python SDK ...",
            venv.display()
        );
        run(Command::new("python3").arg("-m").arg("venv").arg(&venv));
    }
    // Idempotent and quick when the pinned version is already installed.
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "-q", "--disable-pip-version-check", "-r"])
        .arg(&requirements));
    python
}

/// Builds the `mcp_server` example and returns its path.
///
/// The whole workspace with all features is selected so that features resolve as they do for
/// `cargo test --workspace --all-features`: after that command, which builds the examples,
/// this build has nothing to do.
fn server_binary() -> &'static Path {
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

/// Runs the script against the example with `extra` arguments; fails with its output.
fn check(extra: &[&str]) {
    let Some(python) = python() else { return };
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
    assert!(passed >= 9, "fewer checks ran than expected:\n{stdout}");
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
