//! Support for the code the macros generate. Not public API: no stability guarantees.

use std::error::Error as StdError;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::{ArgumentError, BoxError, Disclose, Failure, ToolError};
use crate::render::{MAX_NAME_LEN, bounded};
use crate::schema::ParametersSchema;

pub use crate::argument_field::{
    ArgumentField, ArgumentFields, ErrorField, ErrorLikeField, PlainField, argument_field,
};
pub use crate::secret::{SecretCannotBeFormatted, SecretCannotBeSerialized};
pub use futures::future::BoxFuture;
pub use serde;
pub use serde_json;
pub use std::sync::OnceLock;

/// The deepest nesting of arrays and objects accepted in arguments, as in `serde_json`'s
/// parser.
pub const MAX_DEPTH: usize = 128;

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
                return Err(ArgumentError::new(format!(
                    "missing required argument `{name}`"
                )));
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
            let prefix = format!("argument `{name}`: ");
            // Cut here, once, to what fits the model's message with the prefix: `bounded`
            // keeps the end of serde's message (what was expected).
            let budget = crate::render::MAX_MESSAGE_LEN.saturating_sub(prefix.len());
            Err(ArgumentError::new(
                prefix + &bounded(&e.to_string(), budget),
            ))
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

/// A type that can be a tool's output.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's output",
    label = "the output must be turned into JSON for the model",
    note = "a tool's output must implement `serde::Serialize`; for your own types add `#[derive(serde::Serialize)]`"
)]
pub trait ToolOutput {
    /// The output as JSON.
    fn encode(&self) -> Result<Value, ToolError>;
}

#[diagnostic::do_not_recommend]
impl<T: Serialize> ToolOutput for T {
    #[inline]
    fn encode(&self) -> Result<Value, ToolError> {
        serde_json::to_value(self)
            .map_err(|e| ToolError::Failed(Failure::new("OutputError", OutputError(e)).fatal()))
    }
}

/// A tool's output could not be turned into JSON (e.g. a map with non-string keys).
#[derive(Debug, thiserror::Error)]
#[error("the tool's output could not be serialized to JSON: {0}")]
pub struct OutputError(serde_json::Error);

/// A fallible tool's return type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `Result` a tool can return",
    label = "expected `std::result::Result<T, E>`",
    note = "return `Result<T, E>` where `E` is `reticent::ArgumentError`, a type that derives `reticent::Disclose`, or any `std::error::Error + Send + Sync + 'static`"
)]
pub trait IntoToolResult {
    /// The success type.
    type Output;
    /// The error type.
    type Error;
    /// The `Result`.
    fn into_tool_result(self) -> Result<Self::Output, Self::Error>;
}

impl<T, E> IntoToolResult for Result<T, E> {
    type Output = T;
    type Error = E;
    #[inline]
    fn into_tool_result(self) -> Self {
        self
    }
}

/// The arguments object; refuses anything else (`null` is no arguments).
#[inline]
pub fn arguments(args: Value) -> Result<Map<String, Value>, ToolError> {
    match args {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => Err(ArgumentError::new(format!(
            "arguments must be a JSON object, got {}",
            json_type(&other)
        ))
        .into()),
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
    ArgumentError::new(format!(
        "arguments are nested deeper than {MAX_DEPTH} levels"
    ))
    .into()
}

/// Decodes the arguments object in `text` in one pass with `visitor` (which `#[tool]`
/// generates), as `serde_json::from_str` would, building no `Value`. `None` when it does not
/// decode: the caller then parses `text` into a `Value` and calls
/// [`Tool::call`](crate::Tool::call), which says what is wrong.
///
/// The text is held to the nesting limit of `serde_json`'s parser, as when it is parsed into a
/// `Value` — including parts the tool's types skip unread.
#[inline]
pub fn from_text<'t, V: Visitor<'t>>(text: &'t str, visitor: V) -> Option<V::Value> {
    // The parser refuses a 128th level. A text this short cannot nest that deep.
    const LEVELS: usize = MAX_DEPTH - 1;
    if text.len() > 2 * LEVELS && nested_deeper_than(text, LEVELS) {
        return None;
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = serde::Deserializer::deserialize_map(&mut deserializer, visitor).ok()?;
    deserializer.end().ok()?;
    Some(value)
}

/// An argument's index among the names of a tool's parameters, read without copying the key.
#[derive(Debug, Clone, Copy)]
pub struct KeyIndex<'n>(pub &'n [&'n str]);

impl<'de> DeserializeSeed<'de> for KeyIndex<'_> {
    type Value = Option<usize>;

    #[inline]
    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for KeyIndex<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an argument's name")
    }

    #[inline]
    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok(self.0.iter().position(|name| *name == key))
    }
}

/// The error a generated visitor returns for a key it does not take or takes twice; never
/// shown: the caller takes the `Value` path, which says what is wrong.
#[cold]
pub fn unexpected_key<E: de::Error>() -> E {
    E::custom("unknown or repeated argument")
}

/// What [`Tool::call_text`](crate::Tool::call_text) does by default: parses `text` into a
/// `Value` and calls [`Tool::call`](crate::Tool::call); text that is not JSON is an argument
/// error.
pub fn call_parsed<'a, T: crate::Tool + ?Sized>(
    tool: &'a T,
    text: &str,
    cx: crate::ToolContext,
) -> BoxFuture<'a, Result<Value, ToolError>> {
    match serde_json::from_str(text) {
        Ok(arguments) => tool.call(arguments, cx),
        Err(error) => Box::pin(std::future::ready(Err(ArgumentError::new(
            crate::render::invalid_json(&error),
        )
        .into()))),
    }
}

/// Whether the JSON text `text` nests arrays and objects more than `levels` deep. One pass
/// over its bytes, without recursion; brackets inside strings do not count.
fn nested_deeper_than(text: &str, levels: usize) -> bool {
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
    let key = bounded(key, MAX_NAME_LEN);
    let message = if expected.is_empty() {
        format!("unknown argument `{key}`; this tool takes no arguments")
    } else {
        let list = expected
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ");
        format!("unknown argument `{key}`; expected one of {list}")
    };
    ArgumentError::new(message).into()
}

// ---- classification ----------------------------------------------------------------------
//
// The macro calls `(&&&Classify::new(&error)).reticent_kind().classify(error)`. Method
// resolution picks the most specific impl available for the error's concrete type, at compile
// time: `ArgumentError`/`Failure`/`ToolError`/boxed errors first, then `Disclose` types, then
// every other error type. A type that is none of these fails to compile at the error type.

/// Carries the error type for method resolution; holds no value.
#[derive(Debug)]
pub struct Classify<E>(PhantomData<E>);

impl<E> Classify<E> {
    /// Names `E` from a reference to an error.
    #[inline]
    pub fn new(_: &E) -> Self {
        Self(PhantomData)
    }
}

/// Errors that are already classified.
pub trait Classified {
    /// The tool error.
    fn into_tool_error(self) -> ToolError;
}

impl Classified for ArgumentError {
    fn into_tool_error(self) -> ToolError {
        ToolError::Argument(self)
    }
}

impl Classified for Failure {
    fn into_tool_error(self) -> ToolError {
        ToolError::Failed(self)
    }
}

impl Classified for ToolError {
    fn into_tool_error(self) -> ToolError {
        self
    }
}

impl Classified for BoxError {
    fn into_tool_error(self) -> ToolError {
        ToolError::Failed(Failure::new("Error", self))
    }
}

/// First choice: already classified.
pub trait ClassifiedKind {
    /// Picks the tag.
    fn reticent_kind(&self) -> ClassifiedTag {
        ClassifiedTag
    }
}
impl<E: Classified> ClassifiedKind for &&Classify<E> {}

/// Second choice: `#[derive(Disclose)]` types.
pub trait DiscloseKind {
    /// Picks the tag.
    fn reticent_kind(&self) -> DiscloseTag {
        DiscloseTag
    }
}
impl<E: Disclose> DiscloseKind for &Classify<E> {}

/// Last choice: any other type, which must be an error type.
pub trait ErrorKind {
    /// Picks the tag.
    fn reticent_kind(&self) -> ErrorTag {
        ErrorTag
    }
}
impl<E> ErrorKind for Classify<E> {}

/// Tag for already classified errors.
#[derive(Debug)]
pub struct ClassifiedTag;
impl ClassifiedTag {
    /// Converts.
    #[inline]
    pub fn classify<E: Classified>(self, error: E) -> ToolError {
        error.into_tool_error()
    }
}

/// Tag for `Disclose` types.
#[derive(Debug)]
pub struct DiscloseTag;
impl DiscloseTag {
    /// Converts.
    #[inline]
    pub fn classify<E: Disclose>(self, error: E) -> ToolError {
        ToolError::from_disclose(error)
    }
}

/// Tag for other error types.
#[derive(Debug)]
pub struct ErrorTag;
impl ErrorTag {
    /// Converts.
    #[inline]
    pub fn classify<E: ToolErrorType>(self, error: E) -> ToolError {
        error.into_failure()
    }
}

/// An error type a tool can return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned as a tool's error",
    label = "the tool's error type must say what the model may be told",
    note = "return `reticent::ArgumentError` for the model's own mistakes, a type that derives `reticent::Disclose`, or any type implementing `std::error::Error + Send + Sync + 'static` (the model sees its type name)",
    note = "`anyhow::Error` and `Box<dyn Error>` without `Send + Sync` are not `std::error::Error + Send + Sync`: return a concrete error type or `Box<dyn Error + Send + Sync>`"
)]
pub trait ToolErrorType {
    /// Classifies by type name.
    fn into_failure(self) -> ToolError;
}

#[diagnostic::do_not_recommend]
impl<E: StdError + Send + Sync + 'static> ToolErrorType for E {
    #[inline]
    fn into_failure(self) -> ToolError {
        ToolError::from_error(self)
    }
}

/// What `#[derive(Disclose)]` asserts of a concrete type, so that a type that is not an
/// error is told so at its name rather than inside the generated impl.
#[diagnostic::on_unimplemented(
    message = "`{Self}` derives `Disclose` but is not a `std::error::Error + Send + Sync + 'static`",
    label = "`Disclose` says how this error is shown to the model, so it must be an error type",
    note = "derive the error too: `#[derive(Debug, thiserror::Error, reticent::Disclose)]`, or implement `std::error::Error` by hand",
    note = "an error type must also be `Send + Sync` and own its data: a field like `Rc`, `RefCell` or `&str` prevents that; use `Arc`, `Mutex` or `String`"
)]
pub trait DiscloseErrorType {
    /// Named, never called, by the generated assertion.
    fn assert() {}
}

#[diagnostic::do_not_recommend]
impl<E: StdError + Send + Sync + 'static> DiscloseErrorType for E {}

/// Checks a tool name the macro could not see (not used by the macros themselves, which check
/// literal names at compile time).
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
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
        assert!(nested_deeper_than(&deep, MAX_DEPTH));
        assert!(!nested_deeper_than(&deep, 200));
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
