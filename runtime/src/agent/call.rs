//! One tool call as the loop runs it: [`execute`] runs it (or records its refusal) on its
//! `execute_tool` span and says how it ended ([`Executed`]); [`CallStage`] is how far each call
//! of a turn got, for the ledger, a saved state and the results in call order.

use std::borrow::Cow;
use std::time::Duration;

use futures::channel::mpsc::Sender;
use tracing::Instrument;

use super::event::ToolEvents;
use super::{AgentEvent, Inner};
use crate::error::{EffectOutcome, ToolFailure};
use crate::model::ToolCall;
use crate::tool::{
    AsValue, CallArguments, CallSpan, Forward, Invocation, LogLevel, Observer, drive, into_text,
    invoke,
};

/// How one call ended.
pub(super) struct Executed {
    pub(super) outcome: Result<String, ToolFailure>,
    pub(super) elapsed: Duration,
}

impl Executed {
    pub(super) fn effect(&self) -> EffectOutcome {
        match &self.outcome {
            Ok(_) => EffectOutcome::Applied,
            Err(failure) => failure.effect(),
        }
    }
}

/// How far one call of a turn got: for the ledger and the state of a turn that does not
/// finish, and for the calls' results, in call order, of one that does.
#[expect(
    clippy::large_enum_variant,
    reason = "one per call of a turn, each moved once into its slot and once out of it"
)]
pub(super) enum CallStage {
    NotStarted,
    Running,
    Finished(Executed),
    /// An earlier attempt started the call and never recorded its end (see
    /// `ToolStep::interrupted`).
    Interrupted,
}

/// Runs `call` (or records its refusal), on its `execute_tool` span, passing the tool's
/// progress and log lines on to `events`. Never panics, never returns early on cancellation
/// (the caller selects on it).
pub(super) async fn execute(
    inner: &Inner,
    call: &ToolCall,
    refused: Option<ToolFailure>,
    token: &tokio_util::sync::CancellationToken,
    cancellable: bool,
    events: Option<&mut Sender<AgentEvent>>,
) -> Executed {
    let span = CallSpan::new(&call.name, &call.id);
    if inner.record_content {
        span.record_arguments(&call.arguments);
    }
    let start = tokio::time::Instant::now();
    let outcome = match (refused, inner.tools.get(&call.name)) {
        (Some(refusal), _) => Err(refusal),
        (None, None) => Err(inner.tools.unknown(&call.name, &call.id)),
        (None, Some((name, tool))) => {
            // Arguments that arrived as text are decoded straight from it (text that is not
            // JSON is an argument error, which `call_text` returns).
            // The caller's record of a failure holds the arguments.
            let arguments = match call.arguments.text() {
                Some(text) => CallArguments::text(text, true),
                None => CallArguments::value(Cow::Borrowed(call.arguments.value()), true),
            };
            // A stream gets every report; the span gets events when it is enabled.
            let forward = Forward {
                progress: events.is_some(),
                logs: events.is_some().then_some(LogLevel::Debug),
            };
            let (observer, updates) = Observer::new(&span, forward).unzip();
            let invocation = Invocation {
                tool,
                tool_name: name,
                call_id: &call.id,
                start,
                arguments,
                limit: inner.failure_options.timeout,
                parent: token,
                cancellable,
                observer,
                include_error_message: inner.failure_options.include_error_message,
                #[cfg(feature = "mcp")]
                client: None,
            };
            let run = invoke::<AsValue>(invocation).instrument(span.clone());
            match events {
                Some(events) => {
                    drive(run, updates.flatten(), &mut ToolEvents { events, call }).await
                }
                None => run.await,
            }
            .map(into_text)
        }
    };
    let elapsed = start.elapsed();
    match &outcome {
        Ok(content) => {
            if inner.record_content {
                span.record_result(content);
            }
        }
        Err(failure) => span.record_failure(failure, inner.record_content),
    }
    Executed { outcome, elapsed }
}
