//! The one nesting limit of a tool's arguments, [`MAX_NESTING`], and the walks that keep it
//! whichever way the arguments arrive: as JSON text ([`nested_deeper_than`], before it is
//! decoded), as a `Value` ([`check_argument`], as the arguments object is taken apart), and as
//! a `Value` nested deeper than any parser produces, which a `Model` can build
//! ([`cut_too_deep`], before anything recurses into it). Each walk stops at the limit or runs
//! without recursion, so a hostile value cannot exhaust the stack.
//!
//! Not the limit of an error's chain of sources (`error::chain::MAX_SOURCES`), which bounds a
//! walk over values a tool made, not the model's input.

use serde_json::Value;

use crate::error::{ArgumentError, ToolError};
use crate::render;

/// The deepest nesting of arrays and objects accepted in a tool's arguments: 128, the limit of
/// `serde_json`'s parser, which arguments given as a `Value` are held to as well, so that a
/// tool takes the same arguments as text and as a `Value`.
pub(crate) const MAX_NESTING: usize = 128;

/// Checks one argument's value as the arguments are taken apart: refuses it when nested too
/// deep, and notes whether it holds a float with no fractional part (`3.0`), so that decoding
/// need not walk the arguments again. Without allocating; the recursion stops at the limit, so
/// a hostile value cannot exhaust the stack.
#[inline(always)]
pub(super) fn check_argument(value: &Value, integral_floats: &mut bool) -> Result<(), ToolError> {
    if scan_all(std::iter::once(value), MAX_NESTING - 1, integral_floats) {
        Err(nested_too_deep())
    } else {
        Ok(())
    }
}

#[cold]
fn nested_too_deep() -> ToolError {
    ArgumentError::new(render::nested_too_deep(MAX_NESTING)).into()
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

/// Cuts arguments nested deeper than [`MAX_NESTING`] levels down to one level more than that:
/// each array or object at that level keeps its place and its length, with `null` for its
/// arrays and objects. Returns whether anything was cut.
///
/// The loop does this when a model's response arrives. Cloning, comparing, serializing and
/// dropping a `Value` all recurse once per level, so a value a few thousand levels deep (which
/// no parser produces, but a `Model` can build) would exhaust the stack; cut, the arguments
/// stay deeper than the limit, and decoding them refuses them with the same message. The part
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
            if level > MAX_NESTING {
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

/// Whether the JSON text `text` nests arrays and objects more than `levels` deep. One pass
/// over its bytes, without recursion; brackets inside strings do not count.
pub(super) fn nested_deeper_than(text: &str, levels: usize) -> bool {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'"' => {
                // to the closing quote, past escapes
                i += 1;
                while let Some(&byte) = bytes.get(i) {
                    match byte {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > levels {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;

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
        assert!(check_argument(&nested(MAX_NESTING - 1), &mut floats).is_ok());
        assert!(check_argument(&nested(MAX_NESTING), &mut floats).is_err());
        let err = check_argument(&nested(5000), &mut floats).unwrap_err();
        assert!(err.model_text("t", false).contains("nested deeper"));
    }

    #[test]
    fn cut_too_deep_keeps_the_arguments_too_deep() {
        let mut args = object(nested(5000));
        assert!(cut_too_deep(&mut args));
        // `{"a": [[..[null]..]]}`: the object and MAX_NESTING arrays
        let mut depth = 1;
        let mut value = &args["a"];
        while let Value::Array(items) = value {
            depth += 1;
            value = &items[0];
        }
        assert_eq!((depth, value), (MAX_NESTING + 1, &Value::Null));
        let err = check_argument(&args["a"], &mut false).unwrap_err();
        assert!(err.model_text("t", false).contains("nested deeper"));

        let mut shallow = object(nested(MAX_NESTING - 1));
        let before = shallow.clone();
        assert!(!cut_too_deep(&mut shallow));
        assert_eq!(shallow, before);
        assert!(check_argument(&shallow["a"], &mut false).is_ok());
    }

    #[test]
    fn nesting_of_raw_text() {
        assert!(!nested_deeper_than("1", 0));
        assert!(!nested_deeper_than(r#""[[[""#, 0));
        assert!(!nested_deeper_than("[]", 1));
        assert!(nested_deeper_than("[]", 0));
        assert!(!nested_deeper_than(r#"[{"a":[1]},[2]]"#, 3));
        assert!(nested_deeper_than(r#"[{"a":[1]},[2]]"#, 2));
        // brackets and escaped quotes inside strings do not count
        assert!(!nested_deeper_than(r#"{"[[\"{{":"\"]]\\"}"#, 1));
        assert!(nested_deeper_than(r#"{"\\":[[]]}"#, 2));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(nested_deeper_than(&deep, MAX_NESTING));
        assert!(!nested_deeper_than(&deep, 200));
    }
}
