//! The `execute_tool` span of one call (OpenTelemetry GenAI names), and what is recorded on
//! it: its fields are named here only. The span is the caller's: a failure's full message goes
//! on it — except that, unless the caller opted in to recording content, nothing on it holds a
//! value the model sent.

use std::ops::Deref;

use tracing::Span;
use tracing::field::Empty;

use crate::error::ToolFailure;
use crate::render;

/// The `execute_tool` span of one call; it derefs to the [`Span`] to enter, instrument a
/// future with or parent an event.
pub(crate) struct CallSpan(Span);

impl Deref for CallSpan {
    type Target = Span;

    fn deref(&self) -> &Span {
        &self.0
    }
}

impl CallSpan {
    /// The span of the call `call_id` of `tool` (the name as the model sent it, cut to
    /// length).
    ///
    /// The name is cut only when the span is enabled: the macro evaluates its fields then
    /// only.
    pub(crate) fn new(tool: &str, call_id: &str) -> Self {
        Self(execute_span(tool, call_id))
    }

    /// Records the arguments the model sent: only for a caller that opted in to recording
    /// content.
    pub(crate) fn record_arguments(&self, arguments: impl std::fmt::Display) {
        if !self.0.is_disabled() {
            self.0.record(
                "gen_ai.tool.call.arguments",
                tracing::field::display(arguments),
            );
        }
    }

    /// Records the output shown to the model: only for a caller that opted in to recording
    /// content.
    pub(crate) fn record_result(&self, result: &str) {
        if !self.0.is_disabled() {
            self.0.record("gen_ai.tool.call.result", result);
        }
    }

    /// Records that the call's caller cancelled it.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn record_cancelled(&self) {
        self.0.record("reticent.tool.cancelled", true);
    }

    /// Records a failure ([`record_failure`]).
    pub(crate) fn record_failure(&self, failure: &ToolFailure, record_content: bool) {
        record_failure(&self.0, failure, record_content);
    }
}

fn execute_span(tool: &str, call_id: &str) -> Span {
    tracing::info_span!(
        "execute_tool",
        otel.name = format!("execute_tool {}", render::name(tool)),
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %render::name(tool),
        gen_ai.tool.call.id = %call_id,
        gen_ai.tool.type = "function",
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        error.type = Empty,
        error.message = Empty,
        reticent.tool.timed_out = Empty,
        reticent.tool.cancelled = Empty,
    )
}

/// Records a failure. `record_content`: whether the caller opted in to recording arguments
/// and results; without it an argument error's message, which echoes what the model sent, is
/// replaced by where the mistake is.
fn record_failure(span: &Span, failure: &ToolFailure, record_content: bool) {
    if span.is_disabled() {
        return;
    }
    span.record("otel.status_code", "ERROR");
    span.record("error.type", failure.kind.as_str());
    if failure.kind == crate::error::kinds::ARGUMENT && !record_content {
        let path = failure
            .error
            .downcast_ref::<crate::ArgumentError>()
            .and_then(crate::ArgumentError::path);
        let message = match path {
            Some(path) => format!(
                "the model's arguments were refused at `{}` (the message echoes them: record_content(true) records it)",
                render::bounded(path, render::MAX_NAME_LEN * 2)
            ),
            None => "the model's arguments were refused (the message echoes them: record_content(true) records it)".to_owned(),
        };
        span.record("error.message", message);
    } else {
        // The whole message, with the sources that often hold what went wrong
        // (`could not read the ledger: permission denied: ..`).
        span.record("error.message", failure.error_chain());
    }
    span.record("reticent.tool.timed_out", failure.timed_out);
}
