//! What a failed call does to the run ([`ToolFailureMode`]), how failures are shown to the
//! model and how long tools may run ([`ToolFailureOptions`]).

use std::time::Duration;

/// What the run does when a tool call fails.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolFailureMode {
    /// The failure becomes an error tool result the model can act on, and the run goes on.
    #[default]
    ReportToModel,
    /// The first failure ends the run with [`AgentError::ToolFailed`](crate::AgentError::ToolFailed).
    ///
    /// The model is not called again. The other calls of the same turn, which ran concurrently,
    /// are recorded like the rest of the run: their results in the partial transcript, their
    /// failures beside this one.
    Propagate,
}

/// How tool failures are shown to the model, and how long tools may run.
///
/// ```
/// use std::time::Duration;
/// use reticent::ToolFailureOptions;
///
/// let options = ToolFailureOptions::default()
///     .timeout(Duration::from_secs(30))
///     .include_error_message(false);
/// assert_eq!(options.timeout, Some(Duration::from_secs(30)));
/// assert!(options.collapse_repeats);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolFailureOptions {
    /// Show the model the failure's message after its kind
    /// (`Tool 'NAME' failed with Type: MESSAGE`). Off by default: messages carry connection
    /// strings, paths and data. Argument errors are always shown in full.
    pub include_error_message: bool,
    /// How long any one tool call may run; a tool's own `#[tool(timeout = ..)]` applies when
    /// it is shorter. `None`: no limit beyond the tool's own.
    pub timeout: Option<Duration>,
    /// Report a call that repeats an earlier failed call exactly, and fails the same way, as a
    /// short "failed again" line instead of the full text. On by default.
    pub collapse_repeats: bool,
}

impl Default for ToolFailureOptions {
    fn default() -> Self {
        Self {
            include_error_message: false,
            timeout: None,
            collapse_repeats: true,
        }
    }
}

impl ToolFailureOptions {
    /// Shows the model each failure's message after its kind (see the field).
    #[must_use]
    pub fn include_error_message(mut self, include: bool) -> Self {
        self.include_error_message = include;
        self
    }

    /// How long any one tool call may run: a `Duration`, or `None` for no limit beyond each
    /// tool's own (see the field).
    #[must_use]
    pub fn timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.timeout = timeout.into();
        self
    }

    /// Collapses exact repeats of a failed call (see the field).
    #[must_use]
    pub fn collapse_repeats(mut self, collapse: bool) -> Self {
        self.collapse_repeats = collapse;
        self
    }
}
