//! Building a tool's parameter schema: one object whose properties are the parameters.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value};

/// Builds the root object schema of a tool's arguments, one parameter at a time.
///
/// The `#[tool]` macro drives it once per tool (the result is cached); it is public for tools
/// written by hand.
///
/// ```
/// use reticent::ParametersSchema;
/// use serde_json::json;
///
/// let mut schema = ParametersSchema::new();
/// schema.parameter::<String>("city", Some("The city, like \"Oslo\"."), true);
/// schema.parameter::<Option<u8>>("days", None, false);
/// assert_eq!(
///     schema.finish(),
///     json!({
///         "type": "object",
///         "properties": {
///             "city": {"type": "string", "description": "The city, like \"Oslo\"."},
///             "days": {"type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 255}
///         },
///         "required": ["city"],
///         "additionalProperties": false
///     })
/// );
/// ```
#[derive(Debug)]
pub struct ParametersSchema {
    generator: SchemaGenerator,
    properties: Map<String, Value>,
    required: Vec<Value>,
}

impl Default for ParametersSchema {
    fn default() -> Self {
        Self::new()
    }
}

impl ParametersSchema {
    /// An object schema with no properties yet.
    pub fn new() -> Self {
        let settings = SchemaSettings::draft2020_12().with(|s| {
            s.meta_schema = None;
        });
        Self {
            generator: settings.into_generator(),
            properties: Map::new(),
            required: Vec::new(),
        }
    }

    /// Adds the parameter `name` of type `T`, with the parameter's doc comment as its
    /// description (which replaces the type's own), required or optional.
    pub fn parameter<T: JsonSchema>(
        &mut self,
        name: &str,
        description: Option<&str>,
        required: bool,
    ) -> &mut Self {
        let mut schema = self.generator.subschema_for::<T>();
        if let Some(description) = description {
            schema.insert("description".to_owned(), Value::from(description));
        }
        self.properties.insert(name.to_owned(), schema.to_value());
        if required {
            self.required.push(Value::from(name));
        }
        self
    }

    /// The finished schema: `{"type": "object", "properties": .., "required": ..,
    /// "additionalProperties": false}`, with `$defs` when a parameter's type needs them.
    pub fn finish(mut self) -> Value {
        let mut root = Map::new();
        root.insert("type".into(), Value::from("object"));
        root.insert("properties".into(), Value::Object(self.properties));
        if !self.required.is_empty() {
            root.insert("required".into(), Value::Array(self.required));
        }
        root.insert("additionalProperties".into(), Value::Bool(false));
        let defs = self.generator.take_definitions(true);
        if !defs.is_empty() {
            root.insert("$defs".into(), Value::Object(defs));
        }
        Value::Object(root)
    }
}
