//! Schema dialects: the parameter schemas reticent generates, rewritten into the subset of JSON
//! Schema a model provider accepts.
//!
//! Tools describe their parameters in standard JSON Schema (draft 2020-12, as schemars writes
//! it). Some providers accept only part of it: OpenAI's strict mode wants every object closed
//! and every property required, Gemini takes a subset of the OpenAPI 3.0 schema object without
//! references. A [`Model`](crate::Model) names the dialect it needs with
//! [`Model::schema_dialect`](crate::Model::schema_dialect), and [`AgentBuilder::build`]
//! converts every tool's schema once, so a schema the provider cannot take is refused when the
//! agent is built ([`BuildError::UnsupportedSchema`]), never in the middle of a run.
//!
//! ```
//! use reticent::SchemaDialect;
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {
//!         "city": {"type": "string", "description": "The city."},
//!         "days": {"type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 16}
//!     },
//!     "required": ["city"],
//!     "additionalProperties": false
//! });
//! assert_eq!(
//!     SchemaDialect::OpenAiStrict.convert(&schema)?,
//!     json!({
//!         "type": "object",
//!         "properties": {
//!             "city": {"type": "string", "description": "The city."},
//!             "days": {"type": ["integer", "null"],
//!                      "description": "format: uint8; minimum: 0; maximum: 16"}
//!         },
//!         "required": ["city", "days"],
//!         "additionalProperties": false
//!     })
//! );
//! assert_eq!(
//!     SchemaDialect::Gemini.convert(&schema)?,
//!     json!({
//!         "type": "object",
//!         "properties": {
//!             "city": {"type": "string", "description": "The city."},
//!             "days": {"type": "integer", "nullable": true, "minimum": 0, "maximum": 16,
//!                      "description": "format: uint8"}
//!         },
//!         "required": ["city"]
//!     })
//! );
//! # Ok::<(), reticent::SchemaError>(())
//! ```
//!
//! [`AgentBuilder::build`]: crate::AgentBuilder::build
//! [`BuildError::UnsupportedSchema`]: crate::BuildError::UnsupportedSchema

use std::borrow::Cow;
use std::fmt;

use serde_json::{Map, Value};

use crate::tool::ToolDefinition;

/// The flavor of JSON Schema a model provider accepts for tool parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SchemaDialect {
    /// JSON Schema as reticent generates it, unchanged. Anthropic, and OpenAI-compatible
    /// servers without strict mode, take it as it is.
    #[default]
    Standard,
    /// OpenAI's strict mode (structured outputs for function calling): every object has
    /// `additionalProperties: false`, every property is listed in `required` and optional ones
    /// also accept `null`, `oneOf` becomes `anyOf`, and keywords strict mode does not enforce
    /// (`format`, `minimum`, `maximum`, `pattern`, `minLength`, `maxItems`, `default`, ...) move
    /// into the `description`, so the model still reads them. Free-form maps, values of any
    /// type and tuples are refused.
    OpenAiStrict,
    /// Gemini's function declarations (a subset of the OpenAPI 3.0 schema object): `$ref`s are
    /// inlined and recursive types refused, unions with `null` become `nullable: true`, `oneOf`
    /// becomes `anyOf`, `additionalProperties: false` is dropped, and keywords Gemini does not
    /// know (`exclusiveMinimum`, `multipleOf`, formats other than `int32`, `int64`, `float`,
    /// `double`, `date-time` and `enum`, non-string enums, ...) move into the `description`.
    /// Free-form maps, values of any type and tuples are refused.
    Gemini,
}

impl SchemaDialect {
    /// The dialect's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Standard => "standard JSON Schema",
            Self::OpenAiStrict => "OpenAI strict mode",
            Self::Gemini => "Gemini",
        }
    }

    /// Converts a parameter schema (whose root is an object) to this dialect.
    ///
    /// Converting a schema that is already in the dialect returns it unchanged.
    pub fn convert(self, schema: &Value) -> Result<Value, SchemaError> {
        let mut converter = Converter {
            dialect: self,
            defs: schema.get("$defs").or_else(|| schema.get("definitions")),
            path: Vec::new(),
            expanding: Vec::new(),
        };
        match self {
            Self::Standard => Ok(schema.clone()),
            Self::OpenAiStrict => converter.openai(schema),
            Self::Gemini => converter.gemini(schema),
        }
    }

    /// The same tool definition with its parameters converted to this dialect.
    pub fn convert_definition(
        self,
        definition: &ToolDefinition,
    ) -> Result<ToolDefinition, SchemaError> {
        Ok(ToolDefinition {
            parameters: self.convert(&definition.parameters)?,
            ..definition.clone()
        })
    }
}

impl fmt::Display for SchemaDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a schema could not be converted to a [`SchemaDialect`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    dialect: SchemaDialect,
    path: String,
    reason: String,
}

impl SchemaError {
    /// The dialect the schema was being converted to.
    pub fn dialect(&self) -> SchemaDialect {
        self.dialect
    }

    /// Where in the schema, as a JSON pointer (`/properties/tags`); empty for the root.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What could not be expressed.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() {
            "the root".to_owned()
        } else {
            format!("`{}`", self.path)
        };
        write!(f, "{} cannot express {at}: {}", self.dialect, self.reason)
    }
}

impl std::error::Error for SchemaError {}

/// Keywords with subschemas that no dialect here can express.
const UNSUPPORTED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "dependentSchemas",
    "dependentRequired",
    "contains",
    "minContains",
    "maxContains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
    "$recursiveRef",
];

/// Validation keywords OpenAI's strict mode does not take; they move into the description.
const OPENAI_MOVED: &[&str] = &[
    "format",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "default",
    "examples",
    "contentEncoding",
    "contentMediaType",
];

/// Keywords Gemini's schema object has, kept as they are.
const GEMINI_KEPT: &[&str] = &[
    "description",
    "title",
    "nullable",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "minProperties",
    "maxProperties",
    "default",
    "example",
    "propertyOrdering",
];

/// Validation keywords Gemini does not take; they move into the description.
const GEMINI_MOVED: &[&str] = &[
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "uniqueItems",
    "examples",
    "contentEncoding",
    "contentMediaType",
];

const FREE_FORM_MAP: &str =
    "a free-form map (`additionalProperties` other than false); use a struct with named fields";

/// The formats Gemini documents.
const GEMINI_FORMATS: &[&str] = &["int32", "int64", "float", "double", "date-time", "enum"];

struct Converter<'a> {
    dialect: SchemaDialect,
    defs: Option<&'a Value>,
    path: Vec<String>,
    /// The definitions being inlined (Gemini), to refuse recursion.
    expanding: Vec<String>,
}

impl Converter<'_> {
    fn error(&self, reason: impl Into<String>) -> SchemaError {
        let mut path = String::new();
        for segment in &self.path {
            path.push('/');
            path.push_str(&segment.replace('~', "~0").replace('/', "~1"));
        }
        SchemaError {
            dialect: self.dialect,
            path,
            reason: reason.into(),
        }
    }

    fn at<T>(
        &mut self,
        segments: &[&str],
        f: impl FnOnce(&mut Self) -> Result<T, SchemaError>,
    ) -> Result<T, SchemaError> {
        let depth = self.path.len();
        self.path.extend(segments.iter().map(|s| (*s).to_owned()));
        let result = f(self);
        self.path.truncate(depth);
        result
    }

    fn as_object<'v>(&self, schema: &'v Value) -> Result<&'v Map<String, Value>, SchemaError> {
        match schema {
            Value::Object(object) => Ok(object),
            Value::Bool(true) => Err(self.error(
                "a value of any type (give the parameter a concrete type instead of a free-form value)",
            )),
            Value::Bool(false) => Err(self.error("a schema that accepts no value")),
            _ => Err(self.error("a schema that is not a JSON object")),
        }
    }

    /// `allOf` with one subschema is that subschema with the node's own keywords on top.
    fn merge_all_of<'v>(
        &self,
        node: &'v Map<String, Value>,
    ) -> Result<Cow<'v, Map<String, Value>>, SchemaError> {
        let Some(all_of) = node.get("allOf") else {
            return Ok(Cow::Borrowed(node));
        };
        match all_of.as_array().map(Vec::as_slice) {
            Some([only]) => {
                let only = self.as_object(only)?;
                Ok(Cow::Owned(overlay(only, node, "allOf")))
            }
            _ => Err(self.error("`allOf` with several subschemas")),
        }
    }

    fn map_of(
        &mut self,
        keyword: &str,
        value: &Value,
        convert: fn(&mut Self, &Value) -> Result<Value, SchemaError>,
    ) -> Result<Value, SchemaError> {
        let Some(map) = value.as_object() else {
            return Err(self.error(format!("`{keyword}` that is not an object")));
        };
        let mut out = Map::with_capacity(map.len());
        for (name, schema) in map {
            let converted = self.at(&[keyword, name], |c| convert(c, schema))?;
            out.insert(name.clone(), converted);
        }
        Ok(Value::Object(out))
    }

    fn list_of(
        &mut self,
        keyword: &str,
        value: &Value,
        convert: fn(&mut Self, &Value) -> Result<Value, SchemaError>,
    ) -> Result<Vec<Value>, SchemaError> {
        let Some(list) = value.as_array() else {
            return Err(self.error(format!("`{keyword}` that is not an array")));
        };
        let mut out = Vec::with_capacity(list.len());
        for (i, schema) in list.iter().enumerate() {
            let index = i.to_string();
            out.push(self.at(&[keyword, &index], |c| convert(c, schema))?);
        }
        Ok(out)
    }

    /// `items` of an array schema: one schema for every item. A tuple (`items` as an array)
    /// is refused.
    fn items_of(
        &mut self,
        value: &Value,
        convert: fn(&mut Self, &Value) -> Result<Value, SchemaError>,
    ) -> Result<Value, SchemaError> {
        if value.is_array() {
            return Err(self.error("a tuple (`items` as an array)"));
        }
        self.at(&["items"], |c| convert(c, value))
    }

    // ---- OpenAI strict mode ----------------------------------------------------------------

    fn openai(&mut self, schema: &Value) -> Result<Value, SchemaError> {
        let node = self.as_object(schema)?;
        let node = self.merge_all_of(node)?;
        let mut out = Map::new();
        let mut notes = Vec::new();
        for (key, value) in node.iter() {
            match key.as_str() {
                "type" | "enum" | "const" | "description" | "title" | "$ref" => {
                    out.insert(key.clone(), value.clone());
                }
                "properties" | "$defs" | "definitions" => {
                    let converted = self.map_of(key, value, Self::openai)?;
                    out.insert(key.clone(), converted);
                }
                "required" => {} // rebuilt below: strict mode requires every property
                "additionalProperties" if value != &Value::Bool(false) => {
                    return Err(self.error(FREE_FORM_MAP));
                }
                "additionalProperties" => {}
                "items" => {
                    let converted = self.items_of(value, Self::openai)?;
                    out.insert(key.clone(), converted);
                }
                "prefixItems" => return Err(self.error("a tuple (`prefixItems`)")),
                "anyOf" | "oneOf" => {
                    if out.contains_key("anyOf") {
                        return Err(self.error("both `anyOf` and `oneOf`"));
                    }
                    let converted = self.list_of(key, value, Self::openai)?;
                    out.insert("anyOf".to_owned(), Value::Array(converted));
                }
                k if OPENAI_MOVED.contains(&k) => notes.push((key.as_str(), value)),
                k if UNSUPPORTED.contains(&k) => {
                    return Err(self.error(format!("the keyword `{k}`")));
                }
                _ => {} // annotations strict mode does not take: `$schema`, `$comment`, ...
            }
        }

        // strict mode refuses `$ref` with sibling keywords
        if out.contains_key("$ref") && out.len() > 1 {
            let reference = out.remove("$ref").unwrap_or_default();
            let mut inner = Map::new();
            inner.insert("$ref".to_owned(), reference);
            if let Some(any_of) = out.get_mut("anyOf").and_then(Value::as_array_mut) {
                any_of.insert(0, Value::Object(inner));
            } else {
                out.insert("anyOf".to_owned(), Value::Array(vec![Value::Object(inner)]));
            }
        }

        if is_object_schema(&out) {
            let required: Vec<&str> = node
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let properties = out
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            let mut all = Vec::new();
            if let Some(properties) = properties.as_object_mut() {
                for (name, property) in properties.iter_mut() {
                    if !required.contains(&name.as_str()) {
                        *property = nullable_openai(std::mem::take(property));
                    }
                    all.push(Value::from(name.as_str()));
                }
            }
            out.insert("required".to_owned(), Value::Array(all));
            out.insert("additionalProperties".to_owned(), Value::Bool(false));
        }
        describe(&mut out, &notes);
        Ok(Value::Object(out))
    }

    // ---- Gemini ----------------------------------------------------------------------------

    fn gemini(&mut self, schema: &Value) -> Result<Value, SchemaError> {
        let node = self.as_object(schema)?;
        let mut node = self.merge_all_of(node)?.into_owned();
        let mut nullable = node.get("nullable") == Some(&Value::Bool(true));

        // unions with null become `nullable`; a union of one is its only member
        for keyword in ["anyOf", "oneOf"] {
            let Some(list) = node.get(keyword) else {
                continue;
            };
            let Some(list) = list.as_array() else {
                return Err(self.error(format!("`{keyword}` that is not an array")));
            };
            let members: Vec<&Value> = list.iter().filter(|m| !is_null_schema(m)).collect();
            nullable |= members.len() < list.len();
            match members.as_slice() {
                [] => return Err(self.error("a value that can only be null")),
                [only] => {
                    let only = self.as_object(only)?;
                    node = overlay(only, &node, keyword);
                }
                _ => {
                    let members = members.into_iter().cloned().collect();
                    node.insert(keyword.to_owned(), Value::Array(members));
                }
            }
        }

        // references are inlined; a type that contains itself cannot be
        if let Some(reference) = node.get("$ref") {
            let Some(reference) = reference.as_str() else {
                return Err(self.error("`$ref` that is not a string"));
            };
            let name = reference
                .strip_prefix("#/$defs/")
                .or_else(|| reference.strip_prefix("#/definitions/"))
                .ok_or_else(|| {
                    self.error(format!(
                        "the reference `{reference}` (only local definitions can be inlined)"
                    ))
                })?
                .to_owned();
            if self.expanding.contains(&name) {
                return Err(self.error(format!(
                    "the recursive type `{name}` (Gemini has no references, and a recursive type cannot be inlined)"
                )));
            }
            let target = self.defs.and_then(|defs| defs.get(&name)).ok_or_else(|| {
                self.error(format!(
                    "the reference `{reference}`, which has no definition"
                ))
            })?;
            let target = self.as_object(target)?;
            let mut merged = overlay(target, &node, "$ref");
            if nullable {
                merged.insert("nullable".to_owned(), Value::Bool(true));
            }
            self.expanding.push(name);
            let result = self.gemini(&Value::Object(merged));
            self.expanding.pop();
            return result;
        }

        let mut out = Map::new();
        let mut notes: Vec<(&str, &Value)> = Vec::new();
        let mut moved: Vec<(String, Value)> = Vec::new();
        for (key, value) in node.iter() {
            match key.as_str() {
                "type" => match value {
                    Value::String(t) if t == "null" => {
                        return Err(self.error("a value that can only be null"));
                    }
                    Value::String(_) => {
                        out.insert(key.clone(), value.clone());
                    }
                    Value::Array(types) => {
                        let named: Vec<&Value> = types
                            .iter()
                            .filter(|t| t.as_str() != Some("null"))
                            .collect();
                        nullable |= named.len() < types.len();
                        match named.as_slice() {
                            [] => return Err(self.error("a value that can only be null")),
                            [only] => {
                                out.insert(key.clone(), (*only).clone());
                            }
                            several => {
                                let members = several
                                    .iter()
                                    .map(|t| {
                                        let mut m = Map::new();
                                        m.insert("type".to_owned(), (*t).clone());
                                        Value::Object(m)
                                    })
                                    .collect();
                                out.insert("anyOf".to_owned(), Value::Array(members));
                            }
                        }
                    }
                    _ => return Err(self.error("`type` that is not a string or an array")),
                },
                "enum" => {
                    let Some(values) = value.as_array() else {
                        return Err(self.error("`enum` that is not an array"));
                    };
                    let named: Vec<&Value> = values.iter().filter(|v| !v.is_null()).collect();
                    nullable |= named.len() < values.len();
                    if named.iter().all(|v| v.is_string()) {
                        out.insert(
                            key.clone(),
                            Value::Array(named.into_iter().cloned().collect()),
                        );
                    } else {
                        moved.push((
                            key.clone(),
                            Value::Array(named.into_iter().cloned().collect()),
                        ));
                    }
                }
                "const" => {
                    if value.is_string() {
                        out.insert("enum".to_owned(), Value::Array(vec![value.clone()]));
                        out.entry("type").or_insert_with(|| Value::from("string"));
                    } else if value.is_null() {
                        nullable = true;
                    } else {
                        notes.push(("value", value));
                    }
                }
                "format" => {
                    if value.as_str().is_some_and(|f| GEMINI_FORMATS.contains(&f)) {
                        out.insert(key.clone(), value.clone());
                    } else {
                        notes.push(("format", value));
                    }
                }
                "properties" => {
                    let converted = self.map_of(key, value, Self::gemini)?;
                    out.insert(key.clone(), converted);
                }
                "required" => {
                    out.insert(key.clone(), value.clone());
                }
                "additionalProperties" if value != &Value::Bool(false) => {
                    return Err(self.error(FREE_FORM_MAP));
                }
                "additionalProperties" => {}
                "items" => {
                    let converted = self.items_of(value, Self::gemini)?;
                    out.insert(key.clone(), converted);
                }
                "prefixItems" => return Err(self.error("a tuple (`prefixItems`)")),
                "anyOf" | "oneOf" => {
                    if out.contains_key("anyOf") {
                        return Err(self.error(
                            "both `anyOf` and `oneOf`, or a union of types beside `anyOf`",
                        ));
                    }
                    let converted = self.list_of(key, value, Self::gemini)?;
                    out.insert("anyOf".to_owned(), Value::Array(converted));
                }
                "$defs" | "definitions" | "nullable" => {} // inlined; set below
                k if GEMINI_KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k if GEMINI_MOVED.contains(&k) => notes.push((key.as_str(), value)),
                k if UNSUPPORTED.contains(&k) => {
                    return Err(self.error(format!("the keyword `{k}`")));
                }
                _ => {} // annotations Gemini does not take: `$schema`, `$comment`, ...
            }
        }
        if out.contains_key("enum") {
            out.entry("type").or_insert_with(|| Value::from("string"));
        }
        if nullable {
            out.insert("nullable".to_owned(), Value::Bool(true));
        }
        let mut all_notes: Vec<(&str, &Value)> =
            moved.iter().map(|(k, v)| (k.as_str(), v)).collect();
        all_notes.extend(notes);
        describe(&mut out, &all_notes);
        Ok(Value::Object(out))
    }
}

/// `base` with the keywords of `node` on top, except `consumed`.
fn overlay(
    base: &Map<String, Value>,
    node: &Map<String, Value>,
    consumed: &str,
) -> Map<String, Value> {
    let mut merged = base.clone();
    for (key, value) in node {
        if key != consumed {
            merged.insert(key.clone(), value.clone());
        }
    }
    merged
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
        && schema.as_object().is_some_and(|o| {
            o.keys()
                .all(|k| matches!(k.as_str(), "type" | "description" | "title"))
        })
}

fn is_object_schema(node: &Map<String, Value>) -> bool {
    match node.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => node.contains_key("properties"),
    }
}

/// The schema, also accepting `null` (an optional property under strict mode).
fn nullable_openai(schema: Value) -> Value {
    let Value::Object(mut node) = schema else {
        return schema;
    };
    let null = Value::from("null");
    let add_null_to_enum = |node: &mut Map<String, Value>| {
        if let Some(constant) = node.remove("const") {
            node.insert("enum".to_owned(), Value::Array(vec![constant, Value::Null]));
        } else if let Some(values) = node.get_mut("enum").and_then(Value::as_array_mut)
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
    };
    match node.get_mut("type") {
        Some(Value::String(t)) => {
            if t != "null" {
                let t = std::mem::take(t);
                node.insert("type".to_owned(), Value::Array(vec![Value::from(t), null]));
                add_null_to_enum(&mut node);
            }
            return Value::Object(node);
        }
        Some(Value::Array(types)) => {
            if !types.contains(&null) {
                types.push(null);
                add_null_to_enum(&mut node);
            }
            return Value::Object(node);
        }
        _ => {}
    }
    if let Some(any_of) = node.get_mut("anyOf").and_then(Value::as_array_mut) {
        if !any_of.iter().any(is_null_schema) {
            any_of.push(null_schema());
        }
        return Value::Object(node);
    }
    if node.contains_key("enum") || node.contains_key("const") {
        add_null_to_enum(&mut node);
        return Value::Object(node);
    }
    // a reference or an untyped schema: wrap it, keeping its annotations outside
    let mut outer = Map::new();
    for key in ["description", "title"] {
        if let Some(value) = node.remove(key) {
            outer.insert(key.to_owned(), value);
        }
    }
    outer.insert(
        "anyOf".to_owned(),
        Value::Array(vec![Value::Object(node), null_schema()]),
    );
    Value::Object(outer)
}

fn null_schema() -> Value {
    let mut node = Map::new();
    node.insert("type".to_owned(), Value::from("null"));
    Value::Object(node)
}

/// Appends `key: value` notes for keywords the dialect moved out of the schema.
fn describe(out: &mut Map<String, Value>, notes: &[(&str, &Value)]) {
    if notes.is_empty() {
        return;
    }
    let notes = notes
        .iter()
        .map(|(key, value)| match value {
            Value::String(s) => format!("{key}: {s}"),
            other => format!("{key}: {other}"),
        })
        .collect::<Vec<_>>()
        .join("; ");
    let description = match out.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.is_empty() => format!("{existing} ({notes})"),
        _ => notes,
    };
    out.insert("description".to_owned(), Value::from(description));
}
