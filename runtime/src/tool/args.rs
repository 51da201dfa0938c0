//! Decoding the model's arguments from a `serde_json::Value` into the arguments struct
//! `#[tool]` derives from a function's parameters: the arguments object, the nesting limit,
//! JSON Schema's view of `3.0` as an integer, the error the model is shown (naming the
//! argument, and the path into it where there is one), and cutting arguments nested too deep
//! before anything recurses into them.
//!
//! Longer than most files: decoding the arguments and naming what is wrong with them are one
//! job (the error needs what the decoder saw), and its unit tests cover each refusal beside it.

use std::fmt;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Deserializer;
use serde::de::value::StrDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::{ArgumentError, ToolError};
use crate::render;

use super::owned::{Owned, PathError};
use super::text::MAX_DEPTH;

/// A type a tool parameter can be decoded into. `#[tool]` checks each parameter's type with
/// `<T as ToolParam>::CHECK`, spanned at the type, so that a type that is not `Deserialize` is
/// reported there, once. Its schema is [`ToolParamSchema`]'s: two traits, so a type that lacks
/// one of `Deserialize` and `JsonSchema` is told which.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `serde::Deserialize`",
    label = "the model's arguments cannot be decoded into `{Self}`",
    note = "a tool parameter's type must implement `serde::Deserialize` and `schemars::JsonSchema`, and own its data (`String`, not `&str`)",
    note = "for your own types add `#[derive(serde::Deserialize, schemars::JsonSchema)]`"
)]
pub trait ToolParam {
    /// Nothing: naming it checks that the type is a `ToolParam`.
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> ToolParam for T {}

/// A type whose schema can describe a tool parameter; see [`ToolParam`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `schemars::JsonSchema`",
    label = "the model cannot be shown a schema for `{Self}`",
    note = "a tool parameter's type must implement `serde::Deserialize` and `schemars::JsonSchema`",
    note = "for your own types add `#[derive(schemars::JsonSchema)]` beside `serde::Deserialize`"
)]
pub trait ToolParamSchema {
    /// Nothing: naming it checks that the type is a `ToolParamSchema`.
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema> ToolParamSchema for T {}

/// The arguments struct `T` of a `#[tool]`, for autoref specialization: `#[tool]` writes
/// `(&&ArgumentsOf::<T>::new()).decode_value(args)`, which is [`DecodeArguments`]'s when `T`
/// implements `Deserialize` and [`CannotDecodeArguments`]'s otherwise — and the same for
/// `from_text`, and for the schema ([`ArgumentsSchema`](super::schema::ArgumentsSchema)).
///
/// `T` implements the derived traits exactly when every parameter's type does, which `#[tool]`
/// checks with a compile error at each parameter's type ([`ToolParam`],
/// [`ToolParamSchema`]). So the fallbacks are picked only in a crate that does not compile,
/// and add no errors of their own to the one at the user's type.
pub struct ArgumentsOf<T>(PhantomData<fn() -> T>);

impl<T> ArgumentsOf<T> {
    /// The marker for `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T> fmt::Debug for ArgumentsOf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ArgumentsOf")
    }
}

/// The decoders of a `#[tool]`'s arguments struct `T`: from a `Value`, and from JSON text in
/// one pass. Function pointers, so that the runtime's methods around a tool (`body.rs`) are
/// written once.
pub struct Decoders<T> {
    /// Decodes the arguments object `args` into `T`, or says what is wrong.
    pub value: fn(Value) -> Result<T, ToolError>,
    /// Decodes the arguments object in the JSON text `text` into `T` in one pass; `None` when
    /// it does not decode that way.
    pub text: fn(&str) -> Option<T>,
}

impl<T> fmt::Debug for Decoders<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Decoders")
    }
}

/// Decoding a `#[tool]`'s arguments struct; see [`ArgumentsOf`].
pub trait DecodeArguments<T> {
    /// The decoders of `T`.
    fn decoders(&self) -> Decoders<T>;
}

impl<T: DeserializeOwned> DecodeArguments<T> for &ArgumentsOf<T> {
    #[inline]
    fn decoders(&self) -> Decoders<T> {
        Decoders {
            value: decode_value::<T>,
            text: super::text::from_text::<T>,
        }
    }
}

/// The fallback of [`DecodeArguments`], picked only when a parameter's type is not
/// `Deserialize`: the crate then fails to compile with an error at that type, and this is
/// never run. Should it ever be picked in a crate that compiles (an attribute that asks more
/// of a parameter's type than `Deserialize`, unchecked), building it fails.
pub trait CannotDecodeArguments<T> {
    /// Never returns.
    fn decoders(&self) -> Decoders<T>;
}

impl<T> CannotDecodeArguments<T> for ArgumentsOf<T> {
    fn decoders(&self) -> Decoders<T> {
        // Evaluated only where this is used for a concrete `T`: a constant that does not
        // depend on `T` would fail every build of this crate.
        let () = NotDeserialize::<T>::REFUSED;
        unreachable!()
    }
}

/// A constant whose evaluation fails, for each `T` it is evaluated for.
struct NotDeserialize<T>(PhantomData<T>);

impl<T> NotDeserialize<T> {
    const REFUSED: () = panic!("a `#[tool]`'s arguments struct does not implement `Deserialize`");
}

// ---- the visitor `#[tool]` writes ------------------------------------------------------------
//
// For parameters without `#[serde]` attributes `#[tool]` writes the arguments struct's
// `Deserialize` impl itself, as what `#[derive(Deserialize)]` with `deny_unknown_fields`
// writes for such a struct does: the same errors in the same order (an unknown argument, one
// given twice, then the first one missing in the order of the parameters; an `Option` that is
// missing is `None`). Only a map is read, which is all the decoders give it. What does not
// depend on the tool's types is here: finding a key among the names, and what a missing
// argument decodes as.

/// Reads a key of the arguments object as the index of the name it is among `names`; any
/// other key is an unknown argument (`unknown_field`, with `names` as expected).
#[derive(Clone, Copy, Debug)]
pub struct FieldSeed(pub &'static [&'static str]);

impl<'de> DeserializeSeed<'de> for FieldSeed {
    type Value = usize;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for FieldSeed {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field identifier")
    }

    #[inline]
    fn visit_str<E: de::Error>(self, key: &str) -> Result<usize, E> {
        match self.0.iter().position(|name| *name == key) {
            Some(index) => Ok(index),
            None => Err(E::unknown_field(key, self.0)),
        }
    }
}

/// Reads the value of the argument `name` into `slot`; an argument given twice is an error
/// (`duplicate_field`), found before its value is read.
#[inline]
pub fn next_field<'de, A: MapAccess<'de>, T: de::Deserialize<'de>>(
    map: &mut A,
    slot: &mut Option<T>,
    name: &'static str,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(name));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

/// The argument `name` as read, or what a missing one decodes as: `None` for an `Option`, the
/// error `missing_field` for any other type.
#[inline]
pub fn field_or_missing<'de, T: de::Deserialize<'de>, E: de::Error>(
    slot: Option<T>,
    name: &'static str,
) -> Result<T, E> {
    match slot {
        Some(value) => Ok(value),
        None => T::deserialize(Missing(name, PhantomData)),
    }
}

/// What a missing argument is decoded from: nothing, which an `Option` reads as `None`.
struct Missing<E>(&'static str, PhantomData<E>);

impl<'de, E: de::Error> Deserializer<'de> for Missing<E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, E> {
        Err(E::missing_field(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

/// Decodes the arguments `args` into `T`, the arguments struct `#[tool]` derives: refuses
/// anything but an object (`null` is no arguments) and arguments nested deeper than
/// [`MAX_DEPTH`], then decodes the object as `serde_json::from_value` would.
///
/// Each argument is decoded by moving out of it, as `from_value` does; when one does not
/// decode, the path to what is wrong in it is put together as the error returns (`owned.rs`).
///
/// Generic only where it must be: what does not depend on `T` is compiled once, here, rather
/// than in every tool.
#[inline]
fn decode_value<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    let (map, sent) = checked_arguments(args)?;
    match T::deserialize(Arguments::new(map)) {
        Ok(decoded) => Ok(decoded),
        Err(error) => decode_failed(error, sent),
    }
}

/// The arguments object, held to the nesting limit; with a copy of it as sent when it holds
/// integral floats. JSON Schema counts `3.0` as an integer, so the decoder must too:
/// arguments that hold such numbers are decoded again with them written as integers if they
/// fail as sent.
#[allow(clippy::type_complexity)]
#[inline]
fn checked_arguments(
    args: Value,
) -> Result<(Map<String, Value>, Option<Map<String, Value>>), ToolError> {
    let map = arguments(args)?;
    let mut integral_floats = false;
    for value in map.values() {
        check_argument(value, &mut integral_floats)?;
    }
    let sent = integral_floats.then(|| map.clone());
    Ok((map, sent))
}

/// After `error`: decodes again with integral floats written as integers where they did not
/// decode as sent, or says what is wrong. `sent` is the arguments as sent when they hold
/// integral floats.
#[cold]
#[inline(never)]
fn decode_failed<T: DeserializeOwned>(
    error: DecodeError,
    sent: Option<Map<String, Value>>,
) -> Result<T, ToolError> {
    let mut decoded = None;
    decode_again(error, sent, &mut |arguments| {
        decoded = Some(T::deserialize(arguments)?);
        Ok(())
    })?;
    Ok(decoded.expect("the arguments decoded when decoding them again succeeded"))
}

/// [`decode_failed`] without its type: `decode` decodes the arguments it is given.
fn decode_again(
    mut error: DecodeError,
    sent: Option<Map<String, Value>>,
    decode: &mut dyn FnMut(Arguments) -> Result<(), DecodeError>,
) -> Result<(), ToolError> {
    if let Some(mut sent) = sent {
        // The argument that failed, if it holds an integral float, is written with integers
        // and the whole decoded again, until one fails that holds none. Its error is not about
        // a number it should have accepted.
        while let DecodeError::Value { key, .. } = &error
            && let Some(value) = sent.get_mut(key.as_str())
            && has_integral_float(value)
        {
            integral_floats_to_integers(value);
            match decode(Arguments::new(sent.clone())) {
                Ok(()) => return Ok(()),
                Err(again) => error = again,
            }
        }
    }
    Err(error.into_argument_error().into())
}

/// Walks the arguments object for [`Deserialize`], moving each entry out: the key is lent to
/// the struct's visitor, the value decoded as an [`Owned`], which finds the path to what did
/// not decode in it.
struct Arguments {
    entries: serde_json::map::IntoIter,
    /// The key read last, for an error about its value.
    key: String,
    /// Its value, until it is read.
    value: Option<Value>,
}

impl Arguments {
    fn new(map: Map<String, Value>) -> Self {
        Self {
            entries: map.into_iter(),
            key: String::new(),
            value: None,
        }
    }
}

impl<'de> Deserializer<'de> for Arguments {
    type Error = DecodeError;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

impl<'de> MapAccess<'de> for Arguments {
    type Error = DecodeError;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DecodeError> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        // The key is kept, for an error about its value, and lent to the struct's visitor;
        // the key and the value are kept apart, each moved once.
        self.key = key;
        self.value = Some(value);
        seed.deserialize(StrDeserializer::new(&self.key)).map(Some)
    }

    #[inline]
    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, DecodeError> {
        let Some(value) = self.value.take() else {
            return Err(DecodeError::Other("a value was read before its key".into()));
        };
        seed.deserialize(Owned(value))
            .map_err(|error| DecodeError::Value {
                key: std::mem::take(&mut self.key),
                error,
            })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// Why the arguments did not decode, as the arguments struct's derived visitor reports it:
/// told apart by type, never by the text of a message.
#[derive(Debug)]
enum DecodeError {
    /// An argument the tool does not take; `expected` lists the names it does take.
    Unknown {
        key: String,
        expected: &'static [&'static str],
    },
    /// A required argument is absent.
    Missing(&'static str),
    /// An argument was given twice, under its name and an alias.
    Duplicate(&'static str),
    /// The value of `key` did not decode.
    Value { key: String, error: PathError },
    /// Anything else the visitor said.
    Other(String),
}

impl DecodeError {
    /// The error the model is shown, naming the path to what did not decode.
    fn into_argument_error(self) -> ArgumentError {
        match self {
            Self::Unknown { key, expected } => {
                ArgumentError::new(render::unknown_argument(&key, expected))
            }
            Self::Missing(name) => ArgumentError::new(render::missing_argument(name)).at(name),
            Self::Duplicate(name) => ArgumentError::new(render::duplicate_argument(name)).at(name),
            Self::Value { key, error } => {
                let path = error.path_from(&key);
                let reason = error.error().to_string();
                ArgumentError::new(render::invalid_argument(&path, &reason)).at(path)
            }
            Self::Other(message) => ArgumentError::new(message),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unknown { key, .. } => write!(f, "unknown argument `{key}`"),
            Self::Missing(name) => write!(f, "missing argument `{name}`"),
            Self::Duplicate(name) => write!(f, "duplicate argument `{name}`"),
            Self::Value { key, error } => write!(f, "argument `{key}`: {error}"),
            Self::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for DecodeError {}

impl de::Error for DecodeError {
    #[cold]
    fn custom<M: fmt::Display>(message: M) -> Self {
        Self::Other(message.to_string())
    }

    #[cold]
    fn missing_field(field: &'static str) -> Self {
        Self::Missing(field)
    }

    #[cold]
    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        Self::Unknown {
            key: field.to_owned(),
            expected,
        }
    }

    #[cold]
    fn duplicate_field(field: &'static str) -> Self {
        Self::Duplicate(field)
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
fn arguments(args: Value) -> Result<Map<String, Value>, ToolError> {
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
fn check_argument(value: &Value, integral_floats: &mut bool) -> Result<(), ToolError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
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

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Numbers {
        n: Option<u8>,
        list: Option<Vec<i8>>,
        f: Option<f64>,
        raw: Option<Value>,
    }

    fn message(args: Value) -> String {
        match decode_value::<Numbers>(args).unwrap_err() {
            ToolError::Argument(error) => error.message().to_owned(),
            other => panic!("not an argument error: {other:?}"),
        }
    }

    #[test]
    fn integral_floats_decode_as_integers() {
        let decoded: Numbers =
            decode_value(json!({"n": 7.0, "list": [1.0, -2.0], "f": 7.0})).unwrap();
        assert_eq!(
            (decoded.n, decoded.list, decoded.f),
            (Some(7), Some(vec![1, -2]), Some(7.0))
        );
        assert_eq!(
            message(json!({"n": 300.0})),
            "argument `n`: invalid value: integer `300`, expected u8"
        );
        assert_eq!(
            message(json!({"n": 1.5})),
            "argument `n`: invalid type: floating point `1.5`, expected u8"
        );
        assert_eq!(
            message(json!({"list": [1.0, 2.5]})),
            "argument `list[1]`: invalid type: floating point `2.5`, expected i8"
        );
    }

    #[test]
    fn only_the_arguments_that_fail_as_sent_are_written_with_integers() {
        // `raw` decodes as sent, so it keeps its float; `n` does not, so it is retried.
        let decoded: Numbers = decode_value(json!({"raw": 2.0, "n": 3.0})).unwrap();
        assert_eq!((decoded.n, decoded.raw), (Some(3), Some(json!(2.0))));
    }

    #[test]
    fn structural_errors_are_told_apart_by_type() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Query {
            #[serde(alias = "query")]
            q: String,
            limit: u8,
        }
        let message = |args: Value| match decode_value::<Query>(args).unwrap_err() {
            ToolError::Argument(error) => {
                (error.message().to_owned(), error.path().map(str::to_owned))
            }
            other => panic!("not an argument error: {other:?}"),
        };
        assert_eq!(
            message(json!({"q": "x"})),
            (
                "missing required argument `limit`".to_owned(),
                Some("limit".to_owned())
            )
        );
        assert_eq!(
            message(json!({"q": "x", "limit": 1, "page": 2})).0,
            "unknown argument `page`; expected one of `q`, `query`, `limit`"
        );
        assert_eq!(
            message(json!({"q": "x", "query": "y", "limit": 1})),
            (
                "argument `q` is given twice, under two of its names".to_owned(),
                Some("q".to_owned())
            )
        );
        assert_eq!(
            message(json!({"q": 5, "limit": 1})),
            (
                "argument `q`: invalid type: integer `5`, expected a string".to_owned(),
                Some("q".to_owned())
            )
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
