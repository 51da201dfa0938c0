//! [`AgentEvent`]: what happens during a run, as it happens.

use super::{AgentError, AgentResult};
use crate::model::{ModelResponse, ToolCall};
use crate::tool::ToolFailure;

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
        /// The id the model gave the call.
        id: String,
        /// The tool the model called.
        name: String,
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
        /// What the model is shown.
        output: String,
        /// How long it ran.
        elapsed: std::time::Duration,
    },
    /// A tool call failed, with its full error.
    ToolFailed(ToolFailure),
    /// The run ended; always the last event.
    Finished(Result<AgentResult, AgentError>),
}
