//! Approvals: which calls a person must approve before they run
//! ([`AgentBuilder::require_approval`](crate::AgentBuilder::require_approval),
//! [`AgentBuilder::require_approval_if`](crate::AgentBuilder::require_approval_if),
//! [`Tool::needs_approval`]), the calls a stopped run waits on ([`PendingCall`]) and the
//! caller's answers ([`Decision`], [`Decisions`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::BuildError;
use super::state::{CallStatus, OpenCall};
use crate::model::ToolCall;
use crate::tool::{Tool, ToolSet};

/// A predicate over a call's arguments: `true` when the call needs approval.
pub(crate) type ApprovalPredicate = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

/// One approval rule as the builder collected it.
pub(crate) enum ApprovalRule {
    /// Every call of the tool.
    Always(String),
    /// The calls of the tool whose arguments the predicate picks.
    If(String, ApprovalPredicate),
}

impl fmt::Debug for ApprovalRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Always(tool) => write!(f, "require_approval({tool:?})"),
            Self::If(tool, _) => write!(f, "require_approval_if({tool:?}, ..)"),
        }
    }
}

/// The approval rules of an agent, checked against its tools when it is built.
#[derive(Default)]
pub(crate) struct ApprovalRules {
    always: HashSet<String>,
    predicates: HashMap<String, Vec<ApprovalPredicate>>,
}

impl fmt::Debug for ApprovalRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApprovalRules")
            .field("always", &self.always)
            .field("predicates", &self.predicates.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ApprovalRules {
    /// The rules as the builder collected them; a rule that names an unknown tool is refused.
    pub(crate) fn new(rules: Vec<ApprovalRule>, tools: &ToolSet) -> Result<Self, BuildError> {
        let mut out = Self::default();
        for rule in rules {
            let tool = match &rule {
                ApprovalRule::Always(tool) | ApprovalRule::If(tool, _) => tool,
            };
            if !tools.contains(tool) {
                return Err(BuildError::UnknownTool {
                    name: tool.clone(),
                    rule: format!("{rule:?}"),
                    known: tools.names().map(str::to_owned).collect(),
                });
            }
            match rule {
                ApprovalRule::Always(tool) => {
                    out.always.insert(tool);
                }
                ApprovalRule::If(tool, predicate) => {
                    out.predicates.entry(tool).or_default().push(predicate);
                }
            }
        }
        Ok(out)
    }

    /// Whether `call` of `tool` (`None`: no such tool) needs a person's approval: the tool
    /// says so, a rule names it, or a predicate of its rules picks its arguments.
    ///
    /// A predicate that panics asks for approval. Arguments a provider handed over as text are
    /// parsed for the predicates; text that is not JSON asks for none: the call fails as an
    /// argument error without running.
    pub(crate) fn needs_approval(&self, tool: Option<&dyn Tool>, call: &ToolCall) -> bool {
        let Some(tool) = tool else {
            // An unknown tool runs nothing.
            return false;
        };
        if self.always.contains(&call.name) || tool.needs_approval() {
            return true;
        }
        let Some(predicates) = self.predicates.get(&call.name) else {
            return false;
        };
        // Arguments that are not JSON run nothing: they are answered as an argument error.
        if !call.arguments.is_json() {
            return false;
        }
        let arguments = call.arguments.value();
        predicates.iter().any(|predicate| {
            catch_unwind(AssertUnwindSafe(|| predicate(arguments))).unwrap_or_else(|payload| {
                crate::tool::drop_contained(payload);
                true
            })
        })
    }
}

/// A call a stopped run waits on: it needs the caller's [`Decision`] before
/// [`Agent::resume`](crate::Agent::resume) continues the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingCall {
    /// The call's id; the key of its decision in [`Decisions`].
    pub call_id: String,
    /// The tool the model called.
    pub tool: String,
    /// The arguments the model sent.
    pub arguments: Value,
    /// Why the call waits.
    pub reason: PendingReason,
}

impl PendingCall {
    pub(crate) fn new(call: &ToolCall, reason: PendingReason) -> Self {
        Self {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.value().clone(),
            reason,
        }
    }
}

/// Why a [`PendingCall`] waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PendingReason {
    /// The call needs a person's approval before it runs. It has not run.
    Approval,
    /// The call was cut off when the run stopped (cancelled, crashed, or interrupted in an
    /// earlier attempt): whether it took effect is unknown. Reconcile it — find out whether it
    /// happened — before you decide.
    Unknown,
}

/// The caller's answer for one [`PendingCall`].
///
/// In JSON: `"approve"`, `"reject"`, or `{"applied": OUTPUT}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// Run the call: approve it, or run a call whose effect was unknown again (after you made
    /// sure it did not take effect).
    Approve,
    /// Do not run the call. The model is told `Tool 'NAME' was not approved` (for a call whose
    /// effect was unknown: that it was interrupted and not run again); the refusal is recorded
    /// like any other and never satisfies a prerequisite.
    Reject,
    /// The call whose effect was unknown did take effect, with this output: it is recorded as
    /// applied and the model is shown the output, as if the tool had returned it. Only for
    /// calls whose reason is [`PendingReason::Unknown`].
    Applied(Value),
}

/// The caller's decisions for the calls a stopped run waits on, by call id.
///
/// ```
/// use reticent::{Decision, Decisions};
/// use serde_json::json;
///
/// let decisions = Decisions::new().approve("call_3").reject("call_4");
/// assert_eq!(decisions.get("call_3"), Some(&Decision::Approve));
/// assert_eq!(
///     serde_json::to_value(&decisions).unwrap(),
///     json!({"call_3": "approve", "call_4": "reject"})
/// );
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Decisions(BTreeMap<String, Decision>);

impl Decisions {
    /// No decisions: resumes a run that waits on no call.
    pub fn new() -> Self {
        Self::default()
    }

    /// Approves the call `call_id` (or runs a call whose effect was unknown again).
    #[must_use]
    pub fn approve(self, call_id: impl Into<String>) -> Self {
        self.decide(call_id, Decision::Approve)
    }

    /// Rejects the call `call_id`: it does not run.
    #[must_use]
    pub fn reject(self, call_id: impl Into<String>) -> Self {
        self.decide(call_id, Decision::Reject)
    }

    /// Records that the call `call_id`, whose effect was unknown, took effect with `output`.
    #[must_use]
    pub fn applied(self, call_id: impl Into<String>, output: Value) -> Self {
        self.decide(call_id, Decision::Applied(output))
    }

    /// Sets the decision for `call_id`, replacing an earlier one.
    #[must_use]
    pub fn decide(mut self, call_id: impl Into<String>, decision: Decision) -> Self {
        self.0.insert(call_id.into(), decision);
        self
    }

    /// The decision for `call_id`.
    pub fn get(&self, call_id: &str) -> Option<&Decision> {
        self.0.get(call_id)
    }

    /// What is wrong with these decisions for the calls `pending` lists, each thing in a
    /// sentence; empty when they fit: every call has a decision, no decision names a call
    /// that does not wait, and only a call whose effect is unknown is marked applied.
    /// [`Agent::resume`](crate::Agent::resume) checks the same; an endpoint that takes a
    /// person's decisions can check them at once.
    pub fn problems(&self, pending: &[PendingCall]) -> Vec<String> {
        super::state::Refusal::of(self, pending).sentences()
    }

    /// Every decision, by call id.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Decision)> {
        self.0.iter().map(|(id, decision)| (id.as_str(), decision))
    }

    /// How many calls are decided.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no call is decided.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(String, Decision)> for Decisions {
    fn from_iter<I: IntoIterator<Item = (String, Decision)>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

/// A person did not approve the call; it was not run.
#[derive(Clone, Debug, thiserror::Error)]
#[error("the call `{call_id}` of `{tool}` was not approved; it was not run")]
pub struct NotApproved {
    /// The tool.
    pub tool: String,
    /// The call's id.
    pub call_id: String,
}

/// A call cut off when its run stopped, which the caller chose not to run again.
#[derive(Clone, Debug, thiserror::Error)]
#[error(
    "the call `{call_id}` of `{tool}` was cut off when the run stopped and was not run again; \
     whether it took effect is unknown"
)]
pub struct NotRunAgain {
    /// The tool.
    pub tool: String,
    /// The call's id.
    pub call_id: String,
}

impl super::run::Run<'_> {
    /// The calls of a turn as they wait for approval, when one of them needs it: none of the
    /// turn's calls runs until the caller decides. A call a rule refuses anyway needs none.
    pub(super) fn awaiting_approval(&self, calls: &[ToolCall]) -> Option<Vec<OpenCall>> {
        let tainted = self.record.taint.is_tainted();
        let needs: Vec<bool> = calls
            .iter()
            .map(|call| {
                let tool = self.inner.tools.get(&call.name).map(|(_, tool)| &**tool);
                self.inner.approvals.needs_approval(tool, call)
                    && self.gates.check(&self.inner.rules, call, tainted).is_none()
            })
            .collect();
        if !needs.contains(&true) {
            return None;
        }
        let open = calls
            .iter()
            .zip(needs)
            .map(|(call, needs)| {
                let status = if needs {
                    CallStatus::AwaitingApproval
                } else {
                    CallStatus::NotStarted
                };
                self.open_call(call, status)
            })
            .collect();
        Some(open)
    }
}
