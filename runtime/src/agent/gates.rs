//! What a call is checked against before its tool runs: the run's prerequisites
//! ([`AgentBuilder::require`](crate::AgentBuilder::require)) and taint rules
//! ([`AgentBuilder::forbid_after_untrusted`](crate::AgentBuilder::forbid_after_untrusted)), and
//! the state of the run they read — the tools that succeeded, and the record of untrusted
//! output that entered the transcript.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::error::{ToolFailure, kinds};
use crate::model::{Message, ToolCall};
use crate::render;
use crate::tool::{BuildError, ToolSet};

/// The rules, checked against the registered tools when the agent is built.
#[derive(Debug, Default)]
pub(crate) struct Rules {
    /// Each tool's prerequisites.
    requirements: HashMap<String, Vec<String>>,
    /// Tools refused once the run is tainted.
    forbidden_after_untrusted: HashSet<String>,
}

impl Rules {
    /// The rules as the builder collected them; a rule that names an unknown tool is refused.
    pub(crate) fn new(
        requirements: Vec<(String, String)>,
        forbidden_after_untrusted: Vec<String>,
        tools: &ToolSet,
    ) -> Result<Self, BuildError> {
        let unknown = |name: &str, rule: String| BuildError::UnknownTool {
            name: name.to_owned(),
            rule,
            known: tools.names().map(str::to_owned).collect(),
        };
        let mut rules = Self::default();
        for (tool, prerequisite) in requirements {
            for name in [&tool, &prerequisite] {
                if !tools.contains(name) {
                    return Err(unknown(
                        name,
                        format!("require({tool:?}, {prerequisite:?})"),
                    ));
                }
            }
            let entry = rules.requirements.entry(tool).or_default();
            if !entry.contains(&prerequisite) {
                entry.push(prerequisite);
            }
        }
        for tool in forbidden_after_untrusted {
            if !tools.contains(&tool) {
                return Err(unknown(&tool, format!("forbid_after_untrusted({tool:?})")));
            }
            rules.forbidden_after_untrusted.insert(tool);
        }
        Ok(rules)
    }
}

/// The state of a run the rules read.
#[derive(Debug, Default)]
pub(crate) struct Gates {
    /// Tools that succeeded in this run.
    succeeded: HashSet<String>,
}

impl Gates {
    /// The tools that succeeded, for a run state.
    pub(crate) fn succeeded_tools(&self) -> Vec<String> {
        let mut tools: Vec<String> = self.succeeded.iter().cloned().collect();
        tools.sort_unstable();
        tools
    }

    /// The gates of a run in which `tools` succeeded.
    pub(crate) fn with_succeeded(tools: Vec<String>) -> Self {
        Self {
            succeeded: tools.into_iter().collect(),
        }
    }

    /// Notes that a call of `tool` succeeded.
    pub(crate) fn succeeded(&mut self, tool: &str) {
        if !self.succeeded.contains(tool) {
            self.succeeded.insert(tool.to_owned());
        }
    }

    /// The refusal of `call` by a rule, if one refuses it. `tainted`: untrusted output entered
    /// the transcript before the turn the call belongs to.
    pub(crate) fn check(
        &self,
        rules: &Rules,
        call: &ToolCall,
        tainted: bool,
    ) -> Option<ToolFailure> {
        if let Some(required) = rules.requirements.get(&call.name) {
            let missing: Vec<&str> = required
                .iter()
                .filter(|r| !self.succeeded.contains(*r))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                return Some(ToolFailure::new(
                    &call.name,
                    &call.id,
                    kinds::PREREQUISITE,
                    Arc::new(PrerequisiteNotMet {
                        tool: call.name.clone(),
                        prerequisite: missing.join(", "),
                    }),
                    render::prerequisite(&call.name, &missing),
                ));
            }
        }
        if tainted && rules.forbidden_after_untrusted.contains(&call.name) {
            return Some(ToolFailure::new(
                &call.name,
                &call.id,
                kinds::UNTRUSTED,
                Arc::new(ForbiddenAfterUntrusted {
                    tool: call.name.clone(),
                }),
                render::forbidden_after_untrusted(&call.name),
            ));
        }
        None
    }
}

/// The calls whose untrusted output entered the transcript, in order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Taint {
    pub(crate) tainted_by: Vec<String>,
}

impl Taint {
    /// The taint of `history`: the results of the agent's untrusted tools in it, by the rule
    /// that applies to calls of the run (a successful result, or an error result when error
    /// messages are shown).
    pub(crate) fn of_history(tools: &ToolSet, history: &[Message], shows_messages: bool) -> Self {
        let tainted_by = history
            .iter()
            .filter_map(|message| match message {
                Message::Tool(result) if !result.is_error || shows_messages => Some(result),
                _ => None,
            })
            .filter(|result| {
                tools
                    .get(&result.name)
                    .is_some_and(|(_, tool)| tool.untrusted_output())
            })
            .map(|result| result.call_id.clone())
            .collect();
        Self { tainted_by }
    }

    /// Whether anything untrusted entered the transcript.
    pub(crate) fn is_tainted(&self) -> bool {
        !self.tainted_by.is_empty()
    }

    /// Notes that the output of the call `call_id` entered the transcript.
    pub(crate) fn add(&mut self, call_id: &str) {
        self.tainted_by.push(call_id.to_owned());
    }
}

/// A tool was refused because its prerequisite had not succeeded earlier in the run.
#[derive(Clone, Debug, thiserror::Error)]
#[error("`{tool}` requires a successful `{prerequisite}` earlier in the run")]
pub struct PrerequisiteNotMet {
    /// The refused tool.
    pub tool: String,
    /// The tool that must succeed first.
    pub prerequisite: String,
}

/// A tool was refused because the run is tainted by untrusted output and a
/// [`forbid_after_untrusted`](crate::AgentBuilder::forbid_after_untrusted) rule names it.
#[derive(Clone, Debug, thiserror::Error)]
#[error("`{tool}` is forbidden after untrusted output entered the run")]
pub struct ForbiddenAfterUntrusted {
    /// The refused tool.
    pub tool: String,
}
