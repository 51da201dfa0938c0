//! [`Secret`]: a value that cannot end up in a message.

use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};

/// A value that must never be formatted into a message: it has no `Display` (formatting it is
/// a compile error), its `Debug` prints `Secret(..)`, and it does not implement `Serialize`,
/// so it cannot be returned to the model either. Read it with [`Secret::expose`].
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

mod sealed {
    pub trait Sealed {}
}

impl<T: SecretCannotBeFormatted> fmt::Display for Secret<T> {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        unreachable!("SecretCannotBeFormatted has no implementations")
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
