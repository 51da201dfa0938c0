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
//! Over HTTP, SIGINT (Ctrl-C) or SIGTERM shuts the server down gracefully: it stops accepting
//! connections, cancels the calls still running and exits once open connections are closed.
//! On stdio it exits as soon as the client closes stdin, also when a call is still running.
//!
//! `--test-tools` adds the tools the client tests use: `panic_now` (panics),
//! `wait_for_cancel` (waits until cancelled or its time is up), `cancellations` (what
//! `wait_for_cancel` saw), `block_thread` (a sync tool that blocks its thread), `count_to`
//! (reports progress and logs a line at every level) and two tools with structured output,
//! `order_summary` (an object) and `count_orders` (a number).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reticent::mcp::McpServer;
use reticent::mcp::rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use reticent::{
    ArgumentError, CancellationToken, Tool, ToolContext, ToolDefinition, ToolFailure,
    tool::{LogLevel, ToolFuture},
};
use reticent_examples::support_desk::SupportDesk;
use serde::Serialize;
use serde_json::{Value, json};

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
    // No output schema, as a tool that never returns one: the per-tool opt-out.
    #[tool(output_schema = false)]
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
        eprintln!("wait_for_cancel: call {} started", cx.call_id());
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

    /// Blocks its thread for `seconds` (at most 60), ignoring cancellation.
    #[tool(read_only)]
    fn block_thread(
        &self,
        /// How long to block, in seconds.
        seconds: u64,
    ) -> String {
        eprintln!("block_thread: blocking for {seconds}s");
        std::thread::sleep(Duration::from_secs(seconds.min(60)));
        format!("blocked {seconds}s")
    }

    /// Counts from 1 to `n` (at most 100), reporting progress at each step, and logs one line
    /// at each level.
    #[tool(read_only)]
    async fn count_to(
        &self,
        /// Where to stop.
        n: u32,
        cx: &ToolContext,
    ) -> u32 {
        let n = n.min(100);
        for i in 1..=n {
            cx.progress(f64::from(i), f64::from(n), format!("counted {i}").as_str());
            tokio::task::yield_now().await;
        }
        cx.log(LogLevel::Debug, format_args!("counted to {n}"));
        cx.log(LogLevel::Info, "counting done");
        cx.log(LogLevel::Warning, "numbers are infinite; stopped early");
        cx.log(LogLevel::Error, "no error, only a line at the error level");
        n
    }
}

/// What `order_summary` returns: structured output.
#[derive(Serialize, schemars::JsonSchema)]
struct Summary {
    /// The order id.
    order_id: String,
    /// How many items it has.
    items: u32,
    /// Whether it has shipped.
    shipped: bool,
}

/// A tool with structured output, until `#[tool]` derives output schemas itself: `tool` under
/// a definition that has one.
struct Structured<T> {
    tool: T,
    definition: ToolDefinition,
}

impl<T: Tool> Structured<T> {
    fn new(tool: T, title: &str, output_schema: Value) -> Self {
        let definition = tool
            .definition()
            .clone()
            .with_title(title)
            .with_output_schema(output_schema);
        Self { tool, definition }
    }
}

impl<T: Tool> Tool for Structured<T> {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, args: Value, cx: ToolContext) -> ToolFuture<'_> {
        self.tool.call(args, cx)
    }

    fn call_text(&self, text: &str, cx: ToolContext) -> ToolFuture<'_> {
        self.tool.call_text(text, cx)
    }

    fn is_blocking(&self) -> bool {
        self.tool.is_blocking()
    }
}

/// Summarize an order.
#[reticent::tool(read_only)]
fn order_summary(
    /// The order id, like "ORD-1042".
    order_id: String,
) -> Result<Summary, ArgumentError> {
    match order_id.as_str() {
        "ORD-1042" => Ok(Summary {
            order_id,
            items: 3,
            shipped: false,
        }),
        _ => Err(ArgumentError::new(format!("no order {order_id:?}"))),
    }
}

/// Count the open orders.
#[reticent::tool(read_only)]
fn count_orders() -> u32 {
    3
}

/// The test tools with structured output: an object, and a number under the wrap convention.
fn structured_tools() -> [Arc<dyn Tool>; 2] {
    let summary = serde_json::to_value(schemars::schema_for!(Summary)).expect("a schema is JSON");
    let count = json!({
        "type": "object",
        "properties": {"result": {"type": "integer", "minimum": 0}},
        "required": ["result"],
        "x-reticent-wrap-result": true,
    });
    [
        Arc::new(Structured::new(OrderSummary, "Order summary", summary)),
        Arc::new(Structured::new(CountOrders, "Count orders", count)),
    ]
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
        for tool in structured_tools() {
            builder = builder.tool_arc(tool);
        }
    }
    builder.build().expect("the tools have valid, unique names")
}

/// Listens for SIGINT (Ctrl-C) and, on Unix, SIGTERM from now on; the future is ready with the
/// signal's name when one arrives.
fn shutdown_signal() -> std::io::Result<impl Future<Output = &'static str>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => "SIGINT",
                _ = terminate.recv() => "SIGTERM",
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            match tokio::signal::ctrl_c().await {
                Ok(()) => "Ctrl-C",
                Err(_) => std::future::pending().await,
            }
        })
    }
}

/// Serves on stdio, or over HTTP at `http` until a signal says to stop.
async fn serve(server: McpServer, http: Option<String>) -> Result<(), Box<dyn std::error::Error>> {
    match http {
        None => {
            tracing::info!("serving MCP on stdio");
            server.serve_stdio().await?;
            tracing::info!("the client closed stdin; exiting");
        }
        Some(address) => {
            let listener = tokio::net::TcpListener::bind(&address).await?;
            let shutdown = CancellationToken::new();
            // Listening before the address is announced: a signal sent once it is known is
            // never missed.
            let signal = shutdown_signal()?;
            let stop = shutdown.clone();
            tokio::spawn(async move {
                let name = signal.await;
                tracing::info!("{name}: shutting down");
                stop.cancel();
            });
            // The tests read this line to learn the port when given port 0.
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            let config = StreamableHttpServerConfig::default().with_cancellation_token(shutdown);
            server.serve_http(listener, config).await?;
            tracing::info!("shut down");
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
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

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let served = runtime.block_on(serve(server(test_tools), http));
    // A sync tool whose call was abandoned (its client left) may still hold a thread of the
    // blocking pool; dropping the runtime would wait for it. Exit without waiting.
    runtime.shutdown_background();
    served
}
