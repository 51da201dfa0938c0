//! Define the tools LLM agents call, with failures that tell the model less than they tell
//! the caller.
//!
//! ```
//! use reticent::{Disclose, Tool, ToolContext, ToolError};
//! use serde::Serialize;
//! use serde_json::json;
//!
//! #[derive(Debug, Serialize)]
//! struct Order { id: String, total_cents: u64 }
//!
//! #[derive(Debug, thiserror::Error, Disclose)]
//! enum OrderError {
//!     #[error("no order {0}; order ids look like ORD-1042")]
//!     #[disclose(argument)] // the model's fault: it is shown the message
//!     NotFound(String),
//!     #[error("database unavailable: {0}")]
//!     Database(String), // the model is shown `OrderError::Database` only
//! }
//!
//! /// Look up an order by id.
//! #[reticent::tool(read_only)]
//! async fn lookup_order(
//!     /// The order id, like "ORD-1042".
//!     order_id: String,
//!     /// Include line items (default false).
//!     with_items: Option<bool>,
//! ) -> Result<Order, OrderError> {
//!     let _ = with_items;
//!     match order_id.as_str() {
//!         "ORD-1042" => Ok(Order { id: order_id, total_cents: 4200 }),
//!         "ORD-0000" => Err(OrderError::Database("postgres://admin:hunter2@db".into())),
//!         _ => Err(OrderError::NotFound(order_id)),
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! // The function stays callable as written ...
//! assert!(lookup_order("ORD-1042".into(), None).await.is_ok());
//!
//! // ... and `LookupOrder` is the tool.
//! let def = LookupOrder.definition();
//! assert_eq!(def.description, "Look up an order by id.");
//! assert_eq!(def.parameters["required"], json!(["order_id"]));
//!
//! let err = LookupOrder
//!     .call(json!({"order_id": "ORD-0000"}), ToolContext::default())
//!     .await
//!     .unwrap_err();
//! assert_eq!(
//!     err.model_text("lookup_order", false),
//!     "Tool 'lookup_order' failed with OrderError::Database"
//! );
//! // The caller still has everything.
//! let ToolError::Failed(failure) = &err else { unreachable!() };
//! assert!(failure.error().to_string().contains("hunter2"));
//!
//! let err = LookupOrder
//!     .call(json!({"order_id": "42"}), ToolContext::default())
//!     .await
//!     .unwrap_err();
//! assert_eq!(
//!     err.model_text("lookup_order", false),
//!     "Invalid arguments for tool 'lookup_order': no order 42; order ids look like ORD-1042"
//! );
//! # });
//! ```
//!
#![doc = include_str!("../../docs/disclosure.md")]
//!
//! # Where to go next
//!
//! - [`Agent`]: the loop that runs a model and its tools, applies the failure mode and hands
//!   the caller everything ([`AgentResult`], [`AgentEvent`], [`ToolFailure`], the effects
//!   ledger and the [`Trajectory`]).
//! - [`content`]: tools that answer with images, audio and embedded resources, as MCP content
//!   blocks; the model is shown a description of them, the caller every byte.
//! - [`ScriptedModel`] and [`ReplayModel`]: offline models for examples and tests.
//! - [`providers`] (features `openai`, `anthropic`): real models over HTTP.
//! - `mcp` (feature `mcp`): serve tools over the Model Context Protocol with the same rules;
//!   with `mcp-client`, use MCP servers' tools in an agent (`mcp::McpClient`).
//! - [`Agent::resume`]: runs that stop for a person's approval, or are cut off, go on from a
//!   serializable [`RunState`]; `restate` (feature `restate`) runs them durably on Restate.
#![warn(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    rust_2018_idioms
)]
#![forbid(unsafe_code)]
#![doc(test(attr(deny(warnings))))]

pub mod agent;
mod argument_field;
pub mod content;
mod error;
pub mod failures;
#[cfg(feature = "__http")]
mod http_client;
mod in_place;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod model;
pub mod providers;
mod render;
#[cfg(feature = "restate")]
pub mod restate;
pub mod rules;
mod secret;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tool;

// The crate root holds what a first program names; the rest is one module deep: `agent`,
// `model`, `tool`, `content` for outputs that are not text, and `failures` for the error types
// a caller downcasts a failure to.
pub use error::{ArgumentError, Disclose, Disclosure, Failure, ToolError, ToolFailure};
pub use secret::Secret;
pub use tool::{BuildError, Tool, ToolAnnotations, ToolContext, ToolDefinition, Toolbox};

pub use agent::{
    Agent, AgentBuilder, AgentError, AgentEvent, AgentResult, Decision, Decisions, ResumeError,
    RunOptions, RunState, StopReason, ToolFailureMode, ToolFailureOptions,
};
pub use model::{
    Message, Model, ModelError, ModelRequest, ModelResponse, ReplayModel, SchemaDialect,
    ScriptedModel, ToolCall, ToolResult, Trajectory, Usage,
};

pub use reticent_macros::{Disclose, tool, tools};

pub use tokio_util::sync::CancellationToken;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
