//! `reticent::mcp`: the server driven by rmcp's own client in memory, the streamable HTTP
//! service called as a tower service, and the `mcp_server` example driven by the official MCP
//! Python SDK (`RETICENT_MCP_PYTHON`, or `target/mcp-venv` created on first use;
//! `RETICENT_SKIP_PYTHON=1` skips those tests, loudly).
//!
//! One test binary, a module per concern. The support code is the `reticent_tests` library.
#![forbid(unsafe_code)]

mod approval;
mod client_budget;
mod client_oauth;
mod client_progress;
mod client_python;
mod client_reticent;
mod client_tools;
mod conformance;
mod hostile;
mod http;
mod idempotency;
mod latency;
mod pattern;
mod polling;
mod progress;
mod python_client;
mod server;
mod shutdown;
mod task;
