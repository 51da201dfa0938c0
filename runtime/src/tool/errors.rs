//! The errors a call fails with before or around the tool itself: a tool that does not exist,
//! one that ran out of time, one that panicked.

use std::time::Duration;

use crate::render::format_duration;

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
