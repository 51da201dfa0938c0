//! The errors a call fails with before or around the tool itself: a tool that does not exist
//! (and the failure such a call becomes), one that ran out of time, one that panicked.

use std::sync::Arc;
use std::time::Duration;

use crate::error::{ToolFailure, kinds};
use crate::render::{self, format_duration};

/// The failure of the call `call_id` of `name`, a tool that does not exist: the model is told
/// the tools it can call, `available`.
pub(crate) fn unknown_tool(name: &str, call_id: &str, available: &[&str]) -> ToolFailure {
    ToolFailure::new(
        name,
        call_id,
        kinds::UNKNOWN_TOOL,
        Arc::new(UnknownTool {
            name: name.to_owned(),
        }),
        render::unknown_tool(name, available),
    )
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
