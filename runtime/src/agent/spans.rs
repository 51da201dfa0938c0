//! The `invoke_agent` span of a run and the `chat` span of each model call (OpenTelemetry
//! GenAI names), and what is recorded on them. Each call's `execute_tool` span is the tool
//! module's.

use tracing::Span;
use tracing::field::Empty;

use super::{AgentError, AgentResult, stats};

/// The span of one run.
pub(super) fn invoke_agent() -> Span {
    tracing::info_span!(
        "invoke_agent",
        otel.name = "invoke_agent",
        otel.status_code = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
        reticent.turns = Empty,
        reticent.tool_failures = Empty,
        reticent.stop_reason = Empty,
        reticent.tool_stats = Empty,
        reticent.tainted = Empty,
    )
}

/// Records how the run ended. A run that recovered from tool failures is not marked failed.
pub(super) fn record_run(span: &Span, result: &Result<AgentResult, AgentError>) {
    if span.is_disabled() {
        return;
    }
    let record = match result {
        Ok(result) => result,
        Err(error) => error.partial(),
    };
    span.record("gen_ai.usage.input_tokens", record.usage.input_tokens);
    span.record("gen_ai.usage.output_tokens", record.usage.output_tokens);
    span.record("reticent.turns", record.turns);
    span.record("reticent.tool_failures", record.tool_failures.len());
    if !record.tool_stats.is_empty() {
        span.record(
            "reticent.tool_stats",
            tracing::field::display(stats::text(&record.tool_stats)),
        );
    }
    span.record("reticent.tainted", !record.tainted_by.is_empty());
    match result {
        Ok(result) => {
            span.record(
                "reticent.stop_reason",
                tracing::field::debug(result.stop_reason),
            );
        }
        Err(error) => {
            span.record("otel.status_code", "ERROR");
            let kind = match error {
                AgentError::Cancelled { .. } => "cancelled",
                AgentError::ToolFailed { .. } => "tool_failed",
                AgentError::Model { .. } => "model",
            };
            span.record("error.type", kind);
        }
    }
}

/// The span of one model call.
pub(super) fn chat(turn: u32) -> Span {
    tracing::info_span!(
        "chat",
        otel.name = "chat",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
        reticent.turn = turn,
    )
}
