//! [`AgentBuilder`]: tools, policies and limits, checked together by [`AgentBuilder::build`].

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::agent::{Agent, Inner};
use crate::model::Model;
use crate::tool::{Tool, ToolDefinition, Toolbox};

/// What the run does when a tool call fails.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolFailureMode {
    /// The failure becomes an error tool result the model can act on, and the run goes on.
    #[default]
    ReportToModel,
    /// The first failure ends the run with [`AgentError::ToolFailed`](crate::AgentError::ToolFailed).
    ///
    /// The model is not called again. The other calls of the same turn, which ran concurrently,
    /// are recorded like the rest of the run: their results in the partial transcript, their
    /// failures beside this one.
    Propagate,
}

/// How tool failures are shown to the model, and how long tools may run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolFailureOptions {
    /// Show the model the failure's message after its kind
    /// (`Tool 'NAME' failed with Type: MESSAGE`). Off by default: messages carry connection
    /// strings, paths and data. Argument errors are always shown in full.
    pub include_error_message: bool,
    /// How long any one tool call may run; a tool's own `#[tool(timeout = ..)]` applies when
    /// it is shorter. `None`: no limit beyond the tool's own.
    pub timeout: Option<Duration>,
    /// Report a call that repeats an earlier failed call exactly, and fails the same way, as a
    /// short "failed again" line instead of the full text. On by default.
    pub collapse_repeats: bool,
}

impl Default for ToolFailureOptions {
    fn default() -> Self {
        Self {
            include_error_message: false,
            timeout: None,
            collapse_repeats: true,
        }
    }
}

/// Why [`AgentBuilder::build`] refused the configuration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools have the same name.
    #[error("two tools are named `{name}`; tool names must be unique")]
    DuplicateTool {
        /// The name.
        name: String,
    },
    /// A tool's name does not match `^[a-zA-Z0-9_-]{1,64}$`.
    #[error("the tool name `{name}` is invalid: names must match ^[a-zA-Z0-9_-]{{1,64}}$")]
    InvalidToolName {
        /// The name.
        name: String,
    },
    /// A tool's parameter schema is not an object schema.
    #[error("the parameters of tool `{name}` must be a JSON Schema with `\"type\": \"object\"`")]
    InvalidSchema {
        /// The tool's name.
        name: String,
    },
    /// A rule names a tool that is not registered.
    #[error(
        "{rule} names the tool `{name}`, which is not registered{}",
        hint(known)
    )]
    UnknownTool {
        /// The unknown name.
        name: String,
        /// The rule that names it, like `require("ship_order", "charge_card")`.
        rule: String,
        /// The registered tools.
        known: Vec<String>,
    },
    /// A tool's parameter schema cannot be expressed in the schema dialect the model
    /// accepts (see [`Model::schema_dialect`]).
    #[error("the parameters of tool `{tool}` cannot be sent to this model: {reason}")]
    UnsupportedSchema {
        /// The tool's name.
        tool: String,
        /// What the model's dialect cannot express, and where.
        reason: String,
    },
    /// A limit was set to zero.
    #[error("`{setting}` must be at least 1")]
    ZeroLimit {
        /// The setting.
        setting: &'static str,
    },
}

fn hint(known: &[String]) -> String {
    if known.is_empty() {
        "; no tools are registered".into()
    } else {
        format!("; the tools are: {}", known.join(", "))
    }
}

/// Builds an [`Agent`]. Start with [`Agent::builder`].
#[must_use = "call `.build()` to get an agent"]
pub struct AgentBuilder {
    model: Arc<dyn Model>,
    system: Option<String>,
    tools: Vec<Arc<dyn Tool>>,
    failure_mode: ToolFailureMode,
    failure_options: ToolFailureOptions,
    max_consecutive_failures: u32,
    max_turns: u32,
    max_parallel_tools: usize,
    requirements: Vec<(String, String)>,
    forbidden_after_untrusted: Vec<String>,
    record_content: bool,
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("system", &self.system)
            .field(
                "tools",
                &self
                    .tools
                    .iter()
                    .map(|t| t.definition().name.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("failure_mode", &self.failure_mode)
            .field("failure_options", &self.failure_options)
            .field("max_consecutive_failures", &self.max_consecutive_failures)
            .field("max_turns", &self.max_turns)
            .field("max_parallel_tools", &self.max_parallel_tools)
            .field("requirements", &self.requirements)
            .field("forbidden_after_untrusted", &self.forbidden_after_untrusted)
            .field("record_content", &self.record_content)
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    pub(crate) fn new(model: Arc<dyn Model>) -> Self {
        Self {
            model,
            system: None,
            tools: Vec::new(),
            failure_mode: ToolFailureMode::default(),
            failure_options: ToolFailureOptions::default(),
            max_consecutive_failures: 3,
            max_turns: 16,
            max_parallel_tools: 8,
            requirements: Vec::new(),
            forbidden_after_untrusted: Vec::new(),
            record_content: false,
        }
    }

    /// The system prompt.
    pub fn system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Adds a tool, such as the struct `#[tool]` generates.
    pub fn tool(mut self, tool: impl Tool) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Adds a shared tool.
    pub fn tool_arc(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds every tool of a toolbox, such as a type with a `#[tools]` impl block.
    pub fn toolbox<T: Toolbox>(mut self, toolbox: Arc<T>) -> Self {
        self.tools.extend(toolbox.tools());
        self
    }

    /// Adds shared tools, such as an MCP server's (`.tools(client.tools().await?)` with
    /// `reticent::mcp::McpClient`).
    pub fn tools(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// What a failed tool call does to the run. Default: [`ToolFailureMode::ReportToModel`].
    pub fn failure_mode(mut self, mode: ToolFailureMode) -> Self {
        self.failure_mode = mode;
        self
    }

    /// How failures are shown to the model, and the tool timeout.
    pub fn failure_options(mut self, options: ToolFailureOptions) -> Self {
        self.failure_options = options;
        self
    }

    /// After this many failed calls in a row no more tools run: the model gets one last turn,
    /// without tools, to tell the user what failed. Default 3.
    pub fn max_consecutive_failures(mut self, n: u32) -> Self {
        self.max_consecutive_failures = n;
        self
    }

    /// The most model calls in one run; the last one is offered no tools. Default 16.
    pub fn max_turns(mut self, n: u32) -> Self {
        self.max_turns = n;
        self
    }

    /// The most tool calls of one turn that run at once. Default 8.
    pub fn max_parallel_tools(mut self, n: usize) -> Self {
        self.max_parallel_tools = n;
        self
    }

    /// Refuses `tool` unless `prerequisite` succeeded earlier in the same run. A failed call of
    /// `prerequisite` never counts.
    pub fn require(mut self, tool: impl Into<String>, prerequisite: impl Into<String>) -> Self {
        self.requirements.push((tool.into(), prerequisite.into()));
        self
    }

    /// Refuses `tool` once output from an untrusted source has entered the run's transcript
    /// (a call of a tool that is `open_world` or `#[tool(untrusted_output)]` that succeeded,
    /// or failed with its message shown): a containment line against instructions planted in
    /// tool output. The refusal names the rule, is recorded like other failures and never
    /// satisfies a prerequisite; the tool's body never runs.
    ///
    /// The rule is checked against the run as it was when the model made its calls: output
    /// that arrives during a turn taints the turns after it, not the other calls of its own
    /// turn, which run concurrently with it.
    pub fn forbid_after_untrusted(mut self, tool: impl Into<String>) -> Self {
        self.forbidden_after_untrusted.push(tool.into());
        self
    }

    /// Records tool arguments and results on the `execute_tool` spans. Off by default: they
    /// can hold personal data.
    pub fn record_content(mut self, record: bool) -> Self {
        self.record_content = record;
        self
    }

    /// Checks the configuration and builds the agent.
    pub fn build(self) -> Result<Agent, BuildError> {
        if self.max_turns == 0 {
            return Err(BuildError::ZeroLimit {
                setting: "max_turns",
            });
        }
        if self.max_consecutive_failures == 0 {
            return Err(BuildError::ZeroLimit {
                setting: "max_consecutive_failures",
            });
        }
        if self.max_parallel_tools == 0 {
            return Err(BuildError::ZeroLimit {
                setting: "max_parallel_tools",
            });
        }
        let dialect = self.model.schema_dialect();
        let index = index_tools(&self.tools)?;
        let mut definitions: Vec<ToolDefinition> = Vec::with_capacity(self.tools.len());
        for tool in &self.tools {
            let definition = tool.definition();
            // converted once here, so a schema the model cannot take is refused now
            let converted = dialect.convert_definition(definition).map_err(|error| {
                BuildError::UnsupportedSchema {
                    tool: definition.name.clone(),
                    reason: error.to_string(),
                }
            })?;
            definitions.push(converted);
        }
        let known = || definitions.iter().map(|d| d.name.clone()).collect();
        let mut requirements: HashMap<String, Vec<String>> = HashMap::new();
        for (tool, prerequisite) in self.requirements {
            for name in [&tool, &prerequisite] {
                if !index.contains_key(name.as_str()) {
                    return Err(BuildError::UnknownTool {
                        name: name.clone(),
                        rule: format!("require({tool:?}, {prerequisite:?})"),
                        known: known(),
                    });
                }
            }
            let entry = requirements.entry(tool).or_default();
            if !entry.contains(&prerequisite) {
                entry.push(prerequisite);
            }
        }
        for tool in &self.forbidden_after_untrusted {
            if !index.contains_key(tool.as_str()) {
                return Err(BuildError::UnknownTool {
                    name: tool.clone(),
                    rule: format!("forbid_after_untrusted({tool:?})"),
                    known: known(),
                });
            }
        }
        Ok(Agent {
            inner: Arc::new(Inner {
                model: self.model,
                system: self.system,
                tools: self.tools,
                index,
                definitions,
                failure_mode: self.failure_mode,
                failure_options: self.failure_options,
                max_consecutive_failures: self.max_consecutive_failures,
                max_turns: self.max_turns,
                max_parallel_tools: self.max_parallel_tools,
                requirements,
                forbidden_after_untrusted: self.forbidden_after_untrusted.into_iter().collect(),
                record_content: self.record_content,
            }),
        })
    }
}

/// Checks a set of tools the way every consumer needs them (a valid name, an object schema,
/// no name twice) and indexes them by name.
pub(crate) fn index_tools(tools: &[Arc<dyn Tool>]) -> Result<HashMap<Arc<str>, usize>, BuildError> {
    let mut index = HashMap::with_capacity(tools.len());
    for (i, tool) in tools.iter().enumerate() {
        let definition = tool.definition();
        if !crate::__private::is_valid_tool_name(&definition.name) {
            return Err(BuildError::InvalidToolName {
                name: definition.name.clone(),
            });
        }
        if definition.parameters.get("type") != Some(&serde_json::Value::from("object")) {
            return Err(BuildError::InvalidSchema {
                name: definition.name.clone(),
            });
        }
        if index
            .insert(Arc::from(definition.name.as_str()), i)
            .is_some()
        {
            return Err(BuildError::DuplicateTool {
                name: definition.name.clone(),
            });
        }
    }
    Ok(index)
}
