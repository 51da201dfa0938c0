//! Decoding the model's arguments from a `serde_json::Value` into what `#[tool]` decodes them
//! into (the tuple of its parameters' types, or the arguments struct it derives): the arguments object, JSON Schema's view of `3.0` as an integer, and the
//! error the model is shown, naming the argument and the path into it where there is one. Each
//! argument's value is decoded by moving out of it (`owned.rs`); the arguments are held to
//! their nesting limit as they are taken apart (`nesting.rs`).
//!
//! Decoding the arguments and naming what is wrong with them are one job: the error needs what
//! the decoder saw.

use std::fmt;

use serde::Deserializer;
use serde::de::value::StrDeserializer;
use serde::de::{self, DeserializeSeed, Visitor};
use serde_json::{Map, Value};

use super::nesting::check_argument;
use super::owned::{Entries, EntryError, PathError};
use crate::error::{ArgumentError, ToolError};
use crate::render;

/// Decodes the arguments `args` into `T`, what `#[tool]` decodes them into: refuses
/// anything but an object (`null` is no arguments) and arguments nested deeper than
/// [`MAX_NESTING`](super::nesting::MAX_NESTING), then decodes the object as
/// `serde_json::from_value` would.
///
/// Each argument is decoded by moving out of it, as `from_value` does; when one does not
/// decode, the path to what is wrong in it is put together as the error returns (`owned.rs`).
///
/// `seed` is how `T` is decoded: `PhantomData<T>` for a struct that is `Deserialize`, or the
/// names of the parameters for their tuple (`params.rs`).
///
/// Generic only where it must be: what does not depend on `T` is compiled once, here, rather
/// than in every tool.
#[inline]
pub(super) fn decode_value<T, S>(args: Value, seed: S) -> Result<T, ToolError>
where
    S: for<'de> DeserializeSeed<'de, Value = T> + Copy,
{
    let (map, sent) = checked_arguments(args)?;
    match seed.deserialize(ArgumentMap::new(map)) {
        Ok(decoded) => Ok(decoded),
        Err(error) => decode_failed(error, sent, seed),
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
fn decode_failed<T, S>(
    error: DecodeError,
    sent: Option<Map<String, Value>>,
    seed: S,
) -> Result<T, ToolError>
where
    S: for<'de> DeserializeSeed<'de, Value = T> + Copy,
{
    let mut decoded = None;
    decode_again(error, sent, &mut |arguments| {
        decoded = Some(seed.deserialize(arguments)?);
        Ok(())
    })?;
    Ok(decoded.expect("the arguments decoded when decoding them again succeeded"))
}

/// [`decode_failed`] without its type: `decode` decodes the arguments it is given.
fn decode_again(
    mut error: DecodeError,
    sent: Option<Map<String, Value>>,
    decode: &mut dyn FnMut(ArgumentMap) -> Result<(), DecodeError>,
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
            match decode(ArgumentMap::new(sent.clone())) {
                Ok(()) => return Ok(()),
                Err(again) => error = again,
            }
        }
    }
    Err(error.into_argument_error().into())
}

/// The arguments object as a [`Deserializer`] for the arguments: its entries, each
/// moved out as it is read (`owned.rs`), with errors told apart by type ([`DecodeError`]).
struct ArgumentMap(Entries<DecodeError>);

impl ArgumentMap {
    fn new(map: Map<String, Value>) -> Self {
        Self(Entries::new(map))
    }
}

impl<'de> Deserializer<'de> for ArgumentMap {
    type Error = DecodeError;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_map(self.0)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

impl EntryError for DecodeError {
    /// The key is lent to the struct's visitor, which says what is wrong with it.
    #[inline]
    fn read_key<'de, K: DeserializeSeed<'de>>(seed: K, key: &mut String) -> Result<K::Value, Self> {
        seed.deserialize(StrDeserializer::new(key))
    }

    #[inline]
    fn in_value(error: PathError, key: String) -> Self {
        Self::Value { key, error }
    }
}

/// Why the arguments did not decode, as the arguments' visitor reports it:
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
/// allocating: `arguments` has already bounded the depth to [`MAX_NESTING`](super::nesting::MAX_NESTING).
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
    use std::marker::PhantomData;

    use serde::Deserialize;
    use serde_json::json;

    use super::*;

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
        match decode_value(args, PhantomData::<Numbers>).unwrap_err() {
            ToolError::Argument(error) => error.message().to_owned(),
            other => panic!("not an argument error: {other:?}"),
        }
    }

    #[test]
    fn integral_floats_decode_as_integers() {
        let decoded: Numbers = decode_value(
            json!({"n": 7.0, "list": [1.0, -2.0], "f": 7.0}),
            PhantomData,
        )
        .unwrap();
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
        let decoded: Numbers = decode_value(json!({"raw": 2.0, "n": 3.0}), PhantomData).unwrap();
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
        let message = |args: Value| match decode_value(args, PhantomData::<Query>).unwrap_err() {
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
