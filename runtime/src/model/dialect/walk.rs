//! What the dialect converters share: where in the schema a conversion is (for its errors),
//! walking subschemas, merging a one-member `allOf`, the keywords no dialect here can express,
//! the ranges integer `format`s imply, and notes for keywords that move into a `description`.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{SchemaDialect, SchemaError};

/// Keywords with subschemas that no dialect here can express.
pub(super) const UNSUPPORTED: &[&str] = &[
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

pub(super) const FREE_FORM_MAP: &str =
    "a free-form map (`additionalProperties` other than false); use a struct with named fields";

/// The range of values of an integer `format` as schemars writes it for a Rust integer type
/// (`uint8` for `u8`, `int` for `isize`), which the type's `Deserialize` enforces.
pub(crate) fn integer_format_range(format: &str) -> Option<(i128, i128)> {
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => (i64::MIN.into(), i64::MAX.into()),
        "int128" => (i128::MIN, i128::MAX),
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" | "uint" => (0, u64::MAX.into()),
        // u128's maximum does not fit an i128; no JSON number a parser reads as an integer
        // comes near it
        "uint128" => (0, i128::MAX),
        _ => return None,
    })
}

/// Whether `format` is one a Rust number type implies (`uint8`, `int64`, `double`): the type
/// enforces it, and a dialect that does not know it drops it rather than describe it.
pub(super) fn is_number_format(format: &str) -> bool {
    integer_format_range(format).is_some() || matches!(format, "float" | "double")
}

/// Writes the range of a narrow integer `format` (32 bits or fewer) into `out` as `minimum` and
/// `maximum`, keeping a bound already written when it is tighter: a dialect that drops the
/// format, or does not enforce it, then still shows the model what the type accepts. Wider
/// formats are left alone: their range is that of the integers a JSON parser reads.
pub(super) fn write_format_range(out: &mut Map<String, Value>, format: &str) {
    let Some((low, high)) = integer_format_range(format) else {
        return;
    };
    if high > i128::from(u32::MAX) || low < i128::from(i32::MIN) {
        return;
    }
    let tighten =
        |out: &mut Map<String, Value>, key: &str, bound: i128, tighter: fn(f64, f64) -> bool| {
            let keep = out
                .get(key)
                .and_then(Value::as_f64)
                .is_some_and(|written| !tighter(bound as f64, written));
            if !keep {
                // in range of i64: the format is 32 bits or fewer
                out.insert(key.to_owned(), Value::from(bound as i64));
            }
        };
    tighten(out, "minimum", low, |bound, written| bound > written);
    tighten(out, "maximum", high, |bound, written| bound < written);
}

/// Where a conversion is, for its errors, and the definitions it resolves references against.
pub(super) struct Walk<'a> {
    pub(super) dialect: SchemaDialect,
    /// The root's `$defs` (or `definitions`).
    pub(super) defs: Option<&'a Value>,
    path: Vec<String>,
}

impl<'a> Walk<'a> {
    pub(super) fn new(dialect: SchemaDialect, root: &'a Value) -> Self {
        Self {
            dialect,
            defs: root.get("$defs").or_else(|| root.get("definitions")),
            path: Vec::new(),
        }
    }

    pub(super) fn error(&self, reason: impl Into<String>) -> SchemaError {
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

    /// Runs `f` with `segments` added to the path.
    pub(super) fn at<C, T>(
        converter: &mut C,
        segments: &[&str],
        f: impl FnOnce(&mut C) -> Result<T, SchemaError>,
    ) -> Result<T, SchemaError>
    where
        C: AsMut<Self>,
    {
        let depth = converter.as_mut().path.len();
        converter
            .as_mut()
            .path
            .extend(segments.iter().map(|s| (*s).to_owned()));
        let result = f(converter);
        converter.as_mut().path.truncate(depth);
        result
    }

    pub(super) fn as_object<'v>(
        &self,
        schema: &'v Value,
    ) -> Result<&'v Map<String, Value>, SchemaError> {
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
    pub(super) fn merge_all_of<'v>(
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

    /// The definition a local `$ref` names, and its name.
    pub(super) fn definition(&self, reference: &Value) -> Result<(String, &'a Value), SchemaError> {
        let Some(reference) = reference.as_str() else {
            return Err(self.error("`$ref` that is not a string"));
        };
        let name = reference
            .strip_prefix("#/$defs/")
            .or_else(|| reference.strip_prefix("#/definitions/"))
            .ok_or_else(|| {
                self.error(format!(
                    "the reference `{reference}` (only local definitions can be resolved)"
                ))
            })?;
        let target = self.defs.and_then(|defs| defs.get(name)).ok_or_else(|| {
            self.error(format!(
                "the reference `{reference}`, which has no definition"
            ))
        })?;
        Ok((name.to_owned(), target))
    }
}

/// Converts each subschema of the map `value` (`properties`, `$defs`) with `convert`.
pub(super) fn map_of<'a, C: AsMut<Walk<'a>>, T>(
    converter: &mut C,
    keyword: &str,
    value: &Value,
    convert: fn(&mut C, &Value) -> Result<T, SchemaError>,
) -> Result<Vec<(String, T)>, SchemaError> {
    let Some(map) = value.as_object() else {
        return Err(converter
            .as_mut()
            .error(format!("`{keyword}` that is not an object")));
    };
    let mut out = Vec::with_capacity(map.len());
    for (name, schema) in map {
        let converted = Walk::at(converter, &[keyword, name], |c| convert(c, schema))?;
        out.push((name.clone(), converted));
    }
    Ok(out)
}

/// Converts each subschema of the list `value` (`anyOf`, `oneOf`) with `convert`.
pub(super) fn list_of<'a, C: AsMut<Walk<'a>>, T>(
    converter: &mut C,
    keyword: &str,
    value: &Value,
    convert: fn(&mut C, &Value) -> Result<T, SchemaError>,
) -> Result<Vec<T>, SchemaError> {
    let Some(list) = value.as_array() else {
        return Err(converter
            .as_mut()
            .error(format!("`{keyword}` that is not an array")));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, schema) in list.iter().enumerate() {
        let index = i.to_string();
        out.push(Walk::at(converter, &[keyword, &index], |c| {
            convert(c, schema)
        })?);
    }
    Ok(out)
}

/// Converts `items` of an array schema: one schema for every item. A tuple (`items` as an
/// array) is refused.
pub(super) fn items_of<'a, C: AsMut<Walk<'a>>, T>(
    converter: &mut C,
    value: &Value,
    convert: fn(&mut C, &Value) -> Result<T, SchemaError>,
) -> Result<T, SchemaError> {
    if value.is_array() {
        return Err(converter.as_mut().error("a tuple (`items` as an array)"));
    }
    Walk::at(converter, &["items"], |c| convert(c, value))
}

/// `base` with the keywords of `node` on top, except `consumed`.
pub(super) fn overlay(
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

/// `{"type": "null"}`, perhaps with a description or title.
pub(super) fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
        && schema.as_object().is_some_and(|o| {
            o.keys()
                .all(|k| matches!(k.as_str(), "type" | "description" | "title"))
        })
}

pub(super) fn null_schema() -> Value {
    let mut node = Map::new();
    node.insert("type".to_owned(), Value::from("null"));
    Value::Object(node)
}

pub(super) fn is_object_schema(node: &Map<String, Value>) -> bool {
    match node.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => node.contains_key("properties"),
    }
}

/// Appends `key: value` notes for keywords the dialect moved out of the schema to its
/// description, after what the description already says. A string is written as it is, an
/// empty one as `""`.
pub(super) fn describe(out: &mut Map<String, Value>, notes: &[(&str, &Value)]) {
    if notes.is_empty() {
        return;
    }
    let notes = notes
        .iter()
        .map(|(key, value)| match value {
            Value::String(s) if !s.is_empty() => format!("{key}: {s}"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ranged(node: Value, format: &str) -> Value {
        let Value::Object(mut node) = node else {
            unreachable!()
        };
        write_format_range(&mut node, format);
        Value::Object(node)
    }

    #[test]
    fn narrow_formats_write_their_range_keeping_tighter_bounds() {
        assert_eq!(
            ranged(json!({"minimum": 0}), "uint32"),
            json!({"minimum": 0, "maximum": 4_294_967_295u32})
        );
        assert_eq!(
            ranged(json!({"minimum": 1, "maximum": 5}), "uint8"),
            json!({"minimum": 1, "maximum": 5})
        );
        assert_eq!(
            ranged(json!({"minimum": -500, "maximum": 500.5}), "int8"),
            json!({"minimum": -128, "maximum": 127})
        );
        assert_eq!(
            ranged(json!({}), "int32"),
            json!({"minimum": i32::MIN, "maximum": i32::MAX})
        );
        // 64 bits and more, and formats that are not integers, are left alone
        assert_eq!(
            ranged(json!({"minimum": 0}), "uint64"),
            json!({"minimum": 0})
        );
        assert_eq!(ranged(json!({}), "int"), json!({}));
        assert_eq!(ranged(json!({}), "double"), json!({}));
    }
}
