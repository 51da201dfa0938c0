//! The effects ledger: every call of a tool that may change the world, with whether it took
//! effect ([`Effect`]).

use serde::{Deserialize, Serialize};

use crate::error::EffectOutcome;
use crate::model::{Arguments, ToolCall};
use crate::tool::{Reconciled, Tool};

/// One call of a tool that is not `read_only`: something that may have changed the world.
///
/// The ledger ([`AgentResult::effects`](crate::AgentResult::effects)) lists them in call
/// order, also on the `partial` result of a cancelled or propagated run, so a caller can
/// reconcile what happened after any run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Effect {
    /// The tool.
    pub tool: String,
    /// The call's id.
    pub call_id: String,
    /// The arguments the model sent.
    pub arguments: Arguments,
    /// Whether it happened.
    pub outcome: EffectOutcome,
    /// What the tool's reconcile hook answered when the call, its effect unknown, was about
    /// to run again (`#[tool(reconcile = path)]`); `None` when it was not asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciled: Option<Reconciled>,
}

/// The calls of a run that may have changed the world, in call order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ledger(pub(crate) Vec<Effect>);

impl Ledger {
    /// Adds `call` of `tool` (`None` for a tool that does not exist) if it can change the
    /// world.
    pub(crate) fn record(
        &mut self,
        tool: Option<&dyn Tool>,
        call: &ToolCall,
        outcome: EffectOutcome,
        reconciled: Option<Reconciled>,
    ) {
        let Some(tool) = tool else {
            return;
        };
        if tool.definition().annotations.read_only {
            return;
        }
        self.0.push(Effect {
            tool: call.name.clone(),
            call_id: call.id.clone(),
            arguments: call.arguments.clone(),
            outcome,
            reconciled,
        });
    }
}
