//! One tool call, end to end: the [`Tool`] trait and what a call is made of — its
//! [`ToolDefinition`], its [`ToolContext`], decoding the arguments, encoding the output, and
//! running the tool under its time limit. What went wrong is classified, and the caller's
//! record of it made, by the rules in `crate::error`.
//!
//! | file | holds |
//! |---|---|
//! | `definition.rs` | [`ToolDefinition`], [`ToolAnnotations`] |
//! | `schema.rs` | [`ParametersSchema`]: a tool's parameter schema; its output schema |
//! | `context.rs` | [`ToolContext`] |
//! | `idempotency.rs` | a call's idempotency key ([`ToolContext::idempotency_key`]): where it comes from, how it is written |
//! | `progress.rs` | a running call's progress and log lines, and who watches them |
//! | `future.rs` | [`ToolFuture`], what [`Tool::call`] returns |
//! | `body.rs` | what `#[tool]` writes per tool, and the methods written once around it: its arguments checked, decoded, its body run |
//! | `args.rs` | what `#[tool]`'s code decodes its arguments with: the decoders, the visitor's parts |
//! | `params.rs` | a tool's parameters as a tuple of their types, decoded and described by name, written once per number of parameters |
//! | `value.rs` | decoding the model's arguments from a `Value`, and the error the model is shown |
//! | `owned.rs` | decoding one argument by moving out of it; the path to what did not decode |
//! | `text.rs` | decoding them straight from JSON text |
//! | `nesting.rs` | the arguments' one nesting limit, and the walks that keep it |
//! | `budget.rs` | the model's view of a successful output past its budget: its head and tail around a notice |
//! | `output.rs` | splitting what a tool returned by its type; encoding its output as JSON or text, and the one rule for an output as text |
//! | `no_result.rs` | refusing a `Result` anywhere in an output as it is encoded |
//! | `set.rs` | checking and indexing a set of tools ([`BuildError`]): a schema whose constraints cannot be compiled is refused there |
//! | `validate.rs` | [`ArgumentValidator`]: checking arguments against a schema's constraints |
//! | `pattern.rs` | the `pattern` keyword it checks, and the bounds on the work of a check |
//! | `constraints.rs` | which schemas carry a constraint their Rust types do not enforce |
//! | `checked.rs` | a tool whose arguments are normalised to its own schema before it runs |
//! | `invoke.rs` | `Invocation`, the one way a call runs, for the agent (`invoke`'s future) and the MCP server (its first poll in place): time limit, cancellation, panics |
//! | `blocking.rs` | work on the blocking pool: a sync tool's call, a costly check |
//! | `contain.rs` | keeping a tool's panics out of its caller: `Drop`, dropped values, panic messages |
//! | `errors.rs` | the errors a call fails with around the tool: [`UnknownTool`](crate::failures::UnknownTool), [`ToolTimedOut`](crate::failures::ToolTimedOut), [`ToolPanicked`](crate::failures::ToolPanicked) |
//! | `span.rs` | `CallSpan`, the `execute_tool` span and what is recorded on it |
//! | `reconcile.rs` | a tool's reconcile hook: [`Reconcile`], [`Reconciled`], the [`ReconcileFn`] its definition carries |

use std::sync::Arc;
use std::time::Duration;

mod args;
mod blocking;
mod body;
mod budget;
mod checked;
mod constraints;
mod contain;
mod context;
mod definition;
pub(crate) mod errors;
mod future;
pub(crate) mod idempotency;
mod invoke;
mod nesting;
mod no_result;
pub(crate) mod output;
mod owned;
mod params;
mod pattern;
mod progress;
mod reconcile;
mod schema;
mod set;
mod span;
mod text;
mod validate;
mod value;

pub use context::ToolContext;
pub use definition::{ToolAnnotations, ToolDefinition};
pub use future::ToolFuture;
pub use progress::LogLevel;
pub use reconcile::{Reconcile, ReconcileFn, ReconcileFuture, Reconciled};
pub use schema::ParametersSchema;
pub use validate::{ArgumentValidator, ValidatorError};

pub use budget::DEFAULT_MAX_OUTPUT;
pub(crate) use budget::bounded_view;
pub(crate) use contain::drop_contained;
#[cfg(feature = "mcp")]
pub(crate) use invoke::CallOutcome;
pub(crate) use invoke::{CallArguments, Invocation, invoke};
#[cfg(feature = "mcp")]
pub(crate) use output::AsText;
pub(crate) use output::{AsValue, into_text, text_of};
pub(crate) use pattern::bounded as bounded_patterns;
#[cfg(feature = "mcp")]
pub(crate) use progress::Updates;
#[cfg(feature = "mcp-client")]
pub(crate) use progress::moves_on;
pub(crate) use progress::{Deliver, Forward, Observer, ToolUpdate, drive};
pub use set::BuildError;
pub(crate) use set::ToolSet;
pub(crate) use span::CallSpan;

/// The traits compile errors name; re-exported by `crate::rules`.
pub(crate) mod rules {
    pub use super::output::{OutputIsNotAResult, OutputIsNotAnError, ToolOutput};
    pub use super::progress::{ProgressAmount, ProgressTotal};
    pub use crate::error::classify::{DiscloseErrorType, ThreadSafeError, ToolErrorType};
}

/// What the macros' generated code uses; re-exported by `crate::__private`.
pub(crate) mod generated {
    pub use super::args::{
        ArgumentsOf, CannotDecodeArguments, DecodeArguments, Decoders, FieldSeed, field_or_missing,
        next_field,
    };
    pub use super::body::{
        DefinitionCell, Described, ToolBody, call, call_text, call_text_output, definition,
    };
    pub use super::output::{
        AsText, AsValue, Encoded, Encoding, ErrorOutput, ErrorOutputTag, NestedResultOutput,
        NestedResultTag, OutputAs, OutputIsNotAResult, OutputIsNotAnError, OutputProbe,
        PlainOutput, PlainOutputTag, ResultReturn, ResultTag, Returned, ToolOutput, ValueReturn,
        ValueTag,
    };
    pub use super::params::{Parameters, ParametersOf};
    pub use super::schema::{
        ArgumentsSchema, HasOutputSchema, NoArgumentsSchema, NoOutputSchema, OutputSchema,
        ResultOutputSchema,
    };
    pub use super::text::call_parsed;
    pub use crate::error::classify::{
        Classified, ClassifiedKind, ClassifiedTag, Classify, DiscloseErrorType, DiscloseKind,
        DiscloseTag, ErrorKind, ErrorTag, NotAnErrorKind, NotAnErrorTag, ThreadSafeError,
        ToolErrorType,
    };
    #[cfg(any(feature = "anyhow", feature = "eyre"))]
    pub use crate::error::report::{
        DiscloseEntry, DiscloseProbe, IsDisclose, NotDisclose, ReportRef,
    };
    pub use crate::rules::{ToolParam, ToolParamSchema};
}

pub(crate) use nesting::{MAX_NESTING, cut_too_deep};
#[cfg(feature = "mcp-client")]
pub(crate) use set::is_valid_tool_name;

/// A tool an agent can call.
///
/// Write tools with [`#[tool]`](macro@crate::tool) or [`#[tools]`](crate::tools) rather than
/// implementing this trait by hand: the macros derive the schema, decode the arguments and
/// classify every failure at compile time.
///
/// An implementation must never put a failure's message into its `Ok` value: errors go in
/// [`ToolError`](crate::ToolError), where the disclosure rules decide what the model may see.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "not a tool",
    note = "annotate a function with `#[reticent::tool]` and pass the struct it generates (the PascalCase of the function's name)"
)]
pub trait Tool: Send + Sync + 'static {
    /// The name, description, parameter schema and annotations the model is offered.
    ///
    /// Computed once per tool, not per call.
    fn definition(&self) -> &ToolDefinition;

    /// Runs the tool with the model's arguments.
    ///
    /// A tool keeps the constraints of its own schema (`#[schemars(range(min = 1))]`, a
    /// `pattern`, ..), whoever calls it — the agent, an MCP server, your own loop: arguments
    /// that break one are an argument error, and the tool does not run. `#[tool]` checks them
    /// with the [`ArgumentValidator`] of its schema, built once; a tool whose schema has no such
    /// constraint checks nothing and pays nothing. A tool written by hand whose schema has
    /// constraints checks its arguments with an [`ArgumentValidator`] of its own.
    fn call(&self, args: serde_json::Value, cx: ToolContext) -> ToolFuture<'_>;

    /// Runs the tool with the model's arguments as the JSON text a provider handed over.
    ///
    /// The same as parsing `text` and passing the value to [`call`](Self::call) — the same
    /// result, the same errors (text that is not JSON is an argument error) — which is what
    /// this provided method does. `#[tool]` overrides it to decode each parameter straight
    /// from its slice of the text, without building a `serde_json::Value` first; arguments
    /// that do not decode that way take the `call` path, so the errors are the same.
    fn call_text(&self, text: &str, cx: ToolContext) -> ToolFuture<'_> {
        text::call_parsed(self, text, cx)
    }

    /// Runs the tool with the model's arguments, its output as text: a string as it is, any
    /// other output as compact JSON — what an MCP server sends as a result's text content.
    ///
    /// The same as [`call`](Self::call) with the output then written as text — the same
    /// result, the same errors — which is what this provided method does. `#[tool]` overrides
    /// it to write the output straight to text, without building a `serde_json::Value`.
    fn call_text_output(&self, args: serde_json::Value, cx: ToolContext) -> ToolFuture<'_, String> {
        self.call(args, cx).map_output(output::into_text)
    }

    /// The tool's own time limit (`#[tool(timeout = "5s")]`), if it has one.
    ///
    /// The agent applies the shorter of this and its own configured timeout.
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// The tool's own output budget (`#[tool(max_output = "16KiB")]`), in bytes, if it has
    /// one.
    ///
    /// An agent shows the model at most this much of a successful output (its start and its
    /// end, with a notice of how much was left out between them); the caller gets the whole
    /// output. A tool without one gets the agent's
    /// ([`AgentBuilder::max_tool_output`](crate::AgentBuilder::max_tool_output), 64 KiB unless
    /// set). An MCP server sends outputs whole unless it is given a budget of its own
    /// (`McpServerBuilder::max_output`), which this one then replaces for the tool.
    fn max_output(&self) -> Option<usize> {
        None
    }

    /// Whether the tool's work is synchronous code that runs when [`call`](Self::call) is
    /// called, and may block its thread: a sync `#[tool]` fn.
    ///
    /// A time limit cannot interrupt such a call once it runs on the caller's thread, so the
    /// agent and the MCP server run it on tokio's blocking pool whenever a time limit or a
    /// cancellation can apply: the call is then abandoned at its limit (reported as timed out,
    /// its effect unknown) while its thread finishes on its own. An `async` tool that blocks
    /// its thread cannot be interrupted; use `tokio::task::spawn_blocking` inside it.
    fn is_blocking(&self) -> bool {
        false
    }

    /// Whether the tool reads the [`ToolContext`] it is called with: its call id, its name,
    /// its cancellation token, its progress and log lines.
    ///
    /// `#[tool]` says `false` for a function without a `ToolContext` parameter. The agent and
    /// the MCP server then call the tool with [`ToolContext::default()`], which costs nothing
    /// to make, and keep the call's id and name themselves. A tool that says `false` and reads
    /// its context anyway finds it empty: no id, no name, a token nobody cancels, and reports
    /// that go nowhere. `true` by default.
    fn reads_context(&self) -> bool {
        true
    }

    /// Whether the tool's output comes from outside the system (web pages, email, third-party
    /// APIs) and may carry instructions planted by someone else. Once such output enters a
    /// run's transcript, the run is tainted (see
    /// [`AgentBuilder::forbid_after_untrusted`](crate::AgentBuilder::forbid_after_untrusted)).
    ///
    /// `open_world` tools are untrusted by default; `#[tool(untrusted_output)]` marks others,
    /// and `#[tool(open_world, untrusted_output = false)]` an open-world tool whose output
    /// says only what it did (`sent`, `queued`).
    fn untrusted_output(&self) -> bool {
        self.definition().annotations.open_world
    }

    /// Whether a person must approve each call before it runs (`#[tool(needs_approval)]`).
    ///
    /// When the model calls such a tool, the run stops with
    /// [`StopReason::AwaitingApproval`](crate::StopReason::AwaitingApproval) before any call
    /// of that turn runs, and [`Agent::resume`](crate::Agent::resume) continues it with the
    /// decisions. [`AgentBuilder::require_approval`](crate::AgentBuilder::require_approval)
    /// asks the same of any tool by name.
    ///
    /// For tools whose effects a person must see first: sending money, deleting records,
    /// writing to someone else. `false` by default.
    fn needs_approval(&self) -> bool {
        false
    }
}

/// A value that provides several tools, usually a struct whose `impl` block carries
/// [`#[tools]`](crate::tools).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a toolbox",
    label = "not a toolbox",
    note = "put `#[reticent::tools]` on an `impl` block of this type and `#[tool]` on its tool methods"
)]
pub trait Toolbox: Send + Sync + 'static {
    /// The tools, each sharing this value.
    fn tools(self: Arc<Self>) -> Vec<Arc<dyn Tool>>;
}

impl<T: Tool> Toolbox for T {
    fn tools(self: Arc<Self>) -> Vec<Arc<dyn Tool>> {
        vec![self]
    }
}
