//! Gemini's function declarations: the `parameters` field takes a subset of the OpenAPI 3.0
//! schema object without references, so `$ref`s are inlined (a recursive type is refused),
//! unions with `null` become `nullable: true`, `oneOf` becomes `anyOf`, and keywords Gemini
//! lacks move into the `description`.
//!
//! What the schema object has, from Gemini's API reference
//! (<https://ai.google.dev/api/caching#Schema>): `type`, `format`, `title`, `description`,
//! `nullable`, `enum` (of strings), `items`, `minItems`, `maxItems`, `properties`, `required`,
//! `minProperties`, `maxProperties`, `minLength`, `maxLength`, `pattern`, `minimum`,
//! `maximum`, `anyOf`, `propertyOrdering`, `default`, `example`; formats `float`, `double`,
//! `int32`, `int64`, and for strings `enum` and `date-time`. No `$ref`, `const`,
//! `additionalProperties`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `uniqueItems`.
//!
//! Gemini adds no value a schema did not accept, so its conversion needs no normaliser; an
//! object it cannot close (`additionalProperties: false`) still refuses, in the tool's
//! decoding, a property the tool does not take.

use serde_json::{Map, Value};

use super::walk::{
    FREE_FORM_MAP, UNSUPPORTED, Walk, describe, is_null_schema, is_number_format, items_of,
    list_of, map_of, overlay, write_format_range,
};
use super::{SchemaDialect, SchemaError};

/// Keywords Gemini's schema object has, kept as they are.
const KEPT: &[&str] = &[
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
const DESCRIBED: &[&str] = &[
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "uniqueItems",
    "examples",
    "contentEncoding",
    "contentMediaType",
];

/// The formats Gemini documents.
const FORMATS: &[&str] = &["int32", "int64", "float", "double", "date-time", "enum"];

/// Converts `schema` to Gemini's subset.
pub(super) fn convert(schema: &Value) -> Result<Value, SchemaError> {
    Gemini {
        walk: Walk::new(SchemaDialect::Gemini, schema),
        expanding: Vec::new(),
    }
    .node(schema)
}

struct Gemini<'a> {
    walk: Walk<'a>,
    /// The definitions being inlined, to refuse recursion.
    expanding: Vec<String>,
}

impl<'a> AsMut<Walk<'a>> for Gemini<'a> {
    fn as_mut(&mut self) -> &mut Walk<'a> {
        &mut self.walk
    }
}

impl Gemini<'_> {
    fn node(&mut self, schema: &Value) -> Result<Value, SchemaError> {
        let node = self.walk.as_object(schema)?;
        let mut node = self.walk.merge_all_of(node)?.into_owned();
        let mut nullable = node.get("nullable") == Some(&Value::Bool(true));

        // unions with null become `nullable`; a union of one is its only member
        for keyword in ["anyOf", "oneOf"] {
            let Some(list) = node.get(keyword) else {
                continue;
            };
            let Some(list) = list.as_array() else {
                return Err(self.walk.error(format!("`{keyword}` that is not an array")));
            };
            let members: Vec<&Value> = list.iter().filter(|m| !is_null_schema(m)).collect();
            nullable |= members.len() < list.len();
            match members.as_slice() {
                [] => return Err(self.walk.error("a value that can only be null")),
                [only] => {
                    let only = self.walk.as_object(only)?;
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
            let (name, target) = self.walk.definition(reference)?;
            if self.expanding.contains(&name) {
                return Err(self.walk.error(format!(
                    "the recursive type `{name}` (Gemini has no references, and a recursive type cannot be inlined)"
                )));
            }
            let target = self.walk.as_object(target)?;
            let mut merged = overlay(target, &node, "$ref");
            if nullable {
                merged.insert("nullable".to_owned(), Value::Bool(true));
            }
            self.expanding.push(name);
            let result = self.node(&Value::Object(merged));
            self.expanding.pop();
            return result;
        }

        let mut out = Map::new();
        let mut notes: Vec<(&str, &Value)> = Vec::new();
        let mut moved: Vec<(String, Value)> = Vec::new();
        let mut number_format = None;
        for (key, value) in node.iter() {
            match key.as_str() {
                "type" => nullable |= self.types(value, &mut out)?,
                "enum" => {
                    let Some(values) = value.as_array() else {
                        return Err(self.walk.error("`enum` that is not an array"));
                    };
                    let named: Vec<Value> =
                        values.iter().filter(|v| !v.is_null()).cloned().collect();
                    nullable |= named.len() < values.len();
                    if named.iter().all(Value::is_string) {
                        out.insert(key.clone(), Value::Array(named));
                    } else {
                        moved.push((key.clone(), Value::Array(named)));
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
                "format" => match value.as_str() {
                    Some(format) => {
                        if FORMATS.contains(&format) {
                            out.insert(key.clone(), value.clone());
                        }
                        if is_number_format(format) {
                            // what the Rust number type implies: its range as bounds, if narrow
                            number_format = Some(format);
                        } else if !FORMATS.contains(&format) {
                            notes.push(("format", value));
                        }
                    }
                    None => notes.push(("format", value)),
                },
                "properties" => {
                    let converted = map_of(self, key, value, Self::node)?;
                    out.insert(key.clone(), Value::Object(converted.into_iter().collect()));
                }
                "required" => {
                    out.insert(key.clone(), value.clone());
                }
                "additionalProperties" if value != &Value::Bool(false) => {
                    return Err(self.walk.error(FREE_FORM_MAP));
                }
                "additionalProperties" => {}
                "items" => {
                    let converted = items_of(self, value, Self::node)?;
                    out.insert(key.clone(), converted);
                }
                "prefixItems" => return Err(self.walk.error("a tuple (`prefixItems`)")),
                "anyOf" | "oneOf" => {
                    if out.contains_key("anyOf") {
                        return Err(self.walk.error(
                            "both `anyOf` and `oneOf`, or a union of types beside `anyOf`",
                        ));
                    }
                    let converted = list_of(self, key, value, Self::node)?;
                    out.insert("anyOf".to_owned(), Value::Array(converted));
                }
                "$defs" | "definitions" | "nullable" => {} // inlined; set below
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k if DESCRIBED.contains(&k) => notes.push((key.as_str(), value)),
                k if UNSUPPORTED.contains(&k) => {
                    return Err(self.walk.error(format!("the keyword `{k}`")));
                }
                _ => {} // annotations Gemini does not take: `$schema`, `$comment`, ...
            }
        }
        if let Some(format) = number_format {
            write_format_range(&mut out, format);
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

    /// Writes `type` into `out`: one type, or several as `anyOf`; whether it included `null`.
    fn types(&self, types: &Value, out: &mut Map<String, Value>) -> Result<bool, SchemaError> {
        match types {
            Value::String(t) if t == "null" => {
                Err(self.walk.error("a value that can only be null"))
            }
            Value::String(_) => {
                out.insert("type".to_owned(), types.clone());
                Ok(false)
            }
            Value::Array(types) => {
                let named: Vec<&Value> = types
                    .iter()
                    .filter(|t| t.as_str() != Some("null"))
                    .collect();
                match named.as_slice() {
                    [] => return Err(self.walk.error("a value that can only be null")),
                    [only] => {
                        out.insert("type".to_owned(), (*only).clone());
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
                Ok(named.len() < types.len())
            }
            _ => Err(self.walk.error("`type` that is not a string or an array")),
        }
    }
}
