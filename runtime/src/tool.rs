//! The [`Tool`] trait, its [`ToolDefinition`] and the per-call [`ToolContext`].

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::error::ToolError;

/// A tool an agent can call.
///
/// Write tools with [`#[tool]`](crate::tool) or [`#[tools]`](crate::tools) rather than
/// implementing this trait by hand: the macros derive the schema, decode the arguments and
/// classify every failure at compile time.
///
/// An implementation must never put a failure's message into its `Ok` value: errors go in
/// [`ToolError`], where the disclosure rules decide what the model may see.
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
    fn call(
        &self,
        args: serde_json::Value,
        cx: ToolContext,
    ) -> BoxFuture<'_, Result<serde_json::Value, ToolError>>;

    /// Runs the tool with the model's arguments as the JSON text a provider handed over.
    ///
    /// The same as parsing `text` and passing the value to [`call`](Self::call) — the same
    /// result, the same errors (text that is not JSON is an argument error) — which is what
    /// this provided method does. `#[tool]` overrides it to decode each parameter straight
    /// from its slice of the text, without building a `serde_json::Value` first; arguments
    /// that do not decode that way take the `call` path, so the errors are the same.
    fn call_text(
        &self,
        text: &str,
        cx: ToolContext,
    ) -> BoxFuture<'_, Result<serde_json::Value, ToolError>> {
        crate::__private::call_parsed(self, text, cx)
    }

    /// The tool's own time limit (`#[tool(timeout = "5s")]`), if it has one.
    ///
    /// The agent applies the shorter of this and its own configured timeout.
    fn timeout(&self) -> Option<Duration> {
        None
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

/// What the model is told about a tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The name the model calls the tool by (`^[a-zA-Z0-9_-]{1,64}$`).
    pub name: String,
    /// What the tool does, from the function's doc comment.
    pub description: String,
    /// The JSON Schema of the arguments; its root is always an object.
    pub parameters: serde_json::Value,
    /// Hints about the tool's behavior.
    #[serde(default)]
    pub annotations: ToolAnnotations,
}

/// Hints about a tool's behavior, as in the MCP tool annotations. All `false` by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ToolAnnotations {
    /// The tool does not change anything.
    #[serde(default)]
    pub read_only: bool,
    /// The tool may destroy or overwrite data.
    #[serde(default)]
    pub destructive: bool,
    /// Calling the tool again with the same arguments has no further effect.
    #[serde(default)]
    pub idempotent: bool,
    /// The tool reaches outside the system (the web, email, third-party APIs).
    #[serde(default)]
    pub open_world: bool,
}

/// The context of one tool call: its id, the tool's name and the run's cancellation.
///
/// A tool receives it by declaring a parameter of type `&ToolContext` or `ToolContext`; that
/// parameter is not part of the schema.
///
/// A context's token is made the first time it is asked for, so a context no tool looks at
/// costs nothing; clones share one token, as a token's clones do.
#[derive(Default)]
pub struct ToolContext {
    call_id: Option<Arc<str>>,
    tool_name: Option<Arc<str>>,
    cancellation: OnceLock<CancellationToken>,
}

impl Clone for ToolContext {
    fn clone(&self) -> Self {
        Self {
            call_id: self.call_id.clone(),
            tool_name: self.tool_name.clone(),
            // Made now if it was not yet, so that the two share it.
            cancellation: OnceLock::from(self.cancellation().clone()),
        }
    }
}

impl ToolContext {
    /// A context for the call `call_id` of the tool `tool_name`, with its own cancellation token.
    pub fn new(call_id: impl Into<Arc<str>>, tool_name: impl Into<Arc<str>>) -> Self {
        Self {
            call_id: Some(call_id.into()),
            tool_name: Some(tool_name.into()),
            cancellation: OnceLock::new(),
        }
    }

    /// Replaces the cancellation token, e.g. with a child of the run's token.
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = OnceLock::from(token);
        self
    }

    /// The id the model gave this call (empty for a default context).
    pub fn call_id(&self) -> &str {
        self.call_id.as_deref().unwrap_or_default()
    }

    /// The name of the tool being called (empty for a default context).
    pub fn tool_name(&self) -> &str {
        self.tool_name.as_deref().unwrap_or_default()
    }

    /// Cancelled when the call is abandoned: the run was cancelled or the call timed out.
    ///
    /// Long-running tools can watch it to stop early and clean up.
    pub fn cancellation(&self) -> &CancellationToken {
        self.cancellation.get_or_init(CancellationToken::new)
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id())
            .field("tool_name", &self.tool_name())
            .field(
                "cancelled",
                &self
                    .cancellation
                    .get()
                    .is_some_and(CancellationToken::is_cancelled),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::ToolContext;

    #[test]
    fn clones_share_one_token_made_on_demand() {
        let cx = ToolContext::default();
        let clone = cx.clone();
        clone.cancellation().cancel();
        assert!(cx.cancellation().is_cancelled());

        let cx = ToolContext::new("c1", "t");
        let token = cx.cancellation().clone();
        let moved = cx;
        token.cancel();
        assert!(moved.cancellation().is_cancelled());
        assert_eq!((moved.call_id(), moved.tool_name()), ("c1", "t"));
    }
}
