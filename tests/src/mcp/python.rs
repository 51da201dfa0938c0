//! The MCP Python SDK's virtual environment, for the tests that run it: found through
//! `RETICENT_MCP_PYTHON` (`.ci/run` sets it), else `target/mcp-venv`, created with the pinned
//! SDK if missing. `RETICENT_SKIP_PYTHON=1` skips those tests, loudly.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace's root directory.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is in the workspace")
        .to_owned()
}

/// The virtual environment's python, or `None` when the test is to be skipped; `what` says
/// what goes unchecked then, in the notice.
///
/// When `RETICENT_MCP_PYTHON` is not set and `target/mcp-venv` does not exist yet, the
/// environment is created here (once per test run) with the same line `.ci/run` uses, so
/// `cargo test --workspace --all-features` works on a fresh clone without a setup step.
pub fn python(what: &str) -> Option<PathBuf> {
    if std::env::var("RETICENT_SKIP_PYTHON").is_ok_and(|v| v == "1") {
        // Straight to stderr, past the test harness's capture, so it is seen.
        let _ = writeln!(
            std::io::stderr(),
            "\n\
             ************************************************************************\n\
             SKIPPED (RETICENT_SKIP_PYTHON=1): {what}\n\
             was NOT checked against the MCP Python SDK.\n\
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

/// The command that runs the workspace's Python script `script` with `args`, its stderr
/// dropped (the servers log each failure with its message), or `None` when the Python tests
/// are skipped; `what` says what goes unchecked then.
pub fn script(what: &str, script: &str, args: &[&str]) -> Option<tokio::process::Command> {
    let python = python(what)?;
    let mut command = tokio::process::Command::new(python);
    command
        .arg(workspace().join(script))
        .args(args)
        .stderr(std::process::Stdio::null());
    Some(command)
}

/// Starts `command`, a server that prints `URL <its URL>` as its first line (the Python
/// servers with `--http`): the child, killed when dropped, and the URL.
pub async fn serve_http(mut command: tokio::process::Command) -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt as _;
    command
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("the Python server starts");
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line())
        .await
        .expect("the server prints its URL")
        .expect("the server's stdout")
        .expect("a line");
    let url = line.strip_prefix("URL ").expect("`URL ..`").to_owned();
    (child, url)
}
