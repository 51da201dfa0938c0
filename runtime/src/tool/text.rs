//! Decoding the model's arguments straight from the JSON text a provider handed over, in one
//! pass into what `#[tool]` decodes them into, building no `serde_json::Value`; and
//! what [`Tool::call_text`](super::Tool::call_text) does by default. The text is held to the
//! arguments' nesting limit (`nesting.rs`) before it is decoded.

use serde::Deserializer;
use serde::de::{DeserializeSeed, Visitor};

use super::nesting::{MAX_NESTING, nested_deeper_than};
use super::{Tool, ToolContext, ToolFuture};
use crate::error::{ArgumentError, ToolError};
use crate::render;

/// Decodes the arguments object in `text` into `T` (the arguments `#[tool]` decodes, as `seed`
/// says: see `value.rs`'s `decode_value`) in one pass, as `serde_json::from_str` would, building no `Value`. `None` when it does not
/// decode: the caller then parses `text` into a `Value` and calls
/// [`Tool::call`](crate::Tool::call), which says what is wrong.
///
/// Only an object is read as arguments (a derived struct would also take an array, which
/// `call` refuses). The text is held to the nesting limit of `serde_json`'s parser, as when it
/// is parsed into a `Value` — including parts the tool's types skip unread.
#[inline]
pub(super) fn from_text<T, S>(text: &str, seed: S) -> Option<T>
where
    S: for<'de> DeserializeSeed<'de, Value = T>,
{
    // The parser refuses a 128th level. A text this short cannot nest that deep.
    const LEVELS: usize = MAX_NESTING - 1;
    if text.len() > 2 * LEVELS && nested_deeper_than(text, LEVELS) {
        return None;
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = seed.deserialize(ObjectOnly(&mut deserializer)).ok()?;
    deserializer.end().ok()?;
    Some(value)
}

/// A deserializer that reads a struct from a JSON object only, never from an array.
struct ObjectOnly<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ObjectOnly<D> {
    type Error = D::Error;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

/// What [`Tool::call_text`](crate::Tool::call_text) does by default: parses `text` into a
/// `Value` and calls [`Tool::call`](crate::Tool::call); text that is not JSON is an argument
/// error.
pub fn call_parsed<'a, T: Tool + ?Sized>(
    tool: &'a T,
    text: &str,
    cx: ToolContext,
) -> ToolFuture<'a> {
    match parse(text) {
        Ok(arguments) => tool.call(arguments, cx),
        Err(error) => ToolFuture::ready(Err(error)),
    }
}

/// The arguments in `text` as a `Value`; text that is not JSON is an argument error.
pub(super) fn parse(text: &str) -> Result<serde_json::Value, ToolError> {
    serde_json::from_str(text).map_err(|error| {
        ArgumentError::new(render::invalid_json(&error.to_string(), MAX_NESTING)).into()
    })
}
