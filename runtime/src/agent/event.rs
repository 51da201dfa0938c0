//! [`AgentEvent`]: what happens during a run, as it happens.

use futures::SinkExt;
use futures::channel::mpsc::Sender;

use super::{AgentError, AgentResult};
use crate::error::ToolFailure;
use crate::model::{ModelError, ModelResponse, ToolCall};
use crate::tool::LogLevel;
use crate::tool::{Deliver, ToolUpdate};

/// What happens during a run, as it happens (see [`Agent::run_stream`](crate::Agent::run_stream)).
#[derive(Debug)]
#[non_exhaustive]
pub enum AgentEvent {
    /// More of the model's text, as it produces it: append it to what came before in the same
    /// turn. The whole turn follows as [`AgentEvent::ModelResponded`].
    TextDelta {
        /// The turn, from 1.
        turn: u32,
        /// The next piece of text.
        text: String,
    },
    /// The model began a tool call while its turn streamed in. The call runs once the whole
    /// turn has arrived ([`AgentEvent::ToolStarted`]), unless a rule refuses it.
    ToolCallRequested {
        /// The turn, from 1.
        turn: u32,
        /// The call's position among the turn's calls.
        index: usize,
        /// The id the model gave the call. The call runs under the id it has in
        /// [`AgentEvent::ModelResponded`]: the same, unless an earlier call of the turn has it
        /// too (a repeated id is renamed before the call is gated, approved or run).
        id: String,
        /// The tool the model called.
        name: String,
    },
    /// The turn's stream broke off before any of its tool calls ran, and the turn is asked
    /// again: discard what was shown of turn `turn` (its [`TextDelta`](Self::TextDelta)s and
    /// [`ToolCallRequested`](Self::ToolCallRequested)s); its events start over after this one.
    ///
    /// Sent before the wait, so a UI can say so at once. The retry uses the model's
    /// [`RetryPolicy`](crate::model::RetryPolicy) and budget (see
    /// [`AgentBuilder::retry_broken_turns`](crate::AgentBuilder::retry_broken_turns)). The
    /// broken attempt leaves nothing in the transcript, the trajectory or the usage: a turn
    /// is one assistant message, and its usage is that of the attempt that completed (a
    /// stream reports its usage at its end, so a broken one has none to count).
    TurnRestarted {
        /// The turn, from 1.
        turn: u32,
        /// The attempt about to start, from 2.
        attempt: u32,
        /// Why the last attempt failed, for the caller: never shown to the model.
        reason: ModelError,
        /// How long the run waits before the attempt: the backoff, or what the server asked
        /// for.
        delay: std::time::Duration,
    },
    /// The model answered.
    ModelResponded {
        /// The turn, from 1.
        turn: u32,
        /// The response.
        response: ModelResponse,
    },
    /// A tool call is starting.
    ToolStarted {
        /// The call.
        call: ToolCall,
    },
    /// A tool call succeeded.
    ToolSucceeded {
        /// The tool.
        tool: String,
        /// The call's id.
        call_id: String,
        /// The whole output, as the tool returned it, as text: a string output as it is, any
        /// other as compact JSON.
        output: String,
        /// What the model is shown instead, when it is not `output`: a content tool's
        /// description of its blocks ([`content`](crate::content)), the output cut to its
        /// budget (see [`AgentBuilder::max_tool_output`](crate::AgentBuilder::max_tool_output)),
        /// and an untrusted tool's output in its fence
        /// ([`AgentBuilder::fence_untrusted_output`](crate::AgentBuilder::fence_untrusted_output)).
        /// `None` when the model is shown `output` as it is.
        shown_to_model: Option<String>,
        /// How long it ran.
        elapsed: std::time::Duration,
    },
    /// A tool call failed, with its full error.
    ToolFailed(ToolFailure),
    /// A running tool reported progress with
    /// [`ToolContext::progress`](crate::ToolContext::progress). For people: never shown to
    /// the model.
    ToolProgress {
        /// The call's id.
        call_id: String,
        /// The tool.
        tool: String,
        /// How far the call got; more than in the call's last `ToolProgress`.
        progress: f64,
        /// Out of how much, when the tool knows.
        total: Option<f64>,
        /// What the tool said about it, cut to 2 KiB.
        message: Option<String>,
    },
    /// A running tool logged a line with [`ToolContext::log`](crate::ToolContext::log). For
    /// people: never shown to the model.
    ToolLog {
        /// The call's id.
        call_id: String,
        /// The tool.
        tool: String,
        /// The line's level.
        level: LogLevel,
        /// The line, cut to 2 KiB.
        message: String,
    },
    /// The run ended; always the last event.
    Finished(Result<AgentResult, AgentError>),
}

/// Passes a running call's reports on to the event stream.
pub(super) struct ToolEvents<'a> {
    pub(super) events: &'a mut Sender<AgentEvent>,
    pub(super) call: &'a ToolCall,
}

impl Deliver for ToolEvents<'_> {
    async fn deliver(&mut self, update: ToolUpdate) {
        let (call_id, tool) = (self.call.id.clone(), self.call.name.clone());
        let event = match update {
            ToolUpdate::Progress {
                progress,
                total,
                message,
            } => AgentEvent::ToolProgress {
                call_id,
                tool,
                progress,
                total,
                message,
            },
            ToolUpdate::Log { level, message } => AgentEvent::ToolLog {
                call_id,
                tool,
                level,
                message,
            },
        };
        let _ = self.events.send(event).await;
    }
}
