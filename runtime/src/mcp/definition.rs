//! A [`ToolDefinition`] as `tools/list` describes it.

use std::sync::Arc;

use rmcp::model::{Tool as McpTool, ToolAnnotations as McpAnnotations};

use crate::tool::ToolDefinition;

/// The MCP description of `definition`, or `None` when its schema is not an object schema.
///
/// All four hints are always sent: MCP's defaults for an absent `destructiveHint` and
/// `openWorldHint` are `true`, reticent's are `false`, so leaving them out would change their
/// meaning.
pub(super) fn to_mcp(definition: &ToolDefinition) -> Option<McpTool> {
    let schema = definition.parameters.as_object()?;
    if schema.get("type") != Some(&serde_json::Value::from("object")) {
        return None;
    }
    let a = definition.annotations;
    let annotations = McpAnnotations::new()
        .read_only(a.read_only)
        .destructive(a.destructive)
        .idempotent(a.idempotent)
        .open_world(a.open_world);
    Some(
        McpTool::new(
            definition.name.clone(),
            definition.description.clone(),
            Arc::new(schema.clone()),
        )
        .with_annotations(annotations),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tool::ToolAnnotations;

    #[test]
    fn every_hint_is_explicit() {
        let definition = ToolDefinition {
            name: "lookup".into(),
            description: "Look something up.".into(),
            parameters: json!({"type": "object", "properties": {}}),
            annotations: ToolAnnotations {
                read_only: true,
                ..Default::default()
            },
        };
        let listed = serde_json::to_value(to_mcp(&definition).unwrap()).unwrap();
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
    fn a_non_object_schema_is_refused() {
        let definition = ToolDefinition {
            name: "x".into(),
            description: "X.".into(),
            parameters: json!({"type": "string"}),
            annotations: ToolAnnotations::default(),
        };
        assert!(to_mcp(&definition).is_none());
    }
}
