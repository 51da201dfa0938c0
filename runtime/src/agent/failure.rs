//! The caller's record of a failed tool call, and the errors the loop itself raises.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use crate::render::format_duration;

/// Everything about one failed tool call, for the caller.
///
/// `shown_to_model` is exactly what the model was told; `error` is the full error, which the
/// model was not shown unless the run opted in.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolFailure {
    /// The tool's name, as the model called it.
    pub tool: String,
    /// The call's id.
    pub call_id: String,
    /// The arguments the model sent.
    pub arguments: serde_json::Value,
    /// The failure's kind: `argument`, `timeout`, `panic`, `unknown_tool`, `prerequisite`,
    /// `untrusted`, or the error's type name (`GatewayError`, `OrderError::Database`).
    pub kind: String,
    /// The full error. Downcast it to the tool's own error type with
    /// `failure.error.downcast_ref::<GatewayError>()`.
    pub error: Arc<dyn StdError + Send + Sync>,
    /// The tool was stopped because it ran out of time.
    pub timed_out: bool,
    /// How long the call ran.
    pub elapsed: Duration,
    /// The text the model was shown for this call.
    pub shown_to_model: String,
}

impl ToolFailure {
    /// The full error's message followed by its sources' (a source whose message the text
    /// already ends with is skipped), for logs the caller controls.
    pub fn error_chain(&self) -> String {
        error_chain(&*self.error)
    }
}

/// `error`'s message followed by its sources' (a source whose message the text already ends
/// with is skipped): what [`ToolFailure::error_chain`] and the `execute_tool` span record.
pub(crate) fn error_chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = crate::render::display(error);
    let mut source = error.source();
    while let Some(error) = source {
        let message = crate::render::display(error);
        if !text.ends_with(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = error.source();
    }
    text
}

/// The kinds the loop assigns to failures it detects itself.
pub mod kinds {
    /// The model's arguments were wrong.
    pub const ARGUMENT: &str = "argument";
    /// The tool ran out of time.
    pub const TIMEOUT: &str = "timeout";
    /// The tool panicked.
    pub const PANIC: &str = "panic";
    /// The model called a tool that does not exist.
    pub const UNKNOWN_TOOL: &str = "unknown_tool";
    /// The tool's prerequisite had not succeeded.
    pub const PREREQUISITE: &str = "prerequisite";
    /// The tool is forbidden once untrusted output entered the run.
    pub const UNTRUSTED: &str = "untrusted";
}

/// The model called a tool that is not registered.
#[derive(Clone, Debug, thiserror::Error)]
#[error("the model called the unknown tool `{name}`")]
pub struct UnknownTool {
    /// The name the model used.
    pub name: String,
}

/// A tool call was stopped when its time ran out.
#[derive(Clone, Debug, thiserror::Error)]
#[error("the tool `{tool}` did not finish within {}", format_duration(*.limit))]
pub struct ToolTimedOut {
    /// The tool.
    pub tool: String,
    /// The time it was given.
    pub limit: Duration,
}

/// A tool panicked; the payload is the panic message.
#[derive(Clone, Debug, thiserror::Error)]
#[error("the tool `{tool}` panicked: {payload}")]
pub struct ToolPanicked {
    /// The tool.
    pub tool: String,
    /// The panic message.
    pub payload: String,
}

/// A tool was refused because its prerequisite had not succeeded earlier in the run.
#[derive(Clone, Debug, thiserror::Error)]
#[error("`{tool}` requires a successful `{prerequisite}` earlier in the run")]
pub struct PrerequisiteNotMet {
    /// The refused tool.
    pub tool: String,
    /// The tool that must succeed first.
    pub prerequisite: String,
}

/// A tool was refused because the run is tainted by untrusted output and a
/// [`forbid_after_untrusted`](crate::AgentBuilder::forbid_after_untrusted) rule names it.
#[derive(Clone, Debug, thiserror::Error)]
#[error("`{tool}` is forbidden after untrusted output entered the run")]
pub struct ForbiddenAfterUntrusted {
    /// The refused tool.
    pub tool: String,
}
