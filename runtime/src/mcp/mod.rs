//! Serve tools over the [Model Context Protocol](https://modelcontextprotocol.io), with the same
//! disclosure rules as the agent loop. Needs the `mcp` feature.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use reticent::mcp::McpServer;
//!
//! /// Add two numbers.
//! #[reticent::tool(read_only, idempotent)]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = McpServer::builder()
//!         .name("calculator")
//!         .version("1.0.0")
//!         .tool(Add)
//!         .timeout(Duration::from_secs(30))
//!         .on_failure(|failure| eprintln!("{} failed: {}", failure.tool, failure.error_chain()))
//!         .build()?;
//!     server.serve_stdio().await?; // until the client closes stdin
//!     Ok(())
//! }
//! ```
//!
//! # What the client is shown
//!
//! A tool call is run by the same code as a call in the agent loop, and every failure text
//! is written by the same code as the loop's:
//!
//! | what happened | the client gets |
//! |---|---|
//! | the tool succeeded | a text result with the tool's output (`isError` false) |
//! | wrong or undecodable arguments | `isError: true`, `Invalid arguments for tool 'NAME': MESSAGE` |
//! | any other failure | `isError: true`, `Tool 'NAME' failed with KIND` |
//! | the same, with [`McpServerBuilder::include_error_message`] | `... failed with KIND: MESSAGE` |
//! | the tool ran out of time | `isError: true`, `Tool 'NAME' timed out after 30s and was stopped; ...` |
//! | the tool panicked | `isError: true`, `Tool 'NAME' failed with panic` |
//! | no tool has that name | a JSON-RPC error (`-32602`) listing the tools |
//! | the client cancelled the request | nothing (as the protocol says); the tool is stopped |
//!
//! Argument errors are tool results, not protocol errors, so the model can read them and
//! correct the call (MCP 2025-11-25, SEP-1303).
//!
//! # What the operator gets
//!
//! Every failure, with its full error, goes to the server side only:
//!
//! - each [`McpServerBuilder::on_failure`] hook receives a [`ToolFailure`](crate::ToolFailure)
//!   (`shown_to_model` is what the client was sent, `error` the whole error);
//! - each call runs in an `execute_tool` [`tracing`] span that records, on failure,
//!   `error.type` (the kind), `error.message` and `otel.status_code = "ERROR"`.
//!
//! # Cancellation
//!
//! When the client sends `notifications/cancelled` for a call (or disconnects), the tool's
//! [`ToolContext::cancellation`](crate::ToolContext::cancellation) token is cancelled and its
//! future is dropped. A cancelled call is not a failure: no hook is called, and the span
//! records `reticent.tool.cancelled = true`.
//!
//! # Transports
//!
//! - stdio: [`McpServer::serve_stdio`], for clients that start the server as a subprocess;
//! - streamable HTTP: [`McpServer::serve_http`] on a listener, or [`McpServer::http_service`]
//!   to mount the tower service in a router of your own;
//! - anything else rmcp can serve on (an in-memory duplex in tests): [`McpServer::serve`].
//!
//! [`rmcp`] is re-exported so its types match the version reticent was built with.

mod server;

pub use rmcp;
pub use server::{BuildError, McpServer, McpServerBuilder, ServeError};
