//! Decoding one argument by moving out of its `Value`, as `serde_json::from_value` does, with the
//! path to the part that did not decode (`address.zip`, `items[2]`, `shape.Circle.radius`) put
//! together as the error returns through each array, object and enum variant: nothing is
//! tracked, copied or kept while decoding succeeds.
//!
//! [`Owned`] is `Value`'s own deserializer wherever a value holds nothing nested (the same
//! visits, the same errors: it forwards to it). Where it holds an array or an object it walks
//! it itself, so that each element is decoded as an `Owned` too and an error coming back is
//! marked with the element's index or key. Object keys are read as `serde_json` reads them
//! (numbers and booleans from the key's text).
//!
//! Longer than most files: it is two `Deserializer`s (the value and an object key) with
//! serde's full set of methods each, and the accesses that walk arrays, objects and enum
//! variants; the path is only right if all of them mark it the same way. The access that walks
//! an object ([`Entries`]) also walks the arguments object itself (`value.rs`).

use std::fmt::{self, Write as _};
use std::marker::PhantomData;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Unexpected,
    VariantAccess, Visitor,
};
use serde_json::{Map, Value};

/// The name `serde_json` gives `RawValue`'s newtype, which its `Value` deserializer handles
/// itself.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A value to decode by moving out of it.
pub(super) struct Owned(pub(super) Value);

/// Why a value did not decode: `serde_json`'s error, and where in the value.
pub(super) struct PathError(Box<Inner>);

struct Inner {
    error: serde_json::Error,
    /// Innermost first.
    path: Vec<Segment>,
}

enum Segment {
    Index(usize),
    Key(String),
    Variant(String),
}

impl PathError {
    #[cold]
    fn at(mut self, segment: Segment) -> Self {
        self.0.path.push(segment);
        self
    }

    /// The path from the argument `key` to what did not decode: `key` itself when it is the
    /// argument's value as a whole.
    pub(super) fn path_from(&self, key: &str) -> String {
        let mut path = key.to_owned();
        for segment in self.0.path.iter().rev() {
            match segment {
                Segment::Index(index) => {
                    let _ = write!(path, "[{index}]");
                }
                Segment::Key(name) | Segment::Variant(name) => {
                    path.push('.');
                    path.push_str(name);
                }
            }
        }
        path
    }

    /// `serde_json`'s error.
    pub(super) fn error(&self) -> &serde_json::Error {
        &self.0.error
    }
}

impl From<serde_json::Error> for PathError {
    #[cold]
    fn from(error: serde_json::Error) -> Self {
        Self(Box::new(Inner {
            error,
            path: Vec::new(),
        }))
    }
}

impl fmt::Debug for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PathError")
            .field("error", &self.0.error)
            .field("path", &self.path_from(""))
            .finish()
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.error, f)
    }
}

impl std::error::Error for PathError {}

/// Every constructor is `serde_json`'s, so the messages are the ones `from_value` gives.
impl de::Error for PathError {
    #[cold]
    fn custom<T: fmt::Display>(message: T) -> Self {
        serde_json::Error::custom(message).into()
    }

    #[cold]
    fn invalid_type(unexpected: Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        serde_json::Error::invalid_type(unexpected, expected).into()
    }

    #[cold]
    fn invalid_value(unexpected: Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        serde_json::Error::invalid_value(unexpected, expected).into()
    }

    #[cold]
    fn invalid_length(len: usize, expected: &dyn de::Expected) -> Self {
        serde_json::Error::invalid_length(len, expected).into()
    }

    #[cold]
    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        serde_json::Error::unknown_variant(variant, expected).into()
    }

    #[cold]
    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        serde_json::Error::unknown_field(field, expected).into()
    }

    #[cold]
    fn missing_field(field: &'static str) -> Self {
        serde_json::Error::missing_field(field).into()
    }

    #[cold]
    fn duplicate_field(field: &'static str) -> Self {
        serde_json::Error::duplicate_field(field).into()
    }
}

/// Forwards to `Value`'s own deserializer.
macro_rules! forward {
    ($($method:ident),*) => {
        $(
            #[inline]
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
                self.0.$method(visitor).map_err(PathError::from)
            }
        )*
    };
}

impl<'de> Deserializer<'de> for Owned {
    type Error = PathError;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(entries) => visit_object(entries, visitor),
            value => value.deserialize_any(visitor).map_err(PathError::from),
        }
    }

    forward!(
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_unit,
        deserialize_identifier,
        deserialize_ignored_any
    );

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        self.0
            .deserialize_unit_struct(name, visitor)
            .map_err(PathError::from)
    }

    #[inline]
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        if name == RAW_VALUE_TOKEN {
            return self
                .0
                .deserialize_newtype_struct(name, visitor)
                .map_err(PathError::from);
        }
        visitor.visit_newtype_struct(self)
    }

    #[inline]
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            value => value.deserialize_seq(visitor).map_err(PathError::from),
        }
    }

    #[inline]
    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        self.deserialize_seq(visitor)
    }

    #[inline]
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        self.deserialize_seq(visitor)
    }

    #[inline]
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Object(entries) => visit_object(entries, visitor),
            value => value.deserialize_map(visitor).map_err(PathError::from),
        }
    }

    #[inline]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(entries) => visit_object(entries, visitor),
            value => value
                .deserialize_struct(name, fields, visitor)
                .map_err(PathError::from),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        // As `serde_json` reads an enum: `"Variant"`, or `{"Variant": value}`.
        match self.0 {
            Value::Object(entries) => {
                let mut entries = entries.into_iter();
                match (entries.next(), entries.next()) {
                    (Some((variant, value)), None) => visitor.visit_enum(Variant {
                        variant,
                        value: Some(value),
                    }),
                    _ => Err(de::Error::invalid_value(
                        Unexpected::Map,
                        &"map with a single key",
                    )),
                }
            }
            Value::String(variant) => visitor.visit_enum(Variant {
                variant,
                value: None,
            }),
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &"string or map",
            )),
        }
    }
}

/// What `value` is, for an error message, as `serde_json` says it.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (None, Some(i), _) => Unexpected::Signed(i),
            (None, None, Some(f)) => Unexpected::Float(f),
            (None, None, None) => Unexpected::Other("number"),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// An array, each element decoded as an [`Owned`]; as `serde_json` does, elements left unread
/// are an error.
fn visit_array<'de, V: Visitor<'de>>(items: Vec<Value>, visitor: V) -> Result<V::Value, PathError> {
    let len = items.len();
    let mut seq = Seq {
        items: items.into_iter(),
        index: 0,
    };
    let value = visitor.visit_seq(&mut seq)?;
    if seq.items.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(len, &"fewer elements in array"))
    }
}

/// An object, each value decoded as an [`Owned`]; as `serde_json` does, entries left unread
/// are an error.
fn visit_object<'de, V: Visitor<'de>>(
    entries: Map<String, Value>,
    visitor: V,
) -> Result<V::Value, PathError> {
    let len = entries.len();
    let mut map = Entries::<PathError>::new(entries);
    let value = visitor.visit_map(&mut map)?;
    if map.entries.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(len, &"fewer elements in map"))
    }
}

struct Seq {
    items: std::vec::IntoIter<Value>,
    index: usize,
}

impl<'de> SeqAccess<'de> for Seq {
    type Error = PathError;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, PathError> {
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        let index = self.index;
        self.index += 1;
        seed.deserialize(Owned(item))
            .map(Some)
            .map_err(|error| error.at(Segment::Index(index)))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// An object's entries, each moved out as it is read: the key is lent to the visitor and kept
/// for an error about its value, the value decoded as an [`Owned`]. `E` says how an error in a
/// key or a value is reported: a [`PathError`] inside an argument, the arguments decoder's own
/// error for the arguments object itself (`value.rs`).
pub(super) struct Entries<E> {
    entries: serde_json::map::IntoIter,
    /// The key read last, for an error in its value.
    key: String,
    /// Its value, until it is read.
    value: Option<Value>,
    error: PhantomData<fn() -> E>,
}

impl<E> Entries<E> {
    pub(super) fn new(map: Map<String, Value>) -> Self {
        Self {
            entries: map.into_iter(),
            key: String::new(),
            value: None,
            error: PhantomData,
        }
    }
}

/// How [`Entries`] reads a key, and reports an error in a key or in its value.
pub(super) trait EntryError: de::Error {
    /// Reads the key `key` with `seed`.
    fn read_key<'de, K: DeserializeSeed<'de>>(seed: K, key: &mut String) -> Result<K::Value, Self>;

    /// `error`, which the value of `key` did not decode with.
    fn in_value(error: PathError, key: String) -> Self;
}

impl EntryError for PathError {
    #[inline]
    fn read_key<'de, K: DeserializeSeed<'de>>(seed: K, key: &mut String) -> Result<K::Value, Self> {
        // The key is lent, and kept for the path, rather than moved: a struct's field names
        // are read from a `&str` without a copy. A key that is refused (a field the type does
        // not have) is the path's last part.
        match seed.deserialize(Key(key)) {
            Ok(key) => Ok(key),
            Err(error) => Err(error.at(Segment::Key(std::mem::take(key)))),
        }
    }

    #[inline]
    fn in_value(error: PathError, key: String) -> Self {
        error.at(Segment::Key(key))
    }
}

impl<'de, E: EntryError> MapAccess<'de> for Entries<E> {
    type Error = E;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, E> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        // The key and the value are kept apart, each moved once.
        self.key = key;
        self.value = Some(value);
        E::read_key(seed, &mut self.key).map(Some)
    }

    #[inline]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, E> {
        let Some(value) = self.value.take() else {
            return Err(de::Error::custom("a value was read before its key"));
        };
        seed.deserialize(Owned(value))
            .map_err(|error| E::in_value(error, std::mem::take(&mut self.key)))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// An enum's variant, and what it holds (`None` for the `"Variant"` form).
struct Variant {
    variant: String,
    value: Option<Value>,
}

impl<'de> EnumAccess<'de> for Variant {
    type Error = PathError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), PathError> {
        let variant = seed.deserialize(Key(&self.variant))?;
        Ok((variant, self))
    }
}

impl<'de> VariantAccess<'de> for Variant {
    type Error = PathError;

    fn unit_variant(self) -> Result<(), PathError> {
        let Self { variant, value } = self;
        match value {
            Some(value) => de::Deserialize::deserialize(Owned(value))
                .map_err(|error: PathError| error.at(Segment::Variant(variant))),
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, PathError> {
        let Self { variant, value } = self;
        let decoded = match value {
            Some(value) => seed.deserialize(Owned(value)),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        };
        decoded.map_err(|error| error.at(Segment::Variant(variant)))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        let Self { variant, value } = self;
        let decoded = match value {
            Some(Value::Array(items)) if items.is_empty() => visitor.visit_unit(),
            Some(Value::Array(items)) => visit_array(items, visitor),
            Some(other) => Err(de::Error::invalid_type(
                unexpected(&other),
                &"tuple variant",
            )),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        };
        decoded.map_err(|error| error.at(Segment::Variant(variant)))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        let Self { variant, value } = self;
        let decoded = match value {
            Some(Value::Object(entries)) => visit_object(entries, visitor),
            Some(other) => Err(de::Error::invalid_type(
                unexpected(&other),
                &"struct variant",
            )),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        };
        decoded.map_err(|error| error.at(Segment::Variant(variant)))
    }
}

/// An object's key, read as `serde_json` reads one: as a string, or as the number or boolean
/// its text holds when the type asks for one.
struct Key<'a>(&'a str);

/// A number read from a key's text, as `serde_json` reads one: the whole text is a JSON number.
macro_rules! numeric_key {
    ($($method:ident),*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
                let text = self.0;
                if !text.starts_with(|c: char| c.is_ascii_digit() || c == '-')
                    || text.contains(|c: char| c.is_ascii_whitespace())
                {
                    return Err(not_a_numeric_key());
                }
                let number: serde_json::Number =
                    serde_json::from_str(text).map_err(|_| not_a_numeric_key())?;
                number.deserialize_any(visitor).map_err(PathError::from)
            }
        )*
    };
}

/// `serde_json`'s message for a key that should hold a number and does not.
#[cold]
fn not_a_numeric_key() -> PathError {
    de::Error::custom("invalid value: expected key to be a number in quotes")
}

impl<'de> Deserializer<'de> for Key<'_> {
    type Error = PathError;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        visitor.visit_str(self.0)
    }

    numeric_key!(
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64
    );

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            other => Err(de::Error::invalid_type(Unexpected::Str(other), &visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        // Keys cannot be null.
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        de::IntoDeserializer::<PathError>::into_deserializer(self.0)
            .deserialize_enum(name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use serde::Deserialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::Owned;

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Address {
        street: String,
        zip: u32,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Assignee {
        name: String,
        #[serde(default)]
        team_tags: Vec<String>,
        address: Option<Address>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    enum Shape {
        Point,
        Circle { radius: f64 },
        Line(Address, Address),
        Tagged(Vec<u8>),
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "type")]
    enum Internal {
        A { n: u8 },
        B { s: String },
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(untagged)]
    enum Loose {
        Number(u8),
        Named { name: String },
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Wrapper(Vec<Address>);

    #[derive(Debug, PartialEq, Deserialize)]
    struct Flat {
        id: u8,
        #[serde(flatten)]
        rest: Address,
    }

    /// Decodes `value` as `T` both ways: as an [`Owned`] and with `serde_json::from_value`
    /// (for the value) or `serde_path_to_error` (for the error and its path).
    fn same<T: DeserializeOwned + PartialEq + std::fmt::Debug>(value: Value) {
        let ours = T::deserialize(Owned(value.clone()));
        let theirs = serde_path_to_error::deserialize::<_, T>(value.clone());
        match (ours, theirs) {
            (Ok(ours), Ok(theirs)) => assert_eq!(ours, theirs, "{value}"),
            (Err(ours), Err(theirs)) => {
                let path = theirs.path().to_string();
                let path = if path == "." { String::new() } else { path };
                let ours_path = ours.path_from("");
                let ours_path = ours_path.strip_prefix('.').unwrap_or(&ours_path);
                // Where it cannot tell a key (one that is not a string), `serde_path_to_error`
                // writes `?`; the key is named here.
                if !path.contains('?') {
                    assert_eq!(ours_path, path, "the path, for {value}");
                }
                // A number read from an object's key: `serde_json` reads it with its text
                // parser, whose errors say where in the key (`at line 1 column 2`).
                let theirs = theirs.into_inner().to_string();
                let theirs = match theirs.rfind(" at line 1 column ") {
                    Some(at) => &theirs[..at],
                    None => &theirs,
                };
                assert_eq!(ours.error().to_string(), theirs, "the message, for {value}");
            }
            (ours, theirs) => panic!("{value}: ours {ours:?}, serde_json's {theirs:?}"),
        }
    }

    #[test]
    fn decodes_as_from_value_does_and_names_the_path_serde_path_to_error_names() {
        let addresses = [
            json!({"street": "Main", "zip": 1}),
            json!({"street": "Main", "zip": "1"}),
            json!({"street": "Main"}),
            json!({"street": "Main", "zip": 1, "extra": true}),
            json!(["Main", 1]),
            json!(["Main"]),
            json!(["Main", 1, 2]),
            json!("Main"),
            json!(null),
        ];
        for value in addresses {
            same::<Address>(value.clone());
            same::<Option<Address>>(value.clone());
            same::<Vec<Address>>(json!([{"street": "a", "zip": 2}, value.clone()]));
            same::<Wrapper>(json!([value.clone()]));
            same::<Assignee>(json!({"name": "Ada", "address": value.clone()}));
            same::<HashMap<String, Address>>(json!({"home": value.clone()}));
            same::<Shape>(json!({"Line": [{"street": "a", "zip": 2}, value.clone()]}));
            same::<(u8, Address)>(json!([1, value.clone()]));
            same::<Loose>(json!({"name": value.clone()}));
        }
        let others = [
            json!({"name": "Ada", "teamTags": ["a", 2]}),
            json!({"name": "Ada", "teamTags": null}),
            json!({"name": 1}),
            json!({}),
        ];
        for value in others {
            same::<Assignee>(value);
        }
        for value in [
            json!("Point"),
            json!({"Point": null}),
            json!({"Point": []}),
            json!({"Circle": {"radius": 2.5}}),
            json!({"Circle": {"radius": "big"}}),
            json!({"Circle": {}}),
            json!({"Circle": [1.0]}),
            json!({"Circle": 2}),
            json!({"Tagged": [1, 2, 300]}),
            json!({"Tagged": {"a": 1}}),
            json!({"Line": {"a": 1}}),
            json!({"Line": []}),
            json!({"Square": {"side": 1}}),
            json!({"Circle": {"radius": 1}, "Point": null}),
            json!(3),
        ] {
            same::<Shape>(value.clone());
            same::<Vec<Shape>>(json!([value]));
        }
        for value in [
            json!({"type": "A", "n": 1}),
            json!({"type": "A", "n": 300}),
            json!({"type": "B", "s": 1}),
            json!({"type": "C"}),
            json!({"n": 1}),
        ] {
            same::<Internal>(value.clone());
            same::<BTreeMap<String, Internal>>(json!({"k": value}));
        }
        for value in [
            json!(1),
            json!(300),
            json!({"name": "x"}),
            json!({"name": 2}),
        ] {
            same::<Loose>(value);
        }
        for value in [
            json!({"1": "a", "20": "b"}),
            json!({"-1": "a"}),
            json!({"x": "a"}),
            json!({"1": 2}),
            json!({"1.5": "a"}),
        ] {
            same::<BTreeMap<u32, String>>(value.clone());
            same::<BTreeMap<i64, String>>(value);
        }
        for value in [json!({"true": 1, "false": 2}), json!({"yes": 1})] {
            same::<BTreeMap<bool, u8>>(value);
        }
        same::<Flat>(json!({"id": 1, "street": "a", "zip": 2}));
        same::<Flat>(json!({"id": 1, "street": "a", "zip": "2"}));
        same::<Value>(json!({"a": [1, {"b": null}], "c": "d"}));
        same::<(String, Vec<Option<u8>>)>(json!(["a", [1, null, "x"]]));
    }

    #[test]
    fn paths_are_written_from_the_argument() {
        let error = Vec::<Assignee>::deserialize(Owned(json!([
            {"name": "a"},
            {"name": "b", "address": {"street": "s", "zip": "x"}}
        ])))
        .unwrap_err();
        assert_eq!(error.path_from("people"), "people[1].address.zip");
        let error = Shape::deserialize(Owned(json!({"Circle": {"radius": "x"}}))).unwrap_err();
        assert_eq!(error.path_from("shape"), "shape.Circle.radius");
        let error = u8::deserialize(Owned(json!("x"))).unwrap_err();
        assert_eq!(error.path_from("n"), "n");
    }
}
