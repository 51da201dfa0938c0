//! What the code `#[tool]` writes decodes a tool's arguments with: the decoders of its
//! arguments, picked at compile time (`ArgumentsOf` for a derived arguments struct,
//! `params.rs`'s `ParametersOf` for the tuple of the parameters' types), and the parts of the
//! tuple's visitor that do not depend on its types. The decoding itself is `value.rs`'s (from a
//! `serde_json::Value`) and `text.rs`'s (from JSON text).

use std::fmt;
use std::marker::PhantomData;

use serde::Deserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde_json::Value;

use super::text::from_text;
use super::value::decode_value;
use crate::error::ToolError;

/// The names of a tool's parameters as the model writes them, in order.
pub(super) type Names = &'static [&'static str];

/// The arguments struct `T` of a `#[tool]`, for autoref specialization: `#[tool]` writes
/// `(&&ArgumentsOf::<T>::new()).decode_value(args)`, which is [`DecodeArguments`]'s when `T`
/// implements `Deserialize` and [`CannotDecodeArguments`]'s otherwise — and the same for
/// `from_text`, and for the schema ([`ArgumentsSchema`](super::schema::ArgumentsSchema)).
///
/// `T` implements the derived traits exactly when every parameter's type does, which `#[tool]`
/// checks with a compile error at each parameter's type
/// ([`ToolParam`](crate::rules::ToolParam), [`ToolParamSchema`](crate::rules::ToolParamSchema)).
/// So the fallbacks are picked only in a crate that does not compile, and add no errors of
/// their own to the one at the user's type.
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
/// one pass, with the names of its parameters when `T` is their tuple
/// ([`Parameters`](super::params::Parameters)). Function pointers, so that the runtime's
/// methods around a tool (`body.rs`) are written once.
pub struct Decoders<T> {
    /// Decodes the arguments object `args` into `T`, or says what is wrong.
    pub value: fn(Value, Names) -> Result<T, ToolError>,
    /// Decodes the arguments object in the JSON text `text` into `T` in one pass; `None` when
    /// it does not decode that way.
    pub text: fn(&str, Names) -> Option<T>,
    /// The names of the parameters, for a tuple of them; empty for a derived struct, which
    /// knows its own.
    pub names: Names,
}

impl<T> Decoders<T> {
    /// Decodes the arguments object `args`, or says what is wrong.
    #[inline]
    pub fn decode_value(&self, args: Value) -> Result<T, ToolError> {
        (self.value)(args, self.names)
    }

    /// Decodes the arguments object in `text` in one pass; `None` when it does not decode that
    /// way.
    #[inline]
    pub fn decode_text(&self, text: &str) -> Option<T> {
        (self.text)(text, self.names)
    }
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
            value: |args, _| decode_value(args, PhantomData::<T>),
            text: |text, _| from_text(text, PhantomData::<T>),
            names: &[],
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

// ---- the visitor of the parameters' tuple ----------------------------------------------------
//
// For parameters without `#[serde]` or `#[schemars]` attributes the tuple of their types is
// decoded by a visitor written once per number of parameters (`params.rs`), as what
// `#[derive(Deserialize)]` with `deny_unknown_fields` writes for a struct of them does: the
// same errors in the same order (an unknown argument, one given twice, then the first one
// missing in the order of the parameters; an `Option` that is missing is `None`). Only a map is
// read, which is all the decoders give it. What does not depend on the types is here: finding a
// key among the names, and what a missing argument decodes as.

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
