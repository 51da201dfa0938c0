//! OpenAI's strict mode (structured outputs for function calling): every object closed, every
//! property required — an optional one also accepting `null`, which the [`Plan`] records for
//! the normaliser —, `oneOf` as `anyOf`, and the keywords strict mode enforces kept as keywords.
//!
//! What strict mode takes, from OpenAI's "Supported schemas"
//! (<https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>): the types,
//! `enum`, `const`, `anyOf`, `$defs` and `$ref` (recursion included); for strings `pattern` and
//! the formats `date-time`, `time`, `date`, `duration`, `email`, `hostname`, `ipv4`, `ipv6`,
//! `uuid`; for numbers `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//! `multipleOf`; for arrays `minItems`, `maxItems`. Not `allOf`, `not`, `if`/`then`/`else`,
//! `dependentRequired`, `dependentSchemas`.

use serde_json::{Map, Value};

use super::normalise::{Normaliser, Plan};
use super::walk::{
    FREE_FORM_MAP, UNSUPPORTED, Walk, describe, is_null_schema, is_number_format, is_object_schema,
    items_of, list_of, map_of, null_schema, write_format_range,
};
use super::{SchemaDialect, SchemaError};

/// Keywords strict mode enforces: kept as they are.
const KEPT: &[&str] = &[
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// Keywords strict mode does not take: they move into the description, so the model still
/// reads them (the agent still enforces the constraints among them).
const DESCRIBED: &[&str] = &[
    "minLength",
    "maxLength",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "default",
    "examples",
    "contentEncoding",
    "contentMediaType",
];

/// The string formats strict mode enforces.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Converts `schema` to strict mode; the normaliser for the `null`s it added, if any.
pub(super) fn convert(schema: &Value) -> Result<(Value, Option<Normaliser>), SchemaError> {
    let mut strict = Strict {
        walk: Walk::new(SchemaDialect::OpenAiStrict, schema),
        defs: Vec::new(),
    };
    let (converted, plan) = strict.node(schema)?;
    let normaliser = Normaliser::new(plan, std::mem::take(&mut strict.defs), &converted)
        .map_err(|reason| strict.walk.error(reason))?;
    Ok((converted, normaliser))
}

struct Strict<'a> {
    walk: Walk<'a>,
    /// The plans of the definitions converted so far.
    defs: Vec<(String, Plan)>,
}

impl<'a> AsMut<Walk<'a>> for Strict<'a> {
    fn as_mut(&mut self) -> &mut Walk<'a> {
        &mut self.walk
    }
}

impl Strict<'_> {
    fn node(&mut self, schema: &Value) -> Result<(Value, Plan), SchemaError> {
        let node = self.walk.as_object(schema)?;
        let node = self.walk.merge_all_of(node)?;
        let mut out = Map::new();
        let mut plan = Plan::default();
        let mut notes = Vec::new();
        let mut number_format = None;
        let mut properties = None;
        for (key, value) in node.iter() {
            match key.as_str() {
                "type" | "enum" | "const" | "description" | "title" => {
                    out.insert(key.clone(), value.clone());
                }
                "$ref" => {
                    if let Some(name) = value.as_str().and_then(local_definition) {
                        plan.reference(name.to_owned());
                    }
                    out.insert(key.clone(), value.clone());
                }
                "properties" => {
                    properties = Some(map_of(self, key, value, Self::node)?);
                    // filled in below, in this place
                    out.insert(key.clone(), Value::Null);
                }
                "$defs" | "definitions" => {
                    let converted = map_of(self, key, value, Self::node)?;
                    let mut defs = Map::with_capacity(converted.len());
                    for (name, (schema, def_plan)) in converted {
                        defs.insert(name.clone(), schema);
                        self.defs.push((name, def_plan));
                    }
                    out.insert(key.clone(), Value::Object(defs));
                }
                "required" => {} // rebuilt below: strict mode requires every property
                "additionalProperties" if value != &Value::Bool(false) => {
                    return Err(self.walk.error(FREE_FORM_MAP));
                }
                "additionalProperties" => {}
                "items" => {
                    let (items, items_plan) = items_of(self, value, Self::node)?;
                    out.insert(key.clone(), items);
                    plan.items(items_plan);
                }
                "prefixItems" => return Err(self.walk.error("a tuple (`prefixItems`)")),
                "anyOf" | "oneOf" => {
                    if out.contains_key("anyOf") {
                        return Err(self.walk.error("both `anyOf` and `oneOf`"));
                    }
                    let members = list_of(self, key, value, Self::node)?;
                    out.insert(
                        "anyOf".to_owned(),
                        Value::Array(members.iter().map(|(m, _)| m.clone()).collect()),
                    );
                    plan.any_of(members);
                }
                "format" => match value.as_str() {
                    Some(format) if FORMATS.contains(&format) => {
                        out.insert(key.clone(), value.clone());
                    }
                    // what the Rust number type implies: its range as bounds, if narrow
                    Some(format) if is_number_format(format) => number_format = Some(format),
                    _ => notes.push((key.as_str(), value)),
                },
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k if DESCRIBED.contains(&k) => notes.push((key.as_str(), value)),
                k if UNSUPPORTED.contains(&k) => {
                    return Err(self.walk.error(format!("the keyword `{k}`")));
                }
                _ => {} // annotations strict mode does not take: `$schema`, `$comment`, ...
            }
        }
        if let Some(format) = number_format {
            write_format_range(&mut out, format);
        }
        describe(&mut out, &notes);

        // strict mode refuses `$ref` with sibling keywords
        if out.contains_key("$ref") && out.len() > 1 {
            if out.contains_key("anyOf") {
                return Err(self.walk.error("a reference beside `anyOf`"));
            }
            let reference = out.shift_remove("$ref").unwrap_or_default();
            let mut inner = Map::new();
            inner.insert("$ref".to_owned(), reference);
            out.insert("anyOf".to_owned(), Value::Array(vec![Value::Object(inner)]));
        }

        if properties.is_some() || is_object_schema(&out) {
            let required: Vec<&str> = node
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut closed = Map::new();
            let mut all = Vec::new();
            for (name, (mut property, property_plan)) in properties.unwrap_or_default() {
                if !required.contains(&name.as_str()) && !self.accepts_null(&property, 0) {
                    property = nullable(property);
                    plan.null(&name);
                }
                plan.property(&name, property_plan);
                all.push(Value::from(name.as_str()));
                closed.insert(name, property);
            }
            out.insert("properties".to_owned(), Value::Object(closed));
            out.insert("required".to_owned(), Value::Array(all));
            out.insert("additionalProperties".to_owned(), Value::Bool(false));
        }
        Ok((Value::Object(out), plan))
    }

    /// Whether `schema` (converted) already accepts `null`, looking through references.
    fn accepts_null(&self, schema: &Value, depth: usize) -> bool {
        let Some(node) = schema.as_object() else {
            return schema == &Value::Bool(true);
        };
        // a cycle of references: say no, and the property gets a `null` of its own
        if depth > 32 {
            return false;
        }
        let mut accepts = true;
        if let Some(types) = node.get("type") {
            accepts &= match types {
                Value::String(t) => t == "null",
                Value::Array(types) => types.iter().any(|t| t == "null"),
                _ => false,
            };
        }
        if let Some(values) = node.get("enum") {
            accepts &= values.as_array().is_some_and(|v| v.contains(&Value::Null));
        }
        if let Some(value) = node.get("const") {
            accepts &= value.is_null();
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(members) = node.get(keyword) {
                accepts &= members
                    .as_array()
                    .is_some_and(|m| m.iter().any(|m| self.accepts_null(m, depth + 1)));
            }
        }
        if let Some(reference) = node.get("$ref") {
            accepts &= self
                .walk
                .definition(reference)
                .is_ok_and(|(_, target)| self.accepts_null(target, depth + 1));
        }
        accepts
    }
}

/// The name of the local definition `reference` points at (`#/$defs/Name`).
fn local_definition(reference: &str) -> Option<&str> {
    reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))
}

/// The schema, also accepting `null` (an optional property under strict mode).
fn nullable(schema: Value) -> Value {
    let Value::Object(mut node) = schema else {
        return schema;
    };
    let null = Value::from("null");
    let add_null_to_enum = |node: &mut Map<String, Value>| {
        if let Some(constant) = node.shift_remove("const") {
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
    // a reference: wrap it, keeping its annotations outside
    let mut outer = Map::new();
    for key in ["description", "title"] {
        if let Some(value) = node.shift_remove(key) {
            outer.insert(key.to_owned(), value);
        }
    }
    outer.insert(
        "anyOf".to_owned(),
        Value::Array(vec![Value::Object(node), null_schema()]),
    );
    Value::Object(outer)
}
