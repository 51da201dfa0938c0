//! A [`ToolDefinition`] as `tools/list` describes it, and what a result carries besides text:
//! the structured content of a tool with an output schema, the content blocks of a content
//! tool.

use std::sync::Arc;

use rmcp::model::{Tool as McpTool, ToolAnnotations as McpAnnotations};
use serde_json::Value;

use crate::tool::{Tool, ToolDefinition};

/// The key that marks an output schema made for a non-object output: the schema describes
/// `{"result": OUTPUT}`, and so does the `structuredContent` of the tool's results.
pub(super) const WRAP_RESULT: &str = ToolDefinition::WRAPPED_OUTPUT;

/// The MCP description of `tool` (whose parameter schema the tool set checked is an object).
pub(super) fn to_mcp(tool: &dyn Tool) -> McpTool {
    describe(tool.definition(), tool.untrusted_output())
}

/// What a tool's results carry besides text: the shape of their `structuredContent`, or
/// content blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Output {
    /// The output itself, an object.
    Object,
    /// `{"result": output}`: the schema is marked [`WRAP_RESULT`].
    Wrapped,
    /// No `structuredContent`: the output is content blocks
    /// ([`ToolDefinition::content_output`]), sent as the result's content.
    Content,
}

/// Whether `tool` has no output schema, or one whose root is an object, as MCP requires.
pub(super) fn output_is_object(tool: &dyn Tool) -> bool {
    tool.definition()
        .output_schema
        .as_ref()
        .is_none_or(|schema| schema.get("type") == Some(&Value::from("object")))
}

/// What `tool`'s results carry besides text; `None` when it has no output schema and its
/// output is not content blocks (its results are text only).
pub(super) fn output(tool: &dyn Tool) -> Option<Output> {
    let definition = tool.definition();
    if definition.content_output {
        return Some(Output::Content);
    }
    definition.output_schema.as_ref()?;
    Some(if definition.wraps_output() {
        Output::Wrapped
    } else {
        Output::Object
    })
}

/// The `structuredContent` of a successful call: the output itself, or `{"result": output}`.
/// `Err` for an output that is not an object under an unmarked schema: the tool broke its own
/// schema, and the client would refuse the result.
pub(super) fn structured(shape: Output, output: Value) -> Result<Value, Value> {
    match shape {
        Output::Wrapped => {
            let mut wrapped = serde_json::Map::with_capacity(1);
            wrapped.insert("result".to_owned(), output);
            Ok(Value::Object(wrapped))
        }
        Output::Object if output.is_object() => Ok(output),
        Output::Object | Output::Content => Err(output),
    }
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
    // A content tool's results have no `structuredContent` for a schema to describe.
    if let Some(Value::Object(schema)) = &definition.output_schema
        && !definition.content_output
    {
        // The marker is reticent's own instruction, not a keyword clients know: the schema
        // listed describes exactly what `structuredContent` holds.
        let mut schema = schema.clone();
        schema.shift_remove(WRAP_RESULT);
        tool = tool.with_raw_output_schema(Arc::new(schema));
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
        assert!(listed.get("outputSchema").is_none(), "{listed}");
    }

    /// A tool that is only a definition.
    struct Structured(ToolDefinition);

    impl Tool for Structured {
        fn definition(&self) -> &ToolDefinition {
            &self.0
        }

        fn call(&self, _: Value, _: crate::ToolContext) -> crate::tool::ToolFuture<'_> {
            crate::tool::ToolFuture::ready(Ok(Value::Null))
        }
    }

    #[test]
    fn an_output_schema_is_listed_without_the_marker() {
        let wrapped = json!({
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
            WRAP_RESULT: true,
        });
        let definition = ToolDefinition::new(
            "count",
            "Count things.",
            json!({"type": "object", "properties": {}}),
        )
        .with_output_schema(wrapped.clone());
        let listed = serde_json::to_value(describe(&definition, false)).unwrap();
        assert_eq!(
            listed["outputSchema"],
            json!({
                "type": "object",
                "properties": {"result": {"type": "integer"}},
                "required": ["result"],
            })
        );

        assert_eq!(
            output(&Structured(definition.clone())),
            Some(Output::Wrapped)
        );
        let object = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let unwrapped = definition.clone().with_output_schema(object);
        assert_eq!(output(&Structured(unwrapped)), Some(Output::Object));
        let mut text_only = definition;
        text_only.output_schema = None;
        assert_eq!(output(&Structured(text_only)), None);
        assert_eq!(
            structured(Output::Wrapped, json!(3)),
            Ok(json!({"result": 3}))
        );
        assert_eq!(
            structured(Output::Object, json!({"n": 3})),
            Ok(json!({"n": 3}))
        );
        assert_eq!(structured(Output::Object, json!(3)), Err(json!(3)));
    }
}
