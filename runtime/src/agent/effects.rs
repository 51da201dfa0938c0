//! What a run did to the world: the effects ledger, the taint record and per-tool counts.

use serde::{Deserialize, Serialize};

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
    pub arguments: serde_json::Value,
    /// Whether it happened.
    pub outcome: EffectOutcome,
}

/// Whether an effect happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EffectOutcome {
    /// The tool succeeded. Also when only its output could not be turned into JSON: the tool
    /// had finished its work.
    Applied,
    /// The tool returned an error, or the call was refused before the tool ran.
    Failed,
    /// Nobody knows: the call timed out, was cancelled or panicked mid-flight. Reconcile
    /// before retrying.
    Unknown,
}

/// Calls, failures and timeouts of one tool in a run: its error rate, for free.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolStats {
    /// Calls the model made.
    pub calls: u32,
    /// Calls that failed, for any reason (timeouts included).
    pub failures: u32,
    /// Calls stopped when their time ran out.
    pub timeouts: u32,
}
