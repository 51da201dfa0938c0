//! Running one tool call: lookup, prerequisites, argument text, timeout, panics, telemetry.

use std::collections::HashSet;
use std::error::Error as StdError;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use tracing::field::Empty;

use super::failure::{
    ForbiddenAfterUntrusted, PrerequisiteNotMet, ToolPanicked, ToolTimedOut, UnknownTool,
    error_chain, kinds,
};
use super::{EffectOutcome, Inner};
use crate::__private::OutputError;
use crate::error::ToolError;
use crate::model::ToolCall;
use crate::render;
use crate::tool::ToolContext;

/// How one call ended.
pub(crate) enum Outcome {
    Success {
        content: String,
    },
    Failure {
        kind: String,
        error: Arc<dyn StdError + Send + Sync>,
        timed_out: bool,
        /// The failure ends the run whatever the failure mode (`#[disclose(fatal)]`).
        fatal: bool,
        /// Whether the call took effect: `Failed` for most failures, `Unknown` when the call
        /// was stopped or panicked mid-flight, `Applied` when the tool finished its work and
        /// only its output could not be turned into JSON.
        effect: EffectOutcome,
        /// The text holds the error's own message (`include_error_message`), not only fixed
        /// text: what the tool read from elsewhere may be in it.
        message_shown: bool,
        /// The full model-visible text, before repeats are collapsed.
        text: String,
    },
}

/// What the calls of one turn are checked against before they run: the state of the run
/// when the model made them.
pub(crate) struct Gate<'a> {
    /// Tools that succeeded earlier in the run.
    pub(crate) succeeded: &'a HashSet<String>,
    /// Untrusted output entered the transcript earlier in the run.
    pub(crate) tainted: bool,
}

pub(crate) struct Executed {
    pub(crate) outcome: Outcome,
    pub(crate) elapsed: Duration,
}

fn failure(kind: &str, error: impl StdError + Send + Sync + 'static, text: String) -> Outcome {
    Outcome::Failure {
        kind: kind.to_owned(),
        error: Arc::new(error),
        timed_out: false,
        fatal: false,
        effect: EffectOutcome::Failed,
        message_shown: false,
        text,
    }
}

/// Runs `call`; never panics, never returns early on cancellation (the caller selects on it).
pub(crate) async fn execute(
    inner: &Inner,
    call: &ToolCall,
    gate: &Gate<'_>,
    run_token: &CancellationToken,
) -> Executed {
    let span = tracing::info_span!(
        "execute_tool",
        otel.name = format!("execute_tool {}", render::bounded(&call.name, render::MAX_NAME_LEN)),
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %render::bounded(&call.name, render::MAX_NAME_LEN),
        gen_ai.tool.call.id = %call.id,
        gen_ai.tool.type = "function",
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        error.type = Empty,
        error.message = Empty,
        reticent.tool.timed_out = Empty,
    );
    if inner.record_content {
        span.record(
            "gen_ai.tool.call.arguments",
            tracing::field::display(&call.arguments),
        );
    }
    // The runtime's clock, the one the timeout runs on: a call stopped at its limit reports
    // the limit as its elapsed time, also when the clock is paused in tests.
    let start = Instant::now();
    let outcome = execute_inner(inner, call, gate, run_token)
        .instrument(span.clone())
        .await;
    let elapsed = start.elapsed();
    match &outcome {
        Outcome::Success { content } => {
            if inner.record_content {
                span.record("gen_ai.tool.call.result", content.as_str());
            }
        }
        Outcome::Failure {
            kind,
            error,
            timed_out,
            ..
        } => {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", kind.as_str());
            // The span is the caller's: the whole message, with the sources that often hold
            // what went wrong (`could not read the ledger: permission denied: ..`).
            span.record("error.message", error_chain(&**error));
            span.record("reticent.tool.timed_out", *timed_out);
        }
    }
    Executed { outcome, elapsed }
}

async fn execute_inner(
    inner: &Inner,
    call: &ToolCall,
    gate: &Gate<'_>,
    run_token: &CancellationToken,
) -> Outcome {
    let Some((name, &index)) = inner.index.get_key_value(call.name.as_str()) else {
        let available: Vec<&str> = inner.definitions.iter().map(|d| d.name.as_str()).collect();
        return failure(
            kinds::UNKNOWN_TOOL,
            UnknownTool {
                name: call.name.clone(),
            },
            render::unknown_tool(&call.name, &available),
        );
    };
    let tool = &inner.tools[index];

    if let Some(required) = inner.requirements.get(&call.name) {
        let missing: Vec<&str> = required
            .iter()
            .filter(|r| !gate.succeeded.contains(*r))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return failure(
                kinds::PREREQUISITE,
                PrerequisiteNotMet {
                    tool: call.name.clone(),
                    prerequisite: missing.join(", "),
                },
                render::prerequisite(&call.name, &missing),
            );
        }
    }

    if gate.tainted && inner.forbidden_after_untrusted.contains(&call.name) {
        return failure(
            kinds::UNTRUSTED,
            ForbiddenAfterUntrusted {
                tool: call.name.clone(),
            },
            render::forbidden_after_untrusted(&call.name),
        );
    }

    invoke(
        &**tool,
        name,
        call,
        run_token,
        inner.failure_options.timeout,
        inner.failure_options.include_error_message,
    )
    .await
}

/// Runs one call of `tool`, named `name` (the index's key, shared rather than copied for the
/// call's context): the argument text, the time limit (the shorter of `limit` and the
/// tool's own), panics and the cancellation token the tool sees. Shared by the agent loop and
/// the MCP server, so both apply the same rules.
pub(crate) async fn invoke(
    tool: &dyn crate::tool::Tool,
    name: &Arc<str>,
    call: &ToolCall,
    run_token: &CancellationToken,
    limit: Option<Duration>,
    include_error_message: bool,
) -> Outcome {
    let token = run_token.child_token();
    let cx = ToolContext::new(call.id.as_str(), Arc::clone(name)).with_cancellation(token.clone());
    let limit = match (limit, tool.timeout()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };

    let start = || match &call.arguments {
        // A provider hands over the raw text when it is not JSON it could parse; text that is
        // not JSON is an argument error, which `call_text` returns.
        serde_json::Value::String(text) => tool.call_text(text, cx),
        arguments => tool.call(arguments.clone(), cx),
    };
    let future = match std::panic::catch_unwind(AssertUnwindSafe(start)) {
        Ok(future) => AssertUnwindSafe(future).catch_unwind(),
        Err(payload) => return panicked(&call.name, payload),
    };
    let result = match limit {
        Some(limit) => match tokio::time::timeout(limit, future).await {
            Ok(result) => result,
            Err(_) => {
                token.cancel();
                return Outcome::Failure {
                    kind: kinds::TIMEOUT.to_owned(),
                    error: Arc::new(ToolTimedOut {
                        tool: call.name.clone(),
                        limit,
                    }),
                    timed_out: true,
                    fatal: false,
                    effect: EffectOutcome::Unknown,
                    message_shown: false,
                    text: render::timeout(&call.name, limit),
                };
            }
        },
        None => future.await,
    };
    match result {
        Ok(Ok(value)) => Outcome::Success {
            content: match value {
                serde_json::Value::String(text) => text,
                other => other.to_string(),
            },
        },
        Ok(Err(error)) => tool_error(include_error_message, &call.name, error),
        Err(payload) => panicked(&call.name, payload),
    }
}

fn tool_error(include_error_message: bool, tool: &str, error: ToolError) -> Outcome {
    let text = error.model_text(tool, include_error_message);
    let kind = error.kind().to_owned();
    let fatal = error.is_fatal();
    let (error, effect, message_shown): (Arc<dyn StdError + Send + Sync>, _, _) = match error {
        ToolError::Argument(error) => (Arc::new(error), EffectOutcome::Failed, false),
        ToolError::Failed(failure) => {
            let message_shown = include_error_message || failure.shows_message();
            let error = failure.into_error();
            let effect = if error.is::<OutputError>() {
                // The tool returned `Ok`: whatever it did, it did.
                EffectOutcome::Applied
            } else if effect_unknown(&*error) {
                EffectOutcome::Unknown
            } else {
                EffectOutcome::Failed
            };
            (error, effect, message_shown)
        }
    };
    Outcome::Failure {
        kind,
        error,
        timed_out: false,
        fatal,
        effect,
        message_shown,
        text,
    }
}

/// Whether a failure left the call's effect unknown: an MCP server that went away or a call
/// abandoned while the server had it.
fn effect_unknown(error: &(dyn StdError + Send + Sync + 'static)) -> bool {
    #[cfg(feature = "mcp-client")]
    {
        error
            .downcast_ref::<crate::mcp::McpCallError>()
            .is_some_and(crate::mcp::McpCallError::effect_unknown)
    }
    #[cfg(not(feature = "mcp-client"))]
    {
        let _ = error;
        false
    }
}

fn panicked(tool: &str, payload: Box<dyn std::any::Any + Send>) -> Outcome {
    let payload = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned());
    let mut outcome = failure(
        kinds::PANIC,
        ToolPanicked {
            tool: tool.to_owned(),
            payload,
        },
        render::panic(tool),
    );
    if let Outcome::Failure { effect, .. } = &mut outcome {
        *effect = EffectOutcome::Unknown;
    }
    outcome
}
