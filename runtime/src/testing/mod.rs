//! A leak-check kit for your own CI (feature `testing`): prove that your tools keep the
//! promise — a failed tool tells the model less than it tells the caller — for your own error
//! types, with reticent's own checks.
//!
//! - [`model_sees!`] and [`assert_model_sees!`]: the text the model is shown when a tool fails
//!   with an error value of your type, classified as the tool's `#[tool]` wrapper classifies
//!   it.
//! - [`LeakCheck`]: runs your tools through an agent on a scripted model, with a canary you
//!   planted (in an error, a panic's message, a context string, an `anyhow` chain), searches
//!   every channel the model could read for it, and checks that the caller got it. A
//!   [`LeakReport`] names each channel that leaked and the text around the canary.
//! - `McpConnection` (feature `mcp`): an MCP client connected to your `McpServer` in memory,
//!   with every byte it received.
//! - [`spans`]: the span recorder the check reads spans with, for your own telemetry tests.
//!
//! ```
//! use reticent::Disclose;
//! use reticent::testing::{LeakCheck, assert_model_sees};
//! use serde_json::json;
//!
//! const CANARY: &str = "CANARY-2c9d-postgres://svc:pa55@db.internal/prod";
//!
//! #[derive(Debug, thiserror::Error, Disclose)]
//! enum OrderError {
//!     #[error("no order {0}; order ids look like ORD-1042")]
//!     #[disclose(argument)]
//!     NotFound(String),
//!     #[error("database unavailable: {0}")]
//!     Database(String),
//! }
//!
//! /// Look up an order by id.
//! #[reticent::tool(read_only)]
//! async fn lookup_order(
//!     /// The order id, like "ORD-1042".
//!     order_id: String,
//! ) -> Result<String, OrderError> {
//!     match order_id.as_str() {
//!         "ORD-0000" => Err(OrderError::Database(CANARY.into())),
//!         _ => Err(OrderError::NotFound(order_id)),
//!     }
//! }
//!
//! // What the model is shown for each error of the tool's type.
//! assert_model_sees!(
//!     &LookupOrder,
//!     OrderError::Database(CANARY.into()),
//!     "Tool 'lookup_order' failed with OrderError::Database"
//! );
//! assert_model_sees!(
//!     &LookupOrder,
//!     OrderError::NotFound("ORD-9".into()),
//!     "Invalid arguments for tool 'lookup_order': no order ORD-9; order ids look like ORD-1042"
//! );
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! // The canary reaches the caller and no channel the model reads.
//! LeakCheck::new(CANARY)
//!     .tool(LookupOrder)
//!     .call("lookup_order", json!({"order_id": "ORD-0000"}))
//!     .run()
//!     .await
//!     .assert_no_leak();
//! # });
//! ```
//!
//! Spans are recorded by a global `tracing` subscriber the check installs the first time it
//! runs; a test binary that runs a leak check must not install another.

mod check;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
mod providers;
mod shown;
pub mod spans;

#[doc(inline)]
pub use crate::__testing_assert_model_sees as assert_model_sees;
#[doc(inline)]
pub use crate::__testing_model_sees as model_sees;
pub use check::{Leak, LeakCheck, LeakFound, LeakReport};
#[cfg(feature = "mcp")]
pub use mcp::McpConnection;
#[doc(hidden)]
pub use shown::{__assert_shown, __shown};
