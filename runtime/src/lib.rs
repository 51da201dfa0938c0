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
//! # How failures are classified
//!
//! The wrapper `#[tool]` generates decides at compile time, from the error type — from the
//! type, never from how it is written: `Result<T, E>`, `io::Result<T>`, an alias of `Result`
//! and a `Result` renamed with `use … as` are the same `Result`, and its `E` is classified:
//!
//! | error type | the model sees |
//! |---|---|
//! | arguments that don't decode | `Invalid arguments for tool 'NAME': MESSAGE` |
//! | [`ArgumentError`] | `Invalid arguments for tool 'NAME': MESSAGE` |
//! | a [`Disclose`] variant marked `#[disclose(argument)]` | as `ArgumentError`, with its `Display` |
//! | another [`Disclose`] variant | `Tool 'NAME' failed with Type::Variant` |
//! | [`Failure::new("Kind", error)`](Failure::new) | `Tool 'NAME' failed with Kind` |
//! | [`BoxError`] (`Box<dyn Error + Send + Sync>`) | `Tool 'NAME' failed with Error`; give it a kind with `Failure::new("Kind", boxed)` or return a concrete type |
//! | any other `std::error::Error + Send + Sync + 'static` | `Tool 'NAME' failed with Type` |
//! | `anyhow::Error`, `eyre::Report` (features `anyhow`, `eyre`) | what the first classified error of the chain, read from the outside in (a context value where its context stands), says: an argument error ([`ArgumentError`], [`ToolError::Argument`], a `#[disclose(argument)]` variant) with its own message alone, or the kind of a [`Failure`], [`ToolError::Failed`] or non-generic `#[derive(Disclose)]` error — and nothing inside that error, so an argument error inside a `Failure` is shown as the `Failure` is on its own; else `Tool 'NAME' failed with Error`. Context strings never reach the model |
//! | anything else | a compile error that says what to return instead |
//!
//! A `Result` is never sent to the model as an output: a `Result` as the output of the tool's
//! `Result`, or an output that is itself an error type, is a compile error at the return type;
//! a `Result` deeper in an output (`Vec<Result<T, E>>`, a struct field) is refused when the
//! output is encoded, as a fatal [`OutputError`] that holds nothing of the value. The rules
//! a compile error can name are listed in [`rules`].
//!
//! With `include_error_message`, the model is also shown the error's message; for `anyhow` and
//! `eyre`, the message of the error that gave the kind, never a context string. For `Error`,
//! that of the root cause, and only when the walk of the chain reached it: a chain longer than
//! the 32 errors the walk reads shows no message. `Option::context` (and eyre's
//! `ContextCompat`) on a `None` does not wrap an error: its value becomes the error itself, the
//! root cause of a chain of one, and the opt-in shows it as it shows the message of
//! `anyhow!(..)` — write it as an error's message, not as a note for the caller.
//!
//! `Type` is the type's own name without its module path (`GatewayError`); a type named
//! `Error` keeps its parent module (`io::Error`, `reqwest::Error`). `#[disclose(kind = "..")]`
//! overrides it. Messages shown to the model are cut to a bounded length.
//!
//! Arguments that don't decode are the model's to correct, so their message is shown in full —
//! with the argument's name and the path into it (``argument `address.zip`: ...``). That
//! includes the messages of your own decoding code: a parameter's `deserialize_with`, a
//! type's `try_from`, a hand-written `Deserialize`. So a parameter's decoding does no I/O and
//! reads no server state: a message about a row, a file or a connection would reach the model.
//! Decode the model's input there, and look things up in the tool's body, where its errors are
//! classified by type.
//!
//! # Where to go next
//!
//! - [`Agent`]: the loop that runs a model and its tools, applies the failure mode and hands
//!   the caller everything ([`AgentResult`], [`AgentEvent`], [`ToolFailure`], the effects
//!   ledger and the [`Trajectory`]).
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

mod agent;
mod argument_field;
mod error;
#[cfg(feature = "__http")]
mod http_client;
#[cfg(feature = "mcp")]
pub mod mcp;
mod model;
pub mod providers;
mod render;
#[cfg(feature = "restate")]
pub mod restate;
pub mod rules;
mod secret;
mod tool;

pub use error::{
    ArgumentError, BoxError, Disclose, Disclosure, EffectOutcome, Failure, RetryHint, ToolError,
    ToolFailure, kinds,
};
pub use secret::Secret;
pub use tool::{
    ArgumentValidator, LogLevel, OutputError, ParametersSchema, Tool, ToolAnnotations, ToolContext,
    ToolDefinition, ToolFuture, ToolPanicked, ToolTimedOut, Toolbox, UnknownTool, ValidatorError,
};

pub use agent::{
    Agent, AgentBuilder, AgentError, AgentEvent, AgentResult, BuildError, CallDigest, CallRecord,
    Decision, Decisions, Effect, ErrorNotKept, ForbiddenAfterUntrusted, ModelStep, NotADigest,
    NotApproved, NotRunAgain, PendingCall, PendingReason, PrerequisiteNotMet, ResumeError,
    ResumeRefused, RunOptions, RunState, StepError, StepExecutor, StopReason, ToolFailureMode,
    ToolFailureOptions, ToolStats, ToolStep, ToolsDisabled, Verdict,
};
pub use model::RetryPolicy;
pub use model::{
    Arguments, Message, Model, ModelError, ModelEvent, ModelRequest, ModelResponse, ReplayModel,
    SchemaDialect, SchemaError, ScriptedModel, ToolCall, ToolResult, Trajectory, Usage,
};

pub use reticent_macros::{Disclose, tool, tools};

pub use tokio_util::sync::CancellationToken;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
