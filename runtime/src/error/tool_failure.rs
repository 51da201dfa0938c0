//! [`ToolFailure`]: the caller's record of one failed call — the one shape every failure takes,
//! in the agent loop and in the MCP server — what a tool's [`ToolError`] becomes in it, and the
//! kinds the runtime gives the failures it finds itself.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ToolError;

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
    /// The failure ends the run whatever the failure mode (`#[disclose(fatal)]`,
    /// [`Failure::fatal`](crate::Failure::fatal), or an output that cannot be turned into JSON).
    pub fatal: bool,
    /// How long the call ran.
    pub elapsed: Duration,
    /// The text the model was shown for this call.
    pub shown_to_model: String,
    /// Whether the call took effect.
    pub(crate) effect: EffectOutcome,
    /// The text holds the error's own message (`include_error_message`), not only fixed text:
    /// what the tool read from elsewhere may be in it.
    pub(crate) message_shown: bool,
}

impl ToolFailure {
    /// A failure of the call `call_id` of `tool`, of kind `kind`, caused by `error`, shown to
    /// the model as `shown_to_model`: refused or failed, not taking effect. Every failure is
    /// made here; the `with_` methods say what sets it apart.
    pub(crate) fn new(
        tool: &str,
        call_id: &str,
        kind: impl Into<String>,
        error: Arc<dyn StdError + Send + Sync>,
        shown_to_model: String,
    ) -> Self {
        Self {
            tool: tool.to_owned(),
            call_id: call_id.to_owned(),
            arguments: serde_json::Value::Null,
            kind: kind.into(),
            error,
            timed_out: false,
            fatal: false,
            elapsed: Duration::ZERO,
            shown_to_model,
            effect: EffectOutcome::Failed,
            message_shown: false,
        }
    }

    /// The record of the call `call_id` of `tool`, which returned `error`: the text the model
    /// is shown for it (with the error's message when `include_error_message`), its kind, and
    /// the effect the error says the call had.
    pub(crate) fn from_tool_error(
        tool: &str,
        call_id: &str,
        error: ToolError,
        include_error_message: bool,
    ) -> Self {
        let text = error.model_text(tool, include_error_message);
        let kind = error.kind().to_owned();
        let fatal = error.is_fatal();
        let (error, effect, message_shown): (Arc<dyn StdError + Send + Sync>, _, _) = match error {
            ToolError::Argument(error) => (Arc::new(error), EffectOutcome::Failed, false),
            ToolError::Failed(failure) => {
                let message_shown = include_error_message || failure.shows_message();
                let effect = failure.effect();
                (failure.into_error(), effect, message_shown)
            }
        };
        let mut failure = Self::new(tool, call_id, kind, error, text);
        failure.fatal = fatal;
        failure.effect = effect;
        failure.message_shown = message_shown;
        failure
    }

    /// The full error's message followed by its sources' (a source whose message the text
    /// already ends with is skipped), for logs the caller controls. The walk is bounded, and
    /// an error that panics or loops cannot crash or hang it.
    pub fn error_chain(&self) -> String {
        crate::error::chain::chain(&*self.error)
    }

    /// Whether the call may have taken effect, for the ledger.
    pub fn effect(&self) -> EffectOutcome {
        self.effect
    }
}

/// Whether a call took effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EffectOutcome {
    /// The tool succeeded. Also when only its output could not be turned into JSON: the tool
    /// had finished its work.
    Applied,
    /// The tool returned an error, or the call was refused before the tool ran.
    Failed,
    /// Nobody knows: the call timed out, was cancelled or panicked mid-flight. Reconcile
    /// before retrying.
    Unknown,
}

/// The kinds the runtime assigns to failures it detects itself.
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
    /// The model called a tool in a turn that offered none.
    pub const TOOLS_DISABLED: &str = "tools_disabled";
    /// A person did not approve the call.
    pub const NOT_APPROVED: &str = "not_approved";
    /// The call was cut off when its run stopped, and the caller chose not to run it again.
    pub const INTERRUPTED: &str = "interrupted";
}
