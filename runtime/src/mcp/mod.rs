//! Serve tools over the [Model Context Protocol](https://modelcontextprotocol.io), with the same
//! disclosure rules as the agent loop, and use MCP servers' tools in an agent. Serving needs
//! the `mcp` feature; `McpClient` needs `mcp-client` (see [Using MCP servers'
//! tools](#using-mcp-servers-tools)).
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
//! A tool call is run by the same entry point as a call in the agent loop, and its failure is
//! written by the same rules ([How failures are classified](crate#how-failures-are-classified),
//! `docs/disclosure.md`), with [`McpServerBuilder::include_error_message`] as the opt-in:
//!
//! | what happened | the client gets |
//! |---|---|
//! | the tool succeeded | a text result with the tool's output (`isError` false), and `structuredContent` for a tool with an output schema |
//! | the tool failed, its arguments were wrong, it ran out of time or panicked | `isError: true`, with the text the rules give the model |
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
//! # Long-running tools as tasks
//!
//! A `#[tool(task)]` tool is answered with a task when the client supports MCP's tasks
//! extension (as rmcp serves it): the client follows it with `tasks/get` and may stop it with
//! `tasks/cancel`. The call runs as any other, and its result — a failure written by the same
//! rules — is kept for [`McpServerBuilder::task_ttl`] (at most
//! [`McpServerBuilder::max_tasks`] tasks). `McpClient` follows a task to its end under the
//! call's time limit, and cancels it when the call is abandoned. With the features `restate` and
//! `mcp-client`, `McpServerBuilder::durable_tasks` keeps the tasks as Restate workflows
//! (`TaskWorkflow`), so that they survive a restart of the server. `docs/mcp.md` has the
//! details.
//!
//! # Transports
//!
//! - stdio: [`McpServer::serve_stdio`], for clients that start the server as a subprocess;
//! - streamable HTTP: [`McpServer::serve_http`] on a listener, or [`McpServer::http_service`]
//!   to mount the tower service in a router of your own;
//! - anything else rmcp can serve on (an in-memory duplex in tests): [`McpServer::serve`].
//!
//! Behind a proxy or load balancer that cuts a response open or quiet too long,
//! [`McpServerBuilder::sse_polling`] closes each request's event stream in time, and the client
//! resumes it with `Last-Event-ID` to get the rest of the call (SEP-1699); `McpClient` does.
//!
//! # Using MCP servers' tools
//!
//! With the `mcp-client` feature, `McpClient` connects to a server — started as a child
//! process and spoken to over stdio, or reached over streamable HTTP — and hands its tools to
//! an agent: `Agent::builder(model).tools(client.tools().await?)`. A remote tool is a
//! [`Tool`](crate::Tool) like any other and follows the same rule:
//!
//! | what happened | the model sees | the caller gets |
//! |---|---|---|
//! | success | the text content (images, audio and binary resources described, never their bytes), or the `structuredContent` as JSON, up to the output budget (its start and end around a notice past it) | the whole output |
//! | arguments that do not match the input schema, checked before the call | `Invalid arguments for tool 'NAME': PATH: CONSTRAINT` | an `ArgumentError`; the server is not called |
//! | the tool reports an error (`isError`) | `Tool 'NAME' failed with McpToolError` (or the client's `failure_kind`) | an `McpToolError` with the server's text |
//! | the same, with the client's `include_error_message` | `... failed with McpToolError: TEXT`, bounded | the same |
//! | a JSON-RPC error | `Tool 'NAME' failed with McpProtocolError` | `McpCallError::Protocol` with the server's message |
//! | an answer that cannot be read (not JSON, nested too deep, over the client's `max_message_size`, 64 MiB by default) | `Tool 'NAME' failed with McpUnreadableAnswer` | `McpCallError::Unreadable`, at once; the effect is unknown |
//! | the server's process exited or the connection was lost | `Tool 'NAME' failed with McpDisconnected` | `McpCallError::Disconnected` (with the exit status); the effect is unknown |
//! | no answer within the client's `timeout` (60s unless set) | `Tool 'NAME' timed out after 1m and was stopped; ...` | kind `timeout`; the server is sent `notifications/cancelled` |
//! | neither an answer nor progress within the client's `idle_timeout` (when set) | `Tool 'NAME' failed with McpTimeout` | `McpCallError::Silent`; the server is sent `notifications/cancelled` |
//! | the call's token was cancelled | `Tool 'NAME' failed with McpCancelled` (a cancelled run ends as cancelled) | `McpCallError::Cancelled`; the server is sent `notifications/cancelled` |
//! | the server answered with a task that ended without a result (failed, cancelled by the server, expired) | `Tool 'NAME' failed with McpTaskEnded` | `McpCallError::TaskEnded`; the effect is unknown |
//!
//! No wait on a server is unbounded: connecting and `tools()` time out after 30 seconds, a
//! call after 60 (each configurable on the builder), and an answer rmcp cannot decode fails
//! the request it answers instead of leaving it waiting.
//!
//! Every call is sent with a progress token: the server's progress and log lines reach the
//! caller as a local tool's do ([`AgentEvent::ToolProgress`](crate::AgentEvent::ToolProgress),
//! [`AgentEvent::ToolLog`](crate::AgentEvent::ToolLog)), bounded, never the model. With the
//! client's `idle_timeout`, a call that goes quiet that long fails; progress keeps a call going
//! up to its time limit, never past it.
//!
//! Remote output is untrusted (it taints the run) unless the client is built with
//! `trusted_output(true)`. A tool whose name is not a valid tool name is refused by `tools()`,
//! naming it and the fix (`rename` or `exclude`); `prefix` keeps two servers' tools apart.
//! Dropping the client kills a server it started. `docs/mcp.md` has the details.
//!
//! [`rmcp`] is re-exported so its types match the version reticent was built with.

mod server;

#[cfg(feature = "mcp-client")]
mod client;

#[cfg(feature = "mcp-client")]
pub use client::oauth;
#[cfg(feature = "mcp-client")]
pub use client::{McpCallError, McpClient, McpClientBuilder, McpClientError, McpToolError};
pub use rmcp;
#[cfg(all(feature = "restate", feature = "mcp-client"))]
pub use server::TaskWorkflow;
pub use server::{ApprovalRefused, AskError, Elicited, RefusalReason};
pub use server::{HttpSessions, McpServer, McpServerBuilder, ServeError};
