//! Decoding the model's arguments from a `serde_json::Value`: the arguments object, the
//! nesting limit, each parameter's decoding (with JSON Schema's view of `3.0` as an integer),
//! and cutting arguments nested too deep before anything recurses into them.

use schemars::JsonSchema;
use serde::de::{DeserializeOwned, MapAccess};
use serde_json::{Map, Value};

use super::schema::ParametersSchema;
use crate::error::{ArgumentError, ToolError};
use crate::render;

/// The deepest nesting of arrays and objects accepted in arguments, as in `serde_json`'s
/// parser.
pub(crate) const MAX_DEPTH: usize = 128;

/// A type a tool parameter can be decoded into. Its schema is [`ToolParamSchema`]'s: two
/// traits, so a type that lacks one of `Deserialize` and `JsonSchema` is told which.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `serde::Deserialize`",
    label = "the model's arguments cannot be decoded into `{Self}`",
    note = "a tool parameter's type must implement `serde::Deserialize` and `schemars::JsonSchema`, and own its data (`String`, not `&str`)",
    note = "for your own types add `#[derive(serde::Deserialize, schemars::JsonSchema)]`"
)]
pub trait ToolParam: Sized {
    /// Decodes the argument `name` (absent when `None`).
    /// `integral_floats`: whether the arguments hold a float with no fractional part
    /// anywhere (noted by [`check_argument`]), which may need a second decoding.
    fn decode(
        value: Option<Value>,
        name: &str,
        required: bool,
        integral_floats: bool,
    ) -> Result<Self, ArgumentError>;

    /// Decodes the argument from the next value of `map`, for
    /// [`Tool::call_text`](crate::Tool::call_text). When it does not decode as sent, the
    /// caller takes the [`decode`](Self::decode) path, which gives the error, and accepts
    /// what JSON Schema accepts and `serde` does not (`3.0` for an integer).
    fn next_value<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Self, A::Error>;
}

/// A type whose schema can describe a tool parameter.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `schemars::JsonSchema`",
    label = "the model cannot be shown a schema for `{Self}`",
    note = "a tool parameter's type must implement `serde::Deserialize` and `schemars::JsonSchema`",
    note = "for your own types add `#[derive(schemars::JsonSchema)]` beside `serde::Deserialize`"
)]
pub trait ToolParamSchema {
    /// Adds the parameter to the schema.
    fn describe(schema: &mut ParametersSchema, name: &str, doc: Option<&str>, required: bool);
}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema> ToolParamSchema for T {
    fn describe(schema: &mut ParametersSchema, name: &str, doc: Option<&str>, required: bool) {
        schema.parameter::<T>(name, doc, required);
    }
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> ToolParam for T {
    #[inline]
    fn decode(
        value: Option<Value>,
        name: &str,
        required: bool,
        integral_floats: bool,
    ) -> Result<Self, ArgumentError> {
        let value = match value {
            Some(value) => value,
            None if required => {
                return Err(ArgumentError::new(render::missing_argument(name)).at(name));
            }
            None => Value::Null,
        };
        // JSON Schema counts `3.0` as an integer, so the decoder must too: a value that holds
        // such numbers is decoded again with them written as integers if it fails as sent.
        let retry = (integral_floats && has_integral_float(&value)).then(|| value.clone());
        T::deserialize(value).or_else(|mut e| {
            if let Some(mut value) = retry {
                integral_floats_to_integers(&mut value);
                // Its error, if it fails too, is not about a number it should have accepted.
                e = match T::deserialize(value) {
                    Ok(decoded) => return Ok(decoded),
                    Err(e) => e,
                };
            }
            Err(ArgumentError::new(render::invalid_argument(name, &e.to_string())).at(name))
        })
    }

    #[inline]
    fn next_value<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Self, A::Error> {
        map.next_value()
    }
}

/// `n` as an integer, when it is a float with no fractional part that fits `i64` or `u64`.
fn integral(n: &serde_json::Number) -> Option<serde_json::Number> {
    let f = n.as_f64().filter(|_| n.is_f64())?;
    if f.fract() != 0.0 {
        return None;
    }
    // 2^64 and -2^63, exactly representable; `as` is exact for integral values in range.
    // -2^63 itself is left out: the parser reads an integer below `i64::MIN` (-2^63 - 1) as
    // this float, and it must not become `i64::MIN`. (Integers from -2^63 up are read as
    // integers, never as floats.)
    if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
        Some((f as u64).into())
    } else if f > -9_223_372_036_854_775_808.0 && f < 0.0 {
        Some((f as i64).into())
    } else {
        None
    }
}

/// Whether `value` holds a float with no fractional part anywhere. Recursive without
/// allocating: `arguments` has already bounded the depth to [`MAX_DEPTH`].
fn has_integral_float(value: &Value) -> bool {
    match value {
        Value::Number(n) => integral(n).is_some(),
        Value::Array(items) => items.iter().any(has_integral_float),
        Value::Object(map) => map.values().any(has_integral_float),
        Value::Null | Value::Bool(_) | Value::String(_) => false,
    }
}

fn integral_floats_to_integers(value: &mut Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Number(n) => {
                if let Some(integer) = integral(n) {
                    *n = integer;
                }
            }
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
}

/// The arguments object; refuses anything else (`null` is no arguments).
#[inline]
pub fn arguments(args: Value) -> Result<Map<String, Value>, ToolError> {
    match args {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => Err(ArgumentError::new(render::not_an_object(json_type(&other))).into()),
    }
}

/// Checks one argument's value as the arguments are taken apart: refuses it when nested too
/// deep, and notes whether it holds a float with no fractional part (`3.0`), so that decoding
/// need not walk the arguments again. Without allocating; the recursion stops at the limit, so
/// a hostile value cannot exhaust the stack.
#[inline(always)]
pub fn check_argument(value: &Value, integral_floats: &mut bool) -> Result<(), ToolError> {
    if scan_all(std::iter::once(value), MAX_DEPTH - 1, integral_floats) {
        Err(nested_too_deep())
    } else {
        Ok(())
    }
}

#[cold]
fn nested_too_deep() -> ToolError {
    ArgumentError::new(render::nested_too_deep(MAX_DEPTH)).into()
}

/// Whether `value` nests non-empty arrays or objects more than `levels` deep; notes integral
/// floats on the way. The recursion stops at `levels`, so a hostile value cannot exhaust the
/// stack.
fn scan(value: &Value, levels: usize, integral_floats: &mut bool) -> bool {
    match value {
        Value::Array(items) => {
            !items.is_empty()
                && (levels == 0 || scan_all(items.iter(), levels - 1, integral_floats))
        }
        Value::Object(map) => {
            !map.is_empty() && (levels == 0 || scan_all(map.values(), levels - 1, integral_floats))
        }
        scalar => {
            note_float(scalar, integral_floats);
            false
        }
    }
}

/// [`scan`] of each of `items`, with scalars looked at in place.
#[inline(always)]
fn scan_all<'v>(
    items: impl Iterator<Item = &'v Value>,
    levels: usize,
    integral_floats: &mut bool,
) -> bool {
    for item in items {
        if is_scalar(item) {
            note_float(item, integral_floats);
        } else if scan(item, levels, integral_floats) {
            return true;
        }
    }
    false
}

#[inline(always)]
fn is_scalar(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

#[inline(always)]
fn note_float(value: &Value, integral_floats: &mut bool) {
    if let Value::Number(n) = value
        && n.is_f64()
    {
        *integral_floats |= n.as_f64().is_some_and(|f| f.fract() == 0.0);
    }
}

/// Cuts arguments nested deeper than [`MAX_DEPTH`] levels down to one level more than that:
/// each array or object at that level keeps its place and its length, with `null` for its
/// arrays and objects. Returns whether anything was cut.
///
/// The loop does this when a model's response arrives. Cloning, comparing, serializing and
/// dropping a `Value` all recurse once per level, so a value a few thousand levels deep (which
/// no parser produces, but a `Model` can build) would exhaust the stack; cut, the arguments
/// stay deeper than the limit, and [`arguments`] refuses them with the same message. The part
/// cut off is taken apart without recursion.
pub(crate) fn cut_too_deep(arguments: &mut Value) -> bool {
    let mut cut = false;
    // (value, its level); the arguments object is level 1
    let mut stack: Vec<(&mut Value, usize)> = vec![(arguments, 1)];
    while let Some((value, level)) = stack.pop() {
        let children: Vec<&mut Value> = match value {
            Value::Array(items) => items.iter_mut().collect(),
            Value::Object(map) => map.values_mut().collect(),
            _ => continue,
        };
        for child in children {
            if !matches!(child, Value::Array(_) | Value::Object(_)) {
                continue;
            }
            if level > MAX_DEPTH {
                drop_flat(std::mem::take(child));
                cut = true;
            } else {
                stack.push((child, level + 1));
            }
        }
    }
    cut
}

/// Drops `value` without recursing into it.
fn drop_flat(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The error for an argument the tool does not take.
#[cold]
pub fn unknown_argument(key: &str, expected: &[&str]) -> ToolError {
    ArgumentError::new(render::unknown_argument(key, expected)).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested(depth: usize) -> Value {
        let mut v = json!(1);
        for _ in 0..depth {
            v = Value::Array(vec![v]);
        }
        v
    }

    /// `{"a": value}`, built without `json!`, which serializes `value` recursively.
    fn object(value: Value) -> Value {
        Value::Object(Map::from_iter([("a".to_owned(), value)]))
    }

    #[test]
    fn depth_limit() {
        let mut floats = false;
        assert!(check_argument(&nested(MAX_DEPTH - 1), &mut floats).is_ok());
        assert!(check_argument(&nested(MAX_DEPTH), &mut floats).is_err());
        let err = check_argument(&nested(5000), &mut floats).unwrap_err();
        assert!(err.model_text("t", false).contains("nested deeper"));
    }

    #[test]
    fn cut_too_deep_keeps_the_arguments_too_deep() {
        let mut args = object(nested(5000));
        assert!(cut_too_deep(&mut args));
        // `{"a": [[..[null]..]]}`: the object and MAX_DEPTH arrays
        let mut depth = 1;
        let mut value = &args["a"];
        while let Value::Array(items) = value {
            depth += 1;
            value = &items[0];
        }
        assert_eq!((depth, value), (MAX_DEPTH + 1, &Value::Null));
        let err = check_argument(&args["a"], &mut false).unwrap_err();
        assert!(err.model_text("t", false).contains("nested deeper"));

        let mut shallow = object(nested(MAX_DEPTH - 1));
        let before = shallow.clone();
        assert!(!cut_too_deep(&mut shallow));
        assert_eq!(shallow, before);
        assert!(check_argument(&shallow["a"], &mut false).is_ok());
    }

    #[test]
    fn integral_floats() {
        let float = |f: f64| serde_json::Number::from_f64(f).unwrap();
        assert_eq!(integral(&float(3.0)), Some(3u64.into()));
        assert_eq!(integral(&float(-2.0)), Some((-2i64).into()));
        assert_eq!(integral(&float(-0.0)), Some(0u64.into()));
        assert_eq!(
            integral(&float(i64::MIN as f64 + 1024.0)),
            Some((i64::MIN + 1024).into())
        );
        // what `-9223372036854775809` is read as
        assert_eq!(integral(&float(i64::MIN as f64)), None);
        assert_eq!(integral(&float(0.5)), None);
        assert_eq!(integral(&float(18_446_744_073_709_551_616.0)), None);
        assert_eq!(integral(&float(1e300)), None);
        assert_eq!(integral(&3u64.into()), None);
    }

    #[test]
    fn integral_floats_decode_as_integers() {
        assert_eq!(u32::decode(Some(json!(7.0)), "n", true, true).unwrap(), 7);
        assert_eq!(
            Vec::<i8>::decode(Some(json!([1.0, -2.0])), "n", true, true).unwrap(),
            [1, -2]
        );
        assert_eq!(f64::decode(Some(json!(7.0)), "n", true, true).unwrap(), 7.0);
        assert_eq!(
            u8::decode(Some(json!(300.0)), "n", true, true)
                .unwrap_err()
                .message(),
            "argument `n`: invalid value: integer `300`, expected u8"
        );
        assert_eq!(
            u8::decode(Some(json!(1.5)), "n", true, true)
                .unwrap_err()
                .message(),
            "argument `n`: invalid type: floating point `1.5`, expected u8"
        );
    }

    #[test]
    fn not_an_object() {
        let err = arguments(json!([1])).unwrap_err();
        assert_eq!(
            err.model_text("t", false),
            "Invalid arguments for tool 't': arguments must be a JSON object, got an array"
        );
        assert!(arguments(Value::Null).unwrap().is_empty());
    }
}
