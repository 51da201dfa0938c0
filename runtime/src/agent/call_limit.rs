//! The most tool calls one response of the model may ask for (`max_calls_per_turn`). A
//! response over it is refused whole, as it comes from the model: before it is recorded,
//! before the rules, approvals or tools see any of its calls, and, when it streams, without
//! reading the rest of it.

use crate::model::{ModelError, ModelResponse};

/// The default of [`AgentBuilder::max_calls_per_turn`](super::AgentBuilder::max_calls_per_turn).
pub(super) const DEFAULT_MAX_CALLS_PER_TURN: usize = 128;

/// `response`, unless it asks for more than `limit` calls.
pub(super) fn within(response: ModelResponse, limit: usize) -> Result<ModelResponse, ModelError> {
    match response.tool_calls.len() {
        calls if calls > limit => Err(too_many(limit, Some(calls))),
        _ => Ok(response),
    }
}

/// The refusal of a response that asks for more than `limit` calls: `calls` of them, when the
/// response was read whole.
pub(super) fn too_many(limit: usize, calls: Option<usize>) -> ModelError {
    let asked = match calls {
        Some(calls) => format!("{calls} tool calls in one response, more than the {limit}"),
        None => format!("more than {limit} tool calls in one response, the most"),
    };
    ModelError::new(format!(
        "the model asked for {asked} one turn may run (`max_calls_per_turn`); none of them was run"
    ))
}
