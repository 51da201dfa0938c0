//! [`AgentEvent`]: what happens during a run, as it happens.

use super::{AgentError, AgentResult};
use crate::model::{ModelResponse, ToolCall};
use crate::tool::ToolFailure;

/// What happens during a run, as it happens (see [`Agent::run_stream`](crate::Agent::run_stream)).
#[derive(Debug)]
#[non_exhaustive]
pub enum AgentEvent {
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
