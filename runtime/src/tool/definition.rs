//! [`ToolDefinition`] and [`ToolAnnotations`]: what the model is told about a tool.

use serde::{Deserialize, Serialize};

/// What the model is told about a tool.
///
/// Built by `#[tool]` (once per tool); for a tool written by hand, start from
/// [`ToolDefinition::new`]:
///
/// ```
/// use reticent::{ToolAnnotations, ToolDefinition, tool::ParametersSchema};
///
/// let mut parameters = ParametersSchema::new();
/// parameters.parameter::<String>("city", Some("The city."), true);
/// let definition = ToolDefinition::new("weather", "The weather in a city.", parameters.finish())
///     .with_annotations(ToolAnnotations::new().read_only(true).open_world(true))
///     .with_title("Weather");
/// assert_eq!(definition.name, "weather");
/// assert!(definition.annotations.read_only);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolDefinition {
    /// The name the model calls the tool by (`^[a-zA-Z0-9_-]{1,64}$`).
    pub name: String,
    /// A human-readable title (`#[tool(title = "..")]`), for user interfaces such as MCP
    /// clients' tool lists; models are offered the name and description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, from the function's doc comment.
    pub description: String,
    /// The JSON Schema of the arguments; its root is always an object.
    pub parameters: serde_json::Value,
    /// The JSON Schema of the tool's structured output, when it has one (its root is an
    /// object, as MCP requires).
    ///
    /// `#[tool]` sets it when the output type (the `T` of a `Result<T, E>`) implements
    /// `schemars::JsonSchema`, unless `#[tool(output_schema = false)]`; a tool that returns
    /// nothing has none. When the output's own schema is not an object (a string, a list, an
    /// enum), the output schema wraps it — `{"type": "object", "properties": {"result":
    /// SCHEMA}, "required": ["result"], "x-reticent-wrap-result": true}` — and the output is
    /// sent as structured content in the same wrapping, `{"result": OUTPUT}` (see
    /// [`wraps_output`](Self::wraps_output)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
    /// Hints about the tool's behavior.
    #[serde(default)]
    pub annotations: ToolAnnotations,
    /// Whether an MCP server answers a call of the tool with a task the client follows
    /// (`#[tool(task)]`), for tools that run long: see `docs/mcp.md`, "Long-running tools as
    /// tasks". Only `reticent::mcp::McpServer` reads it, and only for clients that
    /// support tasks; anywhere else the tool is called as any other. `false` by default.
    #[serde(default, skip_serializing_if = "is_false")]
    pub task: bool,
    /// Whether the tool's output is content blocks ([`reticent::content`](crate::content)):
    /// the JSON of one block, or of a list of them, as MCP writes them. An MCP server sends
    /// them as the result's content blocks, with no `structuredContent` and no output schema;
    /// an agent shows the model a description of them (text as it is, a note of the type and
    /// size of an image, audio or a binary resource) and gives the caller the whole output.
    ///
    /// `#[tool]` sets it when the output type is one of the content types (the `T` of a
    /// `Result<T, E>`), decided by type when the crate compiles. `false` by default.
    #[serde(default, skip_serializing_if = "is_false")]
    pub content_output: bool,
    /// The reconcile hook (`#[tool(reconcile = path)]`): see
    /// [`with_reconcile`](Self::with_reconcile). Not part of what the model is offered.
    #[serde(skip)]
    pub(crate) reconcile: Option<super::reconcile::Hook>,
}

/// Whether a flag is unset, so that it is left out of the definition's JSON.
fn is_false(flag: &bool) -> bool {
    !*flag
}

impl ToolDefinition {
    /// The keyword of an output schema that wraps the tool's output as `{"result": OUTPUT}`,
    /// set to `true` (see [`output_schema`](Self::output_schema)).
    pub const WRAPPED_OUTPUT: &'static str = "x-reticent-wrap-result";

    /// Whether the output schema wraps the tool's output: its root is `{"type": "object",
    /// "properties": {"result": SCHEMA}, ..}` with [`WRAPPED_OUTPUT`](Self::WRAPPED_OUTPUT)
    /// set, and structured content that conforms to it is `{"result": OUTPUT}`. `false` when
    /// there is no output schema, or its root is the output's own object schema.
    ///
    /// ```
    /// use reticent::ToolDefinition;
    /// use serde_json::json;
    ///
    /// let definition = ToolDefinition::new("count", "Count.", json!({"type": "object"}))
    ///     .with_output_schema(json!({
    ///         "type": "object",
    ///         "properties": {"result": {"type": "integer"}},
    ///         "required": ["result"],
    ///         "x-reticent-wrap-result": true
    ///     }));
    /// assert!(definition.wraps_output());
    /// ```
    pub fn wraps_output(&self) -> bool {
        self.output_schema
            .as_ref()
            .and_then(|schema| schema.get(Self::WRAPPED_OUTPUT))
            == Some(&serde_json::Value::Bool(true))
    }

    /// A definition with this name, description and parameter schema (an object schema), no
    /// title, no output schema and the default annotations.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: serde_json::Value,
    ) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: description.into(),
            parameters,
            output_schema: None,
            annotations: ToolAnnotations::default(),
            task: false,
            content_output: false,
            reconcile: None,
        }
    }

    /// The same definition with these annotations.
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// The same definition with a human-readable title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same definition with the JSON Schema of the tool's structured output.
    #[must_use]
    pub fn with_output_schema(mut self, schema: serde_json::Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// The same definition, whose calls an MCP server answers with a task (see
    /// [`task`](Self::task)) when `task` is true.
    #[must_use]
    pub fn with_task(mut self, task: bool) -> Self {
        self.task = task;
        self
    }

    /// The same definition, whose output is content blocks (see
    /// [`content_output`](Self::content_output)) when `content` is true.
    #[must_use]
    pub fn with_content_output(mut self, content: bool) -> Self {
        self.content_output = content;
        self
    }

    /// The same definition with another parameter schema.
    #[must_use]
    pub fn with_parameters(mut self, parameters: serde_json::Value) -> Self {
        self.parameters = parameters;
        self
    }
}

/// Hints about a tool's behavior, as in the MCP tool annotations. All `false` by default.
///
/// ```
/// use reticent::ToolAnnotations;
///
/// let hints = ToolAnnotations::new().destructive(true).idempotent(true);
/// assert!(hints.destructive && hints.idempotent && !hints.read_only);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// The tool does not change anything.
    #[serde(default)]
    pub read_only: bool,
    /// The tool may destroy or overwrite data.
    #[serde(default)]
    pub destructive: bool,
    /// Calling the tool again with the same arguments has no further effect.
    #[serde(default)]
    pub idempotent: bool,
    /// The tool reaches outside the system (the web, email, third-party APIs).
    #[serde(default)]
    pub open_world: bool,
}

impl ToolAnnotations {
    /// All hints `false`.
    pub const fn new() -> Self {
        Self {
            read_only: false,
            destructive: false,
            idempotent: false,
            open_world: false,
        }
    }

    /// Sets whether the tool changes nothing.
    #[must_use]
    pub const fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Sets whether the tool may destroy or overwrite data.
    #[must_use]
    pub const fn destructive(mut self, destructive: bool) -> Self {
        self.destructive = destructive;
        self
    }

    /// Sets whether calling the tool again with the same arguments has no further effect.
    #[must_use]
    pub const fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// Sets whether the tool reaches outside the system.
    #[must_use]
    pub const fn open_world(mut self, open_world: bool) -> Self {
        self.open_world = open_world;
        self
    }
}
