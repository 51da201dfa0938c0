//! [`Secret`]: a value that cannot end up in a message.

use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A value that must never be formatted into a message: it has no `Display` (formatting it is
/// a compile error), its `Debug` prints `Secret(..)`, and it cannot be serialized (also a
/// compile error), so it cannot be returned to the model either. Read it with
/// [`Secret::expose`].
///
/// ```
/// use reticent::Secret;
///
/// let key = Secret::new(String::from("sk-live-123"));
/// assert_eq!(format!("{key:?}"), "Secret(..)");
/// assert_eq!(key.expose(), "sk-live-123");
/// ```
///
/// ```compile_fail
/// let key = reticent::Secret::new(String::from("sk-live-123"));
/// let message = format!("bad key {key}"); // error: a `Secret` cannot be formatted
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    /// Wraps a value.
    pub const fn new(value: T) -> Self {
        Self(value)
    }

    /// The value, for the one place that really needs it.
    pub fn expose(&self) -> &T {
        &self.0
    }

    /// Unwraps the value.
    pub fn into_inner(self) -> T {
        self.0
    }

    // Two hooks for diagnostics only; neither makes a `Secret` printable.
    //
    // `thiserror` formats a field written `{0}` in `#[error(..)]` through a method named
    // `as_display`, whose failure (E0599) cannot carry a message of ours. This one is found
    // first and returns the secret unchanged, so the format string itself fails with the
    // message of `SecretCannotBeFormatted`, at the user's `#[error(..)]`.
    #[doc(hidden)]
    pub fn as_display(&self) -> &Self {
        self
    }

    // `ToString::to_string` would fail with "doesn't implement `Display`" and no reason; this
    // one is found first and can never be called.
    #[doc(hidden)]
    #[allow(clippy::inherent_to_string_shadow_display)] // the `Display` impl never applies
    pub fn to_string(&self) -> String
    where
        T: SecretCannotBeFormatted,
    {
        unreachable!("SecretCannotBeFormatted has no implementations")
    }
}

impl<T> From<T> for Secret<T> {
    fn from(value: T) -> Self {
        Self(value)
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// Never implemented: it makes `format!("{}", secret)` fail with a message that says why.
#[diagnostic::on_unimplemented(
    message = "a `Secret` cannot be formatted into a message",
    label = "this would put a secret into text that can reach a log, an error message or the model",
    note = "format something that identifies the value instead (a name or an id), or call `.expose()` where the raw value is truly needed"
)]
pub trait SecretCannotBeFormatted: sealed::Sealed {}

/// Never implemented: it makes serializing a `Secret` (returning it from a tool, or deriving
/// `Serialize` for a type that holds one) fail with a message that says why.
#[diagnostic::on_unimplemented(
    message = "a `Secret` cannot be serialized",
    label = "this would put a secret into JSON that can reach the model, a log or a recording",
    note = "serialize something that identifies the value instead (a name or an id), or call `.expose()` where the raw value is truly needed"
)]
pub trait SecretCannotBeSerialized: sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

// The two impls below exist only for their bound, whose trait's message says why and what to
// do instead. rustc (1.95) then adds "the trait `Display` is implemented for `Secret<T>`",
// pointing at the impl: the ui-tests' `.stderr` show this file's path there. Every other shape
// tried keeps a path here or loses the message:
// - `#[diagnostic::do_not_recommend]` on these impls loses it (std's "doesn't implement
//   `Display`", suggesting `{:?}`; serde's "check whether the crate offers a `serde` feature
//   flag"), and `.to_string()` then points at the struct (E0599) or at the inherent hook's
//   bound;
// - on an impl of the inner trait, rustc falls back to pointing at these impls;
// - one impl of the inner trait (for a private type), or a second impl of `Display` for
//   `Secret<_>`, is pointed at in turn;
// - ten or more impls of the inner trait remove the path, and list eight meaningless types.
// The message that says the fix is worth the line.
impl<T: SecretCannotBeFormatted> fmt::Display for Secret<T> {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        unreachable!("SecretCannotBeFormatted has no implementations")
    }
}

impl<T: SecretCannotBeSerialized> Serialize for Secret<T> {
    fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        unreachable!("SecretCannotBeSerialized has no implementations")
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Secret<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Self)
    }
}

impl<T: JsonSchema> JsonSchema for Secret<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
}
