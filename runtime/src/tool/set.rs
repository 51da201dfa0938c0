//! [`ToolSet`]: a set of tools checked the way every consumer needs them (a valid name, an
//! object schema, no name twice) and indexed by name. The agent and the MCP server both hold
//! one.

use std::collections::HashMap;
use std::sync::Arc;

use super::Tool;

/// Why a set of tools was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ToolSetError {
    /// Two tools have the same name.
    Duplicate(String),
    /// A tool's name does not match `^[a-zA-Z0-9_-]{1,64}$`.
    InvalidName(String),
    /// A tool's parameter schema is not an object schema.
    NotAnObjectSchema(String),
}

/// Tools, in the order they were added, and their index by name.
#[derive(Clone, Default)]
pub(crate) struct ToolSet {
    tools: Vec<Arc<dyn Tool>>,
    /// Each tool's position in `tools`, by its name. A call's context shares the name.
    index: HashMap<Arc<str>, usize>,
}

impl ToolSet {
    /// Checks `tools` and indexes them.
    pub(crate) fn new(tools: Vec<Arc<dyn Tool>>) -> Result<Self, ToolSetError> {
        let mut index = HashMap::with_capacity(tools.len());
        for (i, tool) in tools.iter().enumerate() {
            let definition = tool.definition();
            if !is_valid_tool_name(&definition.name) {
                return Err(ToolSetError::InvalidName(definition.name.clone()));
            }
            if definition.parameters.get("type") != Some(&serde_json::Value::from("object")) {
                return Err(ToolSetError::NotAnObjectSchema(definition.name.clone()));
            }
            if index
                .insert(Arc::from(definition.name.as_str()), i)
                .is_some()
            {
                return Err(ToolSetError::Duplicate(definition.name.clone()));
            }
        }
        Ok(Self { tools, index })
    }

    /// The tool named `name`, with the name as the index keeps it (shared with each call's
    /// context rather than copied).
    pub(crate) fn get(&self, name: &str) -> Option<(&Arc<str>, &Arc<dyn Tool>)> {
        let (name, &i) = self.index.get_key_value(name)?;
        Some((name, &self.tools[i]))
    }

    /// Whether a tool is named `name`.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// The tools, in the order they were added.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &Arc<dyn Tool>> {
        self.tools.iter()
    }

    /// The tools' names, in the order they were added.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.definition().name.as_str())
    }

    /// How many tools there are.
    pub(crate) fn len(&self) -> usize {
        self.tools.len()
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
