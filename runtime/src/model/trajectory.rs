//! [`Trajectory`]: the record of a run's model requests and responses, holding only what the
//! model saw; [`ReplayModel`](super::ReplayModel) replays one.

use serde::{Deserialize, Serialize};

use super::{Message, ModelRequest, ModelResponse};
use crate::tool::ToolDefinition;

/// Every model request and response of a run, holding only what the model saw.
///
/// The requests of a run share a growing transcript, so a trajectory stores the transcript
/// once and, for each turn, how much of it the request held: it is linear in the length of
/// the run, and [`Trajectory::requests`] rebuilds each request exactly. It round-trips through
/// JSON without loss.
///
/// ```
/// use reticent::{Agent, ModelResponse, ReplayModel, ScriptedModel, Trajectory};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let agent = Agent::builder(ScriptedModel::new(vec![ModelResponse::text("Hi!")])).build().unwrap();
/// let recorded = agent.run("Hello").await.unwrap().trajectory;
///
/// let json = serde_json::to_string(&recorded).unwrap();
/// let loaded: Trajectory = serde_json::from_str(&json).unwrap();
/// assert_eq!(loaded, recorded);
///
/// let replay = Agent::builder(ReplayModel::new(loaded)).build().unwrap();
/// assert_eq!(replay.run("Hello").await.unwrap().output, "Hi!");
/// # });
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    system: Option<String>,
    tools: Vec<ToolDefinition>,
    messages: Vec<Message>,
    turns: Vec<TrajectoryTurn>,
    /// The boundary the run fenced untrusted output with, when it fenced any or was given one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fence_boundary: Option<String>,
}

/// One model call of a trajectory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct TrajectoryTurn {
    /// How many transcript messages the request held.
    pub(crate) messages: usize,
    /// Whether the request offered the tools.
    pub(crate) tools_offered: bool,
    /// The model's response.
    pub(crate) response: ModelResponse,
}

impl Trajectory {
    pub(crate) fn new(
        system: Option<String>,
        tools: Vec<ToolDefinition>,
        messages: Vec<Message>,
        turns: Vec<TrajectoryTurn>,
    ) -> Self {
        Self {
            system,
            tools,
            messages,
            turns,
            fence_boundary: None,
        }
    }

    /// The trajectory of a run that fenced untrusted output with `boundary`.
    pub(crate) fn fenced_with(mut self, boundary: Option<String>) -> Self {
        self.fence_boundary = boundary;
        self
    }

    /// The boundary the run fenced untrusted output with
    /// ([`AgentBuilder::fence_untrusted_output`](crate::AgentBuilder::fence_untrusted_output)),
    /// when it fenced any or was given one: 32 hex digits drawn at random for the run. A
    /// [`ReplayModel`](super::ReplayModel) hands it to the run that replays the trajectory
    /// ([`Model::fence_boundary`](super::Model::fence_boundary)), so that the replayed requests
    /// are the recorded ones byte for byte.
    pub fn fence_boundary(&self) -> Option<&str> {
        self.fence_boundary.as_deref()
    }

    /// How many model calls were recorded.
    pub fn len(&self) -> usize {
        self.turns.len()
    }

    /// Whether no model call was recorded.
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// The request of turn `index` (from 0), rebuilt exactly.
    pub fn request(&self, index: usize) -> Option<ModelRequest> {
        let turn = self.turns.get(index)?;
        Some(ModelRequest {
            system: self.system.clone(),
            messages: self.messages.get(..turn.messages)?.to_vec(),
            tools: if turn.tools_offered {
                self.tools.clone()
            } else {
                Vec::new()
            },
        })
    }

    /// Every request, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        (0..self.len()).filter_map(|i| self.request(i)).collect()
    }

    /// The response of turn `index` (from 0); `index` must be in range.
    pub(super) fn response(&self, index: usize) -> &ModelResponse {
        &self.turns[index].response
    }

    /// Every response, in order.
    pub fn responses(&self) -> impl ExactSizeIterator<Item = &ModelResponse> {
        self.turns.iter().map(|t| &t.response)
    }

    /// The whole conversation, as the model last saw it.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Whether a recorded request of turn `index` is `request`; `Err` says where they differ.
    pub(super) fn check(&self, index: usize, request: &ModelRequest) -> Result<(), String> {
        let turn = &self.turns[index];
        if request.system != self.system {
            return Err("the system prompt differs".into());
        }
        let recorded_tools: &[ToolDefinition] = if turn.tools_offered { &self.tools } else { &[] };
        if request.tools.len() != recorded_tools.len() {
            return Err(format!(
                "{} tools were offered, the recording offered {}",
                request.tools.len(),
                recorded_tools.len()
            ));
        }
        if let Some((got, want)) = request
            .tools
            .iter()
            .zip(recorded_tools)
            .find(|(a, b)| a != b)
        {
            return Err(format!(
                "the tool `{}` is offered where the recording offered `{}`, or its definition changed",
                got.name, want.name
            ));
        }
        let recorded = &self.messages[..turn.messages.min(self.messages.len())];
        if let Some(i) = request
            .messages
            .iter()
            .zip(recorded)
            .position(|(a, b)| a != b)
        {
            return Err(format!(
                "message {} differs: recorded {}, got {}",
                i + 1,
                describe(&recorded[i]),
                describe(&request.messages[i])
            ));
        }
        if request.messages.len() != recorded.len() {
            return Err(format!(
                "the request has {} messages, the recording {}",
                request.messages.len(),
                recorded.len()
            ));
        }
        Ok(())
    }
}

fn describe(message: &Message) -> String {
    let text = |s: &str| {
        let short: String = s.chars().take(80).collect();
        if short.len() < s.len() {
            format!("{short:?}…")
        } else {
            format!("{short:?}")
        }
    };
    match message {
        Message::User { text: t } => format!("a user message {}", text(t)),
        Message::Assistant {
            text: t,
            tool_calls,
        } => format!(
            "an assistant message {} with {} tool call(s)",
            t.as_deref().map_or_else(|| "without text".to_owned(), text),
            tool_calls.len()
        ),
        Message::Tool(result) => format!(
            "the result of call '{}' to '{}' ({}) {}",
            result.call_id,
            result.name,
            if result.is_error { "error" } else { "ok" },
            text(&result.content)
        ),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::ToolCall;

    #[test]
    fn floats_survive_a_json_round_trip() {
        // Values whose shortest decimal text a fast parser reads back one bit off.
        let call = ToolCall::new(
            "c1",
            "nearest_depot",
            json!({"lat": 985.6906946328695, "lon": 212.91890726713459, "w": 92.42132512813595}),
        );
        let trajectory = Trajectory::new(
            None,
            Vec::new(),
            vec![Message::Assistant {
                text: None,
                tool_calls: vec![call.clone()],
            }],
            vec![TrajectoryTurn {
                messages: 0,
                tools_offered: false,
                response: ModelResponse::tool_calls(vec![call]),
            }],
        );
        let json = serde_json::to_string(&trajectory).unwrap();
        assert_eq!(
            serde_json::from_str::<Trajectory>(&json).unwrap(),
            trajectory
        );
    }
}
