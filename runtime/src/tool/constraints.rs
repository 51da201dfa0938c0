//! Which schemas need an [`ArgumentValidator`](super::ArgumentValidator): those that carry a
//! constraint the validator checks and the Rust types do not enforce. Bounds an integer `format`
//! implies (`uint8`'s 0 and 255), a Rust enum's variant names and tags, and the shape are the
//! types' own; a schema with nothing beyond them gets no validator.

use serde_json::{Map, Value};

use crate::model::integer_format_range;

/// Whether `schema` carries a constraint the validator checks and Rust types do not enforce.
pub(super) fn has_constraints(schema: &Value) -> bool {
    node_has_constraints(schema, Place::Other, 0)
}

/// Where a schema node is, for `enum` and `const`: a Rust enum's variants and tags are its
/// `Deserialize`'s to check.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A definition in `$defs`: a unit-only enum is `{"enum": [..]}`.
    Definition,
    /// A member of a definition's `oneOf`/`anyOf`: one variant of an enum.
    Variant,
    /// A required property of a variant: an internal or adjacent tag when it is one constant.
    Tag,
    Other,
}

fn node_has_constraints(schema: &Value, place: Place, depth: usize) -> bool {
    let Some(node) = schema.as_object() else {
        return false;
    };
    // past any nesting a parameter type has: count it as constrained, and check
    if depth > 64 {
        return true;
    }
    let format = node.get("format").and_then(Value::as_str);
    for (key, value) in node {
        let constrains = match key.as_str() {
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                !implied_by_format(key, value, format)
            }
            "minLength" | "minItems" | "minProperties" => value.as_u64() != Some(0),
            "uniqueItems" => value == &Value::Bool(true),
            "multipleOf" | "maxLength" | "pattern" | "maxItems" | "maxProperties" | "contains"
            | "minContains" | "maxContains" | "propertyNames" | "patternProperties"
            | "dependentRequired" | "dependentSchemas" | "not" | "if" | "then" | "else" => true,
            "enum" => match place {
                Place::Definition | Place::Variant => false,
                Place::Tag => value.as_array().is_none_or(|v| v.len() != 1),
                Place::Other => true,
            },
            "const" => place == Place::Other,
            _ => false,
        };
        if constrains {
            return true;
        }
    }
    subschemas(node, place).any(|(child, place)| node_has_constraints(child, place, depth + 1))
}

/// Whether a bound only restates the range of an integer `format` (`uint8`'s 0 and 255), which
/// the Rust type enforces.
fn implied_by_format(keyword: &str, bound: &Value, format: Option<&str>) -> bool {
    let (Some(bound), Some((low, high))) = (bound.as_f64(), format.and_then(integer_format_range))
    else {
        return false;
    };
    let (low, high) = (low as f64, high as f64);
    match keyword {
        "minimum" => bound <= low,
        "maximum" => bound >= high,
        "exclusiveMinimum" => bound < low,
        "exclusiveMaximum" => bound > high,
        _ => false,
    }
}

/// The subschemas of `node`, each with its place.
fn subschemas<'a>(
    node: &'a Map<String, Value>,
    place: Place,
) -> impl Iterator<Item = (&'a Value, Place)> + 'a {
    let required: Vec<&str> = node
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    node.iter().flat_map(move |(key, value)| {
        let children: Vec<(&Value, Place)> = match key.as_str() {
            "$defs" | "definitions" => values(value).map(|v| (v, Place::Definition)).collect(),
            "anyOf" | "oneOf" => {
                let member = if place == Place::Definition {
                    Place::Variant
                } else {
                    Place::Other
                };
                values(value).map(|v| (v, member)).collect()
            }
            "properties" => value
                .as_object()
                .into_iter()
                .flatten()
                .map(|(name, v)| {
                    let tag = place == Place::Variant && required.contains(&name.as_str());
                    (v, if tag { Place::Tag } else { Place::Other })
                })
                .collect(),
            "allOf" | "prefixItems" | "patternProperties" | "dependentSchemas" => {
                values(value).map(|v| (v, Place::Other)).collect()
            }
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedProperties"
            | "unevaluatedItems" => match value {
                Value::Array(items) => items.iter().map(|v| (v, Place::Other)).collect(),
                v => vec![(v, Place::Other)],
            },
            _ => Vec::new(),
        };
        children
    })
}

/// The values of a map or the items of an array.
fn values(value: &Value) -> Box<dyn Iterator<Item = &Value> + '_> {
    match value {
        Value::Object(map) => Box::new(map.values()),
        Value::Array(items) => Box::new(items.iter()),
        _ => Box::new(std::iter::empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn constrained(property: Value) -> bool {
        has_constraints(&json!({"type": "object", "properties": {"p": property}}))
    }

    #[test]
    fn bounds_an_integer_format_implies_are_not_constraints() {
        assert!(!constrained(
            json!({"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255})
        ));
        assert!(!constrained(
            json!({"type": "integer", "format": "int8", "minimum": -128, "maximum": 127})
        ));
        assert!(!constrained(
            json!({"type": "integer", "format": "uint64", "minimum": 0})
        ));
        assert!(constrained(
            json!({"type": "integer", "format": "uint8", "minimum": 1, "maximum": 255})
        ));
        assert!(constrained(json!({"type": "integer", "maximum": 5})));
        assert!(constrained(
            json!({"type": "number", "format": "double", "minimum": 0})
        ));
    }

    #[test]
    fn a_rust_enums_variants_and_tags_are_not_constraints() {
        let enums = json!({
            "type": "object",
            "properties": {"e": {"$ref": "#/$defs/E"}, "t": {"$ref": "#/$defs/T"}},
            "$defs": {
                "E": {"type": "string", "enum": ["a", "b"]},
                "T": {"oneOf": [
                    {"type": "string", "const": "unit"},
                    {"type": "object", "properties": {
                        "kind": {"type": "string", "const": "data"},
                        "n": {"type": "integer", "format": "uint32", "minimum": 0}
                    }, "required": ["kind", "n"]}
                ]}
            }
        });
        assert!(!has_constraints(&enums));
        // an enum written on a string, and one on a struct's field, are constraints
        assert!(constrained(json!({"type": "string", "enum": ["a", "b"]})));
        assert!(has_constraints(&json!({
            "type": "object",
            "properties": {"s": {"$ref": "#/$defs/S"}},
            "$defs": {"S": {"type": "object", "properties": {
                "colour": {"type": "string", "enum": ["red", "blue"]}
            }, "required": ["colour"]}}
        })));
    }

    #[test]
    fn lengths_patterns_items_and_uniqueness_are_constraints() {
        assert!(constrained(json!({"type": "string", "pattern": "^a"})));
        assert!(constrained(json!({"type": "string", "minLength": 1})));
        assert!(!constrained(json!({"type": "string", "minLength": 0})));
        assert!(constrained(
            json!({"type": "array", "items": {"type": "string", "maxLength": 3}})
        ));
        assert!(constrained(json!({"type": "array", "uniqueItems": true})));
        assert!(!constrained(json!({"type": "array", "uniqueItems": false})));
        assert!(!constrained(
            json!({"type": "string", "format": "date-time"})
        ));
    }
}
