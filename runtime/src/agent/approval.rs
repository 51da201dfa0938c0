//! Approvals: which calls a person must approve before they run
//! ([`AgentBuilder::require_approval`](crate::AgentBuilder::require_approval),
//! [`AgentBuilder::require_approval_if`](crate::AgentBuilder::require_approval_if),
//! [`Tool::needs_approval`]), and the calls a stopped run waits on ([`PendingCall`]). The
//! caller's answers are in `decision.rs`.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::digest::CallDigest;
use crate::model::ToolCall;
use crate::tool::BuildError;
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

/// A call a stopped run waits on: it needs the caller's [`Decision`](crate::Decision) before
/// [`Agent::resume`](crate::Agent::resume) continues the run.
///
/// Its JSON holds its [`digest`](PendingCall::digest) as well (`"digest": "9f2c…"`), for a
/// person's answer to name the call it decides on; reading one back computes the digest again
/// from the tool and the arguments.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct PendingCall {
    /// The call's id; the key of its decision in [`Decisions`](crate::Decisions).
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

    /// The digest of the call's tool and arguments: a decision made from this pending call
    /// carries it, and applies only to a call with the same digest (see
    /// [`Decision`](crate::Decision)).
    pub fn digest(&self) -> CallDigest {
        CallDigest::of(&self.tool, &self.arguments)
    }
}

impl Serialize for PendingCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut call = serializer.serialize_struct("PendingCall", 5)?;
        call.serialize_field("call_id", &self.call_id)?;
        call.serialize_field("tool", &self.tool)?;
        call.serialize_field("arguments", &self.arguments)?;
        call.serialize_field("reason", &self.reason)?;
        call.serialize_field("digest", &self.digest())?;
        call.end()
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
