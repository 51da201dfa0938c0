//! A run's state, taken and restored: the methods of the loop's `Run` that write a
//! [`RunState`](super::RunState) and read one back.

use super::run::Run;
use super::state::{CallRecord, CallStatus, FailureRecord, OpenCall, RunState, State};
use crate::error::EffectOutcome;
use crate::model::ToolCall;

impl Run<'_> {
    /// The run's state now; `open`: the calls of the last model response, when they are not
    /// all recorded.
    pub(super) fn state(&self, open: Vec<OpenCall>) -> RunState {
        let record = &self.record;
        RunState(Box::new(State {
            messages: record.request.messages.clone(),
            turns: record.turns.clone(),
            usage: record.usage,
            effects: record.ledger.0.clone(),
            tainted_by: record.taint.tainted_by.clone(),
            tool_stats: record.stats.0.clone(),
            failures: record.failures.iter().map(FailureRecord::of).collect(),
            consecutive_failures: self.consecutive_failures,
            succeeded: self.gates.succeeded_tools(),
            repeats: self.repeats.records(),
            final_turn: self.final_turn,
            open_turn: open,
            fence_boundary: record.fence.boundary().map(str::to_owned),
        }))
    }

    /// Hands the state to the caller's checkpoint, if there is one.
    pub(super) fn save(&self, open: Vec<OpenCall>) {
        if self.checkpoint.is_some() {
            self.save_state(&self.state(open));
        }
    }

    /// Hands `state` to the caller's checkpoint, if there is one.
    pub(super) fn save_state(&self, state: &RunState) {
        if let Some(checkpoint) = &self.checkpoint {
            checkpoint.save(state);
        }
    }

    /// Hands the state to the checkpoint while the calls of a turn run: a call that has not
    /// finished may be running, and is saved as such (its effect unknown if the run stops
    /// here).
    pub(super) fn save_turn(
        &self,
        calls: &[ToolCall],
        progress: &[std::sync::Mutex<super::call::CallStage>],
    ) {
        if self.checkpoint.is_none() {
            return;
        }
        let open = calls
            .iter()
            .zip(progress)
            .map(|(call, slot)| {
                let slot = slot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let status = match &*slot {
                    super::call::CallStage::Finished(executed) => {
                        CallStatus::Finished(CallRecord::of(&executed.outcome, executed.elapsed))
                    }
                    _ => CallStatus::InFlight,
                };
                self.open_call(call, status)
            })
            .collect();
        self.save(open);
    }

    /// The calls of a turn that was cut off, and how far each got.
    pub(super) fn open_calls(
        &self,
        calls: &[ToolCall],
        progress: &[super::call::CallStage],
    ) -> Vec<OpenCall> {
        use super::call::CallStage;
        calls
            .iter()
            .zip(progress)
            .map(|(call, progress)| {
                let status = match progress {
                    CallStage::NotStarted => CallStatus::NotStarted,
                    CallStage::Running | CallStage::Interrupted => CallStatus::InFlight,
                    CallStage::Finished(executed) => {
                        CallStatus::Finished(CallRecord::of(&executed.outcome, executed.elapsed))
                    }
                };
                self.open_call(call, status)
            })
            .collect()
    }

    /// `call` of the last model response, which got as far as `status`.
    pub(super) fn open_call(&self, call: &ToolCall, status: CallStatus) -> OpenCall {
        let changes_world = self
            .inner
            .tools
            .get(&call.name)
            .is_some_and(|(_, tool)| !tool.definition().annotations.read_only);
        OpenCall {
            call: call.clone(),
            changes_world,
            status,
        }
    }

    /// Adds the calls of a turn that was cut off to the ledger, for the result the caller
    /// gets: calls that finished, with their outcome, and calls that may have taken effect.
    pub(super) fn ledger_open(&mut self, open: &[OpenCall]) {
        for call in open {
            let outcome = match &call.status {
                CallStatus::Finished(record) => record.effect,
                CallStatus::InFlight => EffectOutcome::Unknown,
                CallStatus::AwaitingApproval | CallStatus::NotStarted => continue,
            };
            let tool = self
                .inner
                .tools
                .get(&call.call.name)
                .map(|(_, tool)| &**tool);
            self.record.ledger.record(tool, &call.call, outcome);
        }
    }
}
