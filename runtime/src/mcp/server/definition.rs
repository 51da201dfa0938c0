//! A [`ToolDefinition`] as `tools/list` describes it.

use std::sync::Arc;

use rmcp::model::{Tool as McpTool, ToolAnnotations as McpAnnotations};

use crate::tool::{Tool, ToolDefinition};

/// The MCP description of `tool` (whose parameter schema the tool set checked is an object).
pub(super) fn to_mcp(tool: &dyn Tool) -> McpTool {
    describe(tool.definition(), tool.untrusted_output())
}

/// The MCP description of `definition`; `untrusted`: whether the tool's output comes from
/// outside the system.
///
/// All four hints are always sent: MCP's defaults for an absent `destructiveHint` and
/// `openWorldHint` are `true`, reticent's are `false`, so leaving them out would change their
/// meaning. `openWorldHint` is also set for a tool whose output is untrusted
/// (`#[tool(untrusted_output)]`): the client should know that what it returns comes from the
/// open world, whatever the tool itself reaches.
fn describe(definition: &ToolDefinition, untrusted: bool) -> McpTool {
    let schema = match &definition.parameters {
        serde_json::Value::Object(schema) => schema.clone(),
        _ => serde_json::Map::new(),
    };
    let a = definition.annotations;
    let annotations = McpAnnotations::new()
        .read_only(a.read_only)
        .destructive(a.destructive)
        .idempotent(a.idempotent)
        .open_world(a.open_world || untrusted);
    let mut tool = McpTool::new(
        definition.name.clone(),
        definition.description.clone(),
        Arc::new(schema),
    )
    .with_annotations(annotations);
    if let Some(title) = &definition.title {
        tool = tool.with_title(title.clone());
    }
    tool
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tool::ToolAnnotations;

    #[test]
    fn every_hint_is_explicit() {
        let definition = ToolDefinition::new(
            "lookup",
            "Look something up.",
            json!({"type": "object", "properties": {}}),
        )
        .with_annotations(ToolAnnotations::new().read_only(true));
        let listed = serde_json::to_value(describe(&definition, false)).unwrap();
        assert_eq!(
            listed["annotations"],
            json!({
                "readOnlyHint": true,
                "destructiveHint": false,
                "idempotentHint": false,
                "openWorldHint": false,
            })
        );
        assert_eq!(listed["inputSchema"], definition.parameters);
        assert_eq!(listed["description"], "Look something up.");
    }

    #[test]
    fn untrusted_output_is_open_world() {
        let definition = ToolDefinition::new(
            "read_email",
            "Read an email.",
            json!({"type": "object", "properties": {}}),
        )
        .with_annotations(ToolAnnotations::new().read_only(true))
        .with_title("Read email");
        let listed = serde_json::to_value(describe(&definition, true)).unwrap();
        assert_eq!(listed["annotations"]["openWorldHint"], true);
        assert_eq!(listed["title"], "Read email");
    }
}
