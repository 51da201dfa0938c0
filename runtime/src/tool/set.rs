//! [`ToolSet`]: a set of tools checked the way every consumer needs them (a valid name, an
//! object schema, no name twice) and indexed by name, and [`BuildError`], why a builder refused
//! its tools. The agent and the MCP server both hold one. A tool whose schema carries
//! constraints that cannot be compiled into an [`ArgumentValidator`] is refused here (the tool
//! checks its arguments itself, in its call); the agent's set also holds each tool's schema in
//! the model's dialect and the normaliser for it.

use std::collections::HashMap;
use std::sync::Arc;

use super::checked::Checked;
use super::validate::ArgumentValidator;
use super::{Tool, ToolDefinition};
use crate::error::ToolFailure;
use crate::model::{SchemaDialect, SchemaError};

/// Why [`AgentBuilder::build`](crate::AgentBuilder::build) or `McpServerBuilder::build`
/// (feature `mcp`) refused the tools and the rules around them.
///
/// The first four variants are the checks every set of tools passes; the others name the
/// builder that makes them.
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
    /// A tool's parameter schema carries constraints that cannot be compiled into a validator
    /// (see [`ArgumentValidator`]): a `pattern` that is not a regular expression, a `$ref` to
    /// nothing, a `patternProperties` regex that needs lookaround or backreferences.
    #[error("the parameters of tool `{name}` cannot be checked against their schema: {reason}")]
    UncheckableSchema {
        /// The tool's name.
        name: String,
        /// What is wrong with the schema.
        reason: String,
    },
    /// An agent's rule names a tool that is not registered.
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
    /// A tool's parameter schema cannot be expressed in the schema dialect the agent's model
    /// accepts (see [`Model::schema_dialect`](crate::Model::schema_dialect)).
    #[error("the parameters of tool `{tool}` cannot be sent to this model: {reason}")]
    UnsupportedSchema {
        /// The tool's name.
        tool: String,
        /// What the model's dialect cannot express, and where.
        reason: String,
    },
    /// One of an agent's limits was set to zero.
    #[error("`{setting}` must be at least 1")]
    ZeroLimit {
        /// The setting.
        setting: &'static str,
    },
    /// A tool served over MCP has an output schema that is not an object schema, as MCP
    /// requires (a non-object output is described by an object schema with
    /// `"x-reticent-wrap-result": true`).
    #[error(
        "the output schema of tool `{name}` must be a JSON Schema with `\"type\": \"object\"`; \
         describe a non-object output as `{{\"result\": ..}}` and mark the schema with \
         `\"x-reticent-wrap-result\": true`"
    )]
    InvalidOutputSchema {
        /// The tool's name.
        name: String,
    },
    /// A tool served over MCP needs a person's approval before each call, and the server
    /// neither asks the client's user (`McpServerBuilder::elicit_approval`) nor was told that
    /// the client asks (`McpServerBuilder::trust_client_approval`).
    #[error(
        "tool `{name}` needs a person's approval before each call: have the server ask the \
         client's user with `.elicit_approval(wait)`, serve it only to clients that confirm \
         each call with their user and say so with `.trust_client_approval(true)`, or run it \
         in an `Agent`, which stops for approval"
    )]
    NeedsApproval {
        /// The tool's name.
        name: String,
    },
}

fn hint(known: &[String]) -> String {
    if known.is_empty() {
        "; no tools are registered".into()
    } else {
        format!("; the tools are: {}", known.join(", "))
    }
}

/// Tools, in the order they were added, and their index by name.
#[derive(Clone, Default)]
pub(crate) struct ToolSet {
    /// The tools as they are called: each wrapped in [`Checked`] when its arguments need work.
    tools: Vec<Arc<dyn Tool>>,
    /// The tools as they were added.
    originals: Vec<Arc<dyn Tool>>,
    /// Each tool's position in `tools`, by its name. A call's context shares the name.
    index: HashMap<Arc<str>, usize, foldhash::fast::RandomState>,
    /// The names, in the tools' order: a set of a few tools is searched by comparing them,
    /// which costs less than hashing the name.
    names: Box<[Arc<str>]>,
}

/// The most tools a set searches by comparing names rather than through its index.
const COMPARED: usize = 8;

impl ToolSet {
    /// Checks `tools` (each schema's constraints must compile into a validator) and indexes
    /// them.
    pub(crate) fn new(tools: Vec<Arc<dyn Tool>>) -> Result<Self, BuildError> {
        let mut index = HashMap::with_capacity_and_hasher(tools.len(), Default::default());
        let mut names = Vec::with_capacity(tools.len());
        for (i, tool) in tools.iter().enumerate() {
            let definition = tool.definition();
            if !is_valid_tool_name(&definition.name) {
                return Err(BuildError::InvalidToolName {
                    name: definition.name.clone(),
                });
            }
            if definition.parameters.get("type") != Some(&serde_json::Value::from("object")) {
                return Err(BuildError::InvalidSchema {
                    name: definition.name.clone(),
                });
            }
            let name: Arc<str> = Arc::from(definition.name.as_str());
            names.push(Arc::clone(&name));
            if index.insert(name, i).is_some() {
                return Err(BuildError::DuplicateTool {
                    name: definition.name.clone(),
                });
            }
            ArgumentValidator::new(&definition.parameters).map_err(|error| {
                BuildError::UncheckableSchema {
                    name: definition.name.clone(),
                    reason: error.reason().to_owned(),
                }
            })?;
        }
        Ok(Self {
            tools: tools.clone(),
            originals: tools,
            index,
            names: names.into(),
        })
    }

    /// Converts every tool's parameter schema to `dialect`: the definitions the model is
    /// offered, in order. Each tool whose converted schema lets the model send a `null` its own
    /// schema did not allow is then called through a normaliser that removes it. On error, the
    /// name of the tool whose schema the dialect cannot express.
    pub(crate) fn convert(
        &mut self,
        dialect: SchemaDialect,
    ) -> Result<Vec<ToolDefinition>, (String, SchemaError)> {
        let mut definitions = Vec::with_capacity(self.originals.len());
        for (i, original) in self.originals.iter().enumerate() {
            let definition = original.definition();
            let prepared = dialect
                .prepare(&definition.parameters)
                .map_err(|error| (definition.name.clone(), error))?;
            definitions.push(definition.clone().with_parameters(prepared.schema));
            if prepared.normaliser.is_some() {
                self.tools[i] = Checked::wrap(Arc::clone(original), prepared.normaliser);
            }
        }
        Ok(definitions)
    }

    /// The tool named `name`, with the name as the index keeps it (shared with each call's
    /// context rather than copied).
    pub(crate) fn get(&self, name: &str) -> Option<(&Arc<str>, &Arc<dyn Tool>)> {
        self.find(name).map(|(_, name, tool)| (name, tool))
    }

    /// [`get`](Self::get), with the tool's position among the tools: for a consumer that
    /// keeps something per tool in the same order.
    pub(crate) fn find(&self, name: &str) -> Option<(usize, &Arc<str>, &Arc<dyn Tool>)> {
        let i = if self.names.len() <= COMPARED {
            self.names.iter().position(|known| **known == *name)?
        } else {
            *self.index.get(name)?
        };
        Some((i, &self.names[i], &self.tools[i]))
    }

    /// The failure of a call `call_id` of `name`, which no tool here is named: the model is
    /// shown the names it can call.
    #[cold]
    pub(crate) fn unknown(&self, name: &str, call_id: &str) -> ToolFailure {
        let available: Vec<&str> = self.names().collect();
        super::errors::unknown_tool(name, call_id, &available)
    }

    /// Whether a tool is named `name`.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// The tools, in the order they were added (the MCP server lists them).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &Arc<dyn Tool>> {
        self.tools.iter()
    }

    /// The tools' names, in the order they were added.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.definition().name.as_str())
    }
}

/// Whether `name` is a valid tool name, `^[a-zA-Z0-9_-]{1,64}$` (the macros check literal
/// names when the crate compiles; this checks the names of tools made at runtime).
pub(crate) fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::{COMPARED, ToolSet};
    use crate::{Tool, ToolContext, ToolDefinition, tool::ToolFuture};

    /// A tool that is only a definition.
    struct Named(ToolDefinition);

    impl Tool for Named {
        fn definition(&self) -> &ToolDefinition {
            &self.0
        }

        fn call(&self, _: Value, _: ToolContext) -> ToolFuture<'_> {
            ToolFuture::ready(Ok(Value::Null))
        }
    }

    fn set(names: &[String]) -> ToolSet {
        let tools = names
            .iter()
            .map(|name| {
                let definition =
                    ToolDefinition::new(name.as_str(), "A tool.", json!({"type": "object"}));
                Arc::new(Named(definition)) as Arc<dyn Tool>
            })
            .collect();
        ToolSet::new(tools).expect("valid")
    }

    /// Up to `COMPARED` tools are found by comparing names, more through the index: both find
    /// each tool at its place, under its own name only.
    #[test]
    fn a_few_tools_and_many_are_found_alike() {
        for count in [1, 2, COMPARED, COMPARED + 1, 40] {
            // Names of one length and one prefix, and one that is a prefix of another.
            let mut names: Vec<String> = (0..count).map(|i| format!("tool_{i:02}")).collect();
            names[0] = "tool".to_owned();
            let set = set(&names);
            for (i, name) in names.iter().enumerate() {
                let (position, found, tool) = set.find(name).expect("found");
                assert_eq!((position, &**found), (i, name.as_str()), "{count} tools");
                assert_eq!(tool.definition().name, *name);
                assert!(set.contains(name));
            }
            for unknown in ["", "tool_", "tool_99", "TOOL", "tool_00 ", "tool\u{0}"] {
                assert!(set.find(unknown).is_none(), "{unknown:?} in {count} tools");
                assert!(!set.contains(unknown));
            }
        }
    }
}
