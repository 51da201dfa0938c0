//! A tool's schemas: the parameter schema, one object whose properties are the parameters,
//! and the output schema.

use std::fmt;
use std::marker::PhantomData;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};

use super::ToolDefinition;
use super::args::ArgumentsOf;

/// Builds the root object schema of a tool's arguments, one parameter at a time.
///
/// The `#[tool]` macro drives it once per tool (the result is cached); it is public for tools
/// written by hand.
///
/// ```
/// use reticent::tool::ParametersSchema;
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
        Self {
            generator: generator(),
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
        self.insert(name, schema, required)
    }

    /// Adds the parameter `name` whose schema is `schema`.
    fn insert(&mut self, name: &str, schema: Schema, required: bool) -> &mut Self {
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

/// The settings every schema of a tool is generated with: JSON Schema 2020-12, without a
/// `$schema` keyword.
fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.meta_schema = None;
        })
        .into_generator()
}

/// How a type's schema is made: `<T as JsonSchema>::json_schema`. The schemas are built from
/// it by non-generic code, compiled once in this crate rather than once per tool.
pub(super) type MakeSchema = fn(&mut SchemaGenerator) -> Schema;

/// The schema `make` makes at the root, with the definitions it refers to in `$defs`.
fn root_schema(make: MakeSchema) -> Map<String, Value> {
    let mut generator = generator();
    let mut root = match make(&mut generator).to_value() {
        Value::Object(map) => map,
        // `true`: a schema that accepts anything (a `serde_json::Value`).
        Value::Bool(true) => Map::new(),
        // `false`: one that accepts nothing.
        _ => Map::from_iter([("not".to_owned(), Value::Object(Map::new()))]),
    };
    let defs = generator.take_definitions(true);
    if !defs.is_empty() {
        root.insert("$defs".into(), Value::Object(defs));
    }
    root
}

/// The parameter schema of a `#[tool]` whose parameters carry attributes: the schema of the
/// arguments struct it derives `JsonSchema` for, whose fields are the parameters. An object whose keys come in the order
/// [`ParametersSchema`] writes them, with `properties` even when there are none.
fn arguments_schema(make: MakeSchema) -> Value {
    let mut schema = root_schema(make);
    schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let mut root = Map::new();
    for key in ["type", "properties", "required", "additionalProperties"] {
        if let Some(value) = schema.shift_remove(key) {
            root.insert(key.to_owned(), value);
        }
    }
    let defs = schema.shift_remove("$defs");
    root.extend(schema);
    if let Some(defs) = defs {
        root.insert("$defs".to_owned(), defs);
    }
    Value::Object(root)
}

/// The parameter schema of a `#[tool]` whose parameters are a tuple of their types
/// (`params.rs`): what [`arguments_schema`] makes of the struct of those fields that derives
/// `JsonSchema` with `deny_unknown_fields` — each field's schema (`params`: how it is made,
/// whether it may be left out) under its name, with the title and description of its doc
/// comment (`docs`), the ones that may not be left out required.
pub(super) fn parameters_schema(
    params: &[(MakeSchema, bool)],
    names: &[&str],
    docs: &[(&str, &str)],
) -> Value {
    let mut root = ParametersSchema::new();
    for ((&(make, optional), &name), &(title, description)) in params.iter().zip(names).zip(docs) {
        let mut schema = make(&mut root.generator);
        for (key, text) in [("title", title), ("description", description)] {
            if !text.is_empty() {
                schema.insert(key.to_owned(), Value::from(text));
            }
        }
        root.insert(name, schema, !optional);
    }
    root.finish()
}

/// The output schema of a tool whose output is a `T`: `T`'s schema when its root is an object
/// (`"type": "object"`), as MCP requires; otherwise an object whose one property `result` is
/// `T`'s schema, marked `x-reticent-wrap-result`: `{"type": "object", "properties": {"result": ..},
/// "required": ["result"], "x-reticent-wrap-result": true}` (see
/// [`ToolDefinition::wraps_output`]).
fn output_schema(make: MakeSchema) -> Value {
    let mut schema = root_schema(make);
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        return Value::Object(schema);
    }
    // `$defs` stay at the root, where `#/$defs/..` points.
    let defs = schema.remove("$defs");
    let mut root = Map::new();
    root.insert("type".into(), Value::from("object"));
    root.insert(
        "properties".into(),
        Value::Object(Map::from_iter([(
            "result".to_owned(),
            Value::Object(schema),
        )])),
    );
    root.insert("required".into(), Value::Array(vec![Value::from("result")]));
    root.insert(ToolDefinition::WRAPPED_OUTPUT.into(), Value::Bool(true));
    if let Some(defs) = defs {
        root.insert("$defs".into(), defs);
    }
    Value::Object(root)
}

/// The output schema of a tool that returns `T`, when its output type implements `JsonSchema`:
/// `#[tool]` writes `(&&&OutputSchema::<T>::new()).output_schema()`, which picks, at compile
/// time, [`ResultOutputSchema`] for a `Result<O, E>` whose `O` is `JsonSchema` (however the
/// `Result` is spelled: an alias is the same type), else [`HasOutputSchema`] when `T` is
/// `JsonSchema`, else [`NoOutputSchema`].
pub struct OutputSchema<T: ?Sized>(PhantomData<fn() -> PhantomData<T>>);

impl<T: ?Sized> OutputSchema<T> {
    /// The marker for `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T: ?Sized> fmt::Debug for OutputSchema<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OutputSchema")
    }
}

/// The output schema of the `O` of a returned `Result<O, E>`; see [`OutputSchema`].
pub trait ResultOutputSchema {
    /// The output schema of the `Ok` type.
    fn output_schema(&self) -> Option<Value>;
}

impl<O: JsonSchema, E> ResultOutputSchema for &&OutputSchema<Result<O, E>> {
    fn output_schema(&self) -> Option<Value> {
        Some(output_schema(O::json_schema))
    }
}

/// The output schema of a `JsonSchema` output; see [`OutputSchema`].
pub trait HasOutputSchema {
    /// The output schema of the output type.
    fn output_schema(&self) -> Option<Value>;
}

impl<T: JsonSchema + ?Sized> HasOutputSchema for &OutputSchema<T> {
    fn output_schema(&self) -> Option<Value> {
        Some(output_schema(T::json_schema))
    }
}

/// No output schema, for an output type that is not `JsonSchema`; see [`OutputSchema`].
pub trait NoOutputSchema {
    /// `None`.
    fn output_schema(&self) -> Option<Value>;
}

impl<T: ?Sized> NoOutputSchema for OutputSchema<T> {
    fn output_schema(&self) -> Option<Value> {
        None
    }
}

/// The parameter schema of a `#[tool]`'s arguments struct; see [`ArgumentsOf`].
pub trait ArgumentsSchema {
    /// The schema of the arguments struct, as the tool's parameter schema.
    fn arguments_schema(&self) -> Value;
}

impl<T: JsonSchema> ArgumentsSchema for &ArgumentsOf<T> {
    fn arguments_schema(&self) -> Value {
        arguments_schema(T::json_schema)
    }
}

/// The fallback of [`ArgumentsSchema`], picked only when a parameter's type is not
/// `JsonSchema`: the crate then fails to compile with an error at that type, and this is never
/// run (see [`ArgumentsOf`]).
pub trait NoArgumentsSchema {
    /// Never returns.
    fn arguments_schema(&self) -> Value;
}

impl<T> NoArgumentsSchema for ArgumentsOf<T> {
    fn arguments_schema(&self) -> Value {
        // Evaluated only where this is used for a concrete `T`: a constant that does not
        // depend on `T` would fail every build of this crate.
        let () = NotJsonSchema::<T>::REFUSED;
        unreachable!()
    }
}

/// A constant whose evaluation fails, for each `T` it is evaluated for.
struct NotJsonSchema<T>(PhantomData<T>);

impl<T> NotJsonSchema<T> {
    const REFUSED: () = panic!("a `#[tool]`'s arguments struct does not implement `JsonSchema`");
}
