//! The `mcp_server` example as a process: on stdio it exits promptly when the client closes
//! stdin while a call is running (clients kill a server that takes more than a couple of
//! seconds), and over HTTP it shuts down gracefully on SIGTERM and SIGINT.
//!
//! Each test asserts that the process has exited by a bound well under what clients allow,
//! measured from the test; none asserts how long it took below that.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use reticent::ToolContext;
use reticent::mcp::McpClient;
use reticent_tests::mcp::example::server_binary;
use serde_json::{Value, json};

/// A stdio server must be gone by then once its client closed stdin (the MCP Python SDK waits
/// two seconds before it kills the server).
const STDIO_EXIT_WITHIN: Duration = Duration::from_secs(1);

/// An HTTP server must be gone by then once it was sent a signal.
const SIGNAL_EXIT_WITHIN: Duration = Duration::from_secs(2);

/// The example with `--test-tools` and `extra` arguments, its stderr read line by line.
struct Server {
    child: Child,
    stderr: mpsc::Receiver<String>,
    log: Vec<String>,
}

impl Server {
    fn start(extra: &[&str]) -> Self {
        let mut child = Command::new(server_binary())
            .arg("--test-tools")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the example starts");
        let stderr = child.stderr.take().expect("piped");
        let (lines, stderr_lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stderr: stderr_lines,
            log: Vec::new(),
        }
    }

    /// Waits up to 10 seconds for a line of stderr that contains `text`, and returns it.
    fn wait_for_line(&mut self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) => {
                    self.log.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(_) => panic!("no line with {text:?} on stderr:\n{}", self.log.join("\n")),
            }
        }
    }

    /// Whether the process exited by `deadline`; its exit status if it did.
    fn exited_by(&mut self, deadline: Instant) -> Option<std::process::ExitStatus> {
        loop {
            if let Some(status) = self.child.try_wait().expect("the server's status") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Asserts that the process exits successfully within `bound` of `since`, when `what`
    /// happened; its whole stderr.
    fn assert_exits_within(&mut self, since: Instant, bound: Duration, what: &str) -> String {
        let status = self.exited_by(since + bound);
        let log = self.log();
        let Some(status) = status else {
            panic!("the server was still running {bound:?} after {what}:\n{log}")
        };
        eprintln!("exited {:?} after {what}", since.elapsed());
        assert!(
            status.success(),
            "a clean exit after {what}: {status}\n{log}"
        );
        log
    }

    /// The rest of stderr (the process has exited), with what was read before.
    fn log(&mut self) -> String {
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_millis(500)) {
            self.log.push(line);
        }
        self.log.join("\n")
    }

    /// Sends `signal` (`TERM`, `INT`) to the process.
    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{signal} failed");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes one JSON-RPC message.
fn send(stdin: &mut ChildStdin, message: &Value) {
    writeln!(stdin, "{message}").expect("the server reads stdin");
    stdin.flush().expect("flushed");
}

/// Starts a stdio server, completes the handshake and calls `tool` with `arguments`; returns
/// the server and its stdin once `started` is on its stderr.
fn call_and_wait(tool: &str, arguments: Value, started: &str) -> (Server, ChildStdin) {
    let mut server = Server::start(&[]);
    let mut stdin = server.child.stdin.take().expect("piped");
    let stdout: ChildStdout = server.child.stdout.take().expect("piped");
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "mcp_shutdown", "version": "0"},
        }}),
    );
    let mut stdout = BufReader::new(stdout);
    let mut line = String::new();
    stdout.read_line(&mut line).expect("the initialize result");
    let reply: Value = serde_json::from_str(&line).expect("JSON");
    assert_eq!(reply["id"], 1, "{reply}");
    assert!(reply.get("result").is_some(), "{reply}");
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": tool,
            "arguments": arguments,
        }}),
    );
    server.wait_for_line(started);
    // Keep reading stdout, so the server never blocks writing it.
    std::thread::spawn(move || while stdout.read_line(&mut line).is_ok_and(|n| n > 0) {});
    (server, stdin)
}

/// Calls `tool` on a stdio server, closes stdin once `started` is on stderr, and asserts that
/// the server exits promptly; its stderr.
fn close_stdin_during(tool: &str, arguments: Value, started: &str) -> String {
    let (mut server, stdin) = call_and_wait(tool, arguments, started);
    let closed = Instant::now();
    drop(stdin);
    let log = server.assert_exits_within(closed, STDIO_EXIT_WITHIN, "stdin closed");
    assert!(
        log.contains("the client closed stdin; exiting"),
        "the server said why it exited:\n{log}"
    );
    log
}

#[test]
fn closing_stdin_during_a_blocking_call_exits_promptly() {
    // A sync tool blocks a thread of the blocking pool and ignores cancellation: the call is
    // abandoned and the process exits without waiting for the thread.
    close_stdin_during(
        "block_thread",
        json!({"seconds": 30}),
        "block_thread: blocking for 30s",
    );
}

#[test]
fn closing_stdin_during_an_async_call_cancels_it_and_exits_promptly() {
    let log = close_stdin_during(
        "wait_for_cancel",
        json!({"seconds": 30}),
        "wait_for_cancel: call 2 started",
    );
    // The tool was told, and had the chance to stop on its own.
    assert!(
        log.contains("wait_for_cancel: call 2 saw its cancellation"),
        "the tool saw its token cancelled:\n{log}"
    );
}

/// The URL the HTTP server announces on stderr.
fn url(server: &mut Server) -> String {
    let line = server.wait_for_line("listening on ");
    line.split_once("listening on ")
        .map(|(_, url)| url.trim().to_owned())
        .expect("a URL")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_shuts_the_http_server_down_gracefully_during_a_call() {
    let mut server = Server::start(&["--http", "127.0.0.1:0"]);
    let url = url(&mut server);
    let client = McpClient::builder()
        .http(url.as_str())
        .await
        .expect("the client connects");
    let tools = client.tools().await.expect("the tools are listed");
    let wait = tools
        .into_iter()
        .find(|tool| tool.definition().name == "wait_for_cancel")
        .expect("the test tools are served");
    let call = tokio::spawn(async move {
        wait.call(
            json!({"seconds": 30}),
            ToolContext::new("c1", "wait_for_cancel"),
        )
        .await
    });
    let mut server = tokio::task::spawn_blocking(move || {
        server.wait_for_line("wait_for_cancel: call");
        server
    })
    .await
    .expect("the call started");

    let signalled = Instant::now();
    server.signal("TERM");
    let log = tokio::task::spawn_blocking(move || {
        server.assert_exits_within(signalled, SIGNAL_EXIT_WITHIN, "SIGTERM")
    })
    .await
    .expect("waited");
    assert!(log.contains("SIGTERM: shutting down"), "{log}");
    assert!(log.contains("shut down"), "{log}");
    assert!(
        log.contains("saw its cancellation"),
        "the running call was cancelled, its tool told:\n{log}"
    );
    // The client's call ends (as failed: the server went away), it does not hang.
    let outcome = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call ended")
        .expect("the task ran");
    assert!(outcome.is_err(), "{outcome:?}");
}

#[test]
fn sigint_shuts_an_idle_http_server_down() {
    let mut server = Server::start(&["--http", "127.0.0.1:0"]);
    url(&mut server);
    let signalled = Instant::now();
    server.signal("INT");
    let log = server.assert_exits_within(signalled, SIGNAL_EXIT_WITHIN, "SIGINT");
    assert!(log.contains("SIGINT: shutting down"), "{log}");
}
