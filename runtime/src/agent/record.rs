//! What a run gathers for the caller — the transcript and the trajectory's turns, usage, the
//! failures, the ledger, the taint record, the counts and the fence's boundary — and the one place an
//! [`AgentResult`] is made from it.

use super::fence::Fence;
use super::gates::Taint;
use super::ledger::Ledger;
use super::state::RunState;
use super::stats::Stats;
use super::{AgentResult, StopReason, WholeOutput};
use crate::error::ToolFailure;
use crate::model::{ModelRequest, Trajectory, TrajectoryTurn, Usage};
use crate::tool::ToolDefinition;

/// The caller's record of a run so far.
#[derive(Clone)]
pub(super) struct Record {
    /// The request of the next turn; its `messages` are the transcript.
    pub(super) request: ModelRequest,
    /// Each model call, for the trajectory.
    pub(super) turns: Vec<TrajectoryTurn>,
    pub(super) usage: Usage,
    pub(super) failures: Vec<ToolFailure>,
    /// The whole outputs the model was shown less of.
    pub(super) whole_outputs: Vec<WholeOutput>,
    pub(super) ledger: Ledger,
    pub(super) taint: Taint,
    pub(super) stats: Stats,
    /// The fence around untrusted output, and the run's boundary once drawn.
    pub(super) fence: Fence,
}

impl Record {
    /// How many model calls were made.
    pub(super) fn turn_count(&self) -> u32 {
        u32::try_from(self.turns.len()).unwrap_or(u32::MAX)
    }

    /// The result: the run stopped for `stop_reason`, the model's last text was `output`.
    /// `definitions` are the tools as the model was offered them; `state`, when the run can go
    /// on, is what it goes on from.
    pub(super) fn into_result(
        self,
        definitions: &[ToolDefinition],
        stop_reason: StopReason,
        output: Option<String>,
        state: Option<RunState>,
    ) -> AgentResult {
        let turns = self.turn_count();
        let answered = output.as_deref().is_some_and(|text| !text.is_empty());
        let trajectory = Trajectory::new(
            self.request.system,
            definitions.to_vec(),
            self.request.messages.clone(),
            self.turns,
        )
        .fenced_with(self.fence.boundary().map(str::to_owned));
        AgentResult {
            output: output.unwrap_or_default(),
            answered,
            messages: self.request.messages,
            tool_failures: self.failures,
            whole_outputs: self.whole_outputs,
            usage: self.usage,
            turns,
            stop_reason,
            trajectory,
            effects: self.ledger.0,
            tainted_by: self.taint.tainted_by,
            tool_stats: self.stats.0,
            pending: state.as_ref().map(RunState::pending).unwrap_or_default(),
            state,
        }
    }
}
