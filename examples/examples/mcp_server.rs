//! The support desk's tools served over MCP, with the same disclosure rules as the agent loop:
//! the client sees `Tool 'charge_card' failed with GatewayError`, the operator's log has the
//! gateway's full error.
//!
//! ```text
//! cargo run --example mcp_server                           # stdio, for desktop and IDE clients
//! cargo run --example mcp_server -- --http 127.0.0.1:8080  # streamable HTTP at any path
//! ```
//!
//! `docs/mcp.md` shows how to register it in an MCP client. Logs go to stderr (on stdio, stdout
//! is the protocol); each failed call is logged at `warn` with its full error.
//!
//! `--test-tools` adds three tools the client tests use: `panic_now` (panics),
//! `wait_for_cancel` (waits until cancelled or its time is up) and `cancellations` (what
//! `wait_for_cancel` saw).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reticent::mcp::McpServer;
use reticent::mcp::rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use reticent::{ToolContext, ToolFailure};
use reticent_examples::support_desk::SupportDesk;
use serde::Serialize;

/// How long any one call may run.
const TIMEOUT: Duration = Duration::from_secs(10);

// ---- tools for the client tests (`--test-tools`) ------------------------------------------

/// What `wait_for_cancel` calls saw.
#[derive(Default)]
struct Probe {
    started: AtomicU64,
    cancelled: AtomicU64,
    finished: AtomicU64,
}

/// The counts `cancellations` reports.
#[derive(Serialize)]
struct Counts {
    started: u64,
    cancelled: u64,
    finished: u64,
}

/// Misbehaving tools, to show that each still gets an answer.
struct TestTools {
    probe: Probe,
}

#[derive(Debug, thiserror::Error)]
#[error("cancelled after it started")]
struct Cancelled;

#[reticent::tools]
impl TestTools {
    /// Panics. The client gets an error result, never a missing reply.
    #[tool]
    fn panic_now(&self) -> Result<String, std::io::Error> {
        panic!("panic_now was called; this message stays on the server");
    }

    /// Waits `seconds` (at most 60), or until the call is cancelled.
    #[tool(read_only)]
    async fn wait_for_cancel(
        &self,
        /// How long to wait, in seconds.
        seconds: u64,
        cx: &ToolContext,
    ) -> Result<String, Cancelled> {
        self.probe.started.fetch_add(1, Ordering::SeqCst);
        tokio::select! {
            () = cx.cancellation().cancelled() => {
                self.probe.cancelled.fetch_add(1, Ordering::SeqCst);
                eprintln!("wait_for_cancel: call {} saw its cancellation", cx.call_id());
                Err(Cancelled)
            }
            () = tokio::time::sleep(Duration::from_secs(seconds.min(60))) => {
                self.probe.finished.fetch_add(1, Ordering::SeqCst);
                Ok(format!("waited {seconds}s"))
            }
        }
    }

    /// How many `wait_for_cancel` calls started, were cancelled, and ran to the end.
    #[tool(read_only)]
    fn cancellations(&self) -> Counts {
        Counts {
            started: self.probe.started.load(Ordering::SeqCst),
            cancelled: self.probe.cancelled.load(Ordering::SeqCst),
            finished: self.probe.finished.load(Ordering::SeqCst),
        }
    }
}

// ---- the server ---------------------------------------------------------------------------

/// The operator's side of a failure: everything, including what the client was not shown.
fn log_failure(failure: &ToolFailure) {
    tracing::warn!(
        tool = %failure.tool,
        call_id = %failure.call_id,
        kind = %failure.kind,
        timed_out = failure.timed_out,
        elapsed = ?failure.elapsed,
        shown_to_client = %failure.shown_to_model,
        error = %failure.error_chain(),
        "tool call failed"
    );
}

/// The server: the support desk's tools, and the test tools if asked for.
fn server(test_tools: bool) -> McpServer {
    let mut builder = McpServer::builder()
        .name("support-desk")
        .version(env!("CARGO_PKG_VERSION"))
        .instructions(
            "Tools of an online shop's support desk. Look an order up before acting on it; \
             charge the card before shipping.",
        )
        .toolbox(Arc::new(SupportDesk::new()))
        .timeout(TIMEOUT)
        .on_failure(log_failure);
    if test_tools {
        builder = builder.toolbox(Arc::new(TestTools {
            probe: Probe::default(),
        }));
    }
    builder.build().expect("the tools have valid, unique names")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .init();

    let mut test_tools = false;
    let mut http = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--test-tools" => test_tools = true,
            "--http" => http = Some(args.next().ok_or("--http needs an address")?),
            other => {
                return Err(format!(
                    "unknown argument {other:?}; expected --test-tools or --http ADDRESS"
                )
                .into());
            }
        }
    }

    let server = server(test_tools);
    match http {
        None => {
            tracing::info!("serving MCP on stdio");
            server.serve_stdio().await?;
        }
        Some(address) => {
            let listener = tokio::net::TcpListener::bind(&address).await?;
            // The tests read this line to learn the port when given port 0.
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            server
                .serve_http(listener, StreamableHttpServerConfig::default())
                .await?;
        }
    }
    Ok(())
}
