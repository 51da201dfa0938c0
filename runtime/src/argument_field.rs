//! The check `#[derive(Disclose)]` makes of every field of a `#[disclose(argument)]` variant:
//! the field's type must not be an error type. An argument error's `Display` is shown to the
//! model in full, so a field holding another error (a database error, an I/O error) would put
//! that error's message, with its connection strings, paths and SQL, into the model's text.
//!
//! Decided from the field's type, never from how it is spelled (an alias of an error type is
//! caught too), by method resolution at compile time: the derive writes, spanned at the field's
//! type,
//!
//! ```text
//! argument_field((&&&ArgumentField::<FieldType>::new()).reticent_argument_field())
//! ```
//!
//! and the most specific method available for `FieldType` is chosen: for an error type it
//! returns `&FieldType`, which [`argument_field`] takes only as a `&dyn FitForArgumentMessage`,
//! a trait no type implements, so the cast fails with that trait's message, at the field; for
//! any other type it returns a `&dyn FitForArgumentMessage` already, and the check passes.
//! Nothing here runs: the checks live in functions that are never called.

use std::error::Error;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// Carries a field's type for method resolution; holds no value.
pub struct ArgumentField<T: ?Sized>(PhantomData<T>);

impl<T: ?Sized> ArgumentField<T> {
    /// Names the field's type.
    #[inline]
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T: ?Sized> Default for ArgumentField<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: ?Sized> fmt::Debug for ArgumentField<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ArgumentField")
    }
}

/// Implemented by no type: a field whose type would have to implement it cannot be formatted
/// into a message shown to the model.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is an error type, and a `#[disclose(argument)]` message is shown to the model in full",
    label = "this field would put another error's message into the text the model sees",
    note = "write the argument message from the model's own input, and carry the error in a variant that is not `#[disclose(argument)]`, as its source: `#[error(\"..\")] Database(#[source] {Self})` or `Database(#[from] {Self})`; the model sees that variant by its kind only"
)]
pub trait FitForArgumentMessage: sealed::Never {}

mod sealed {
    /// Implemented by no type, so that no type can implement `FitForArgumentMessage`.
    pub trait Never {}
}

/// Where every argument field ends: an error type arrives as a reference to itself and cannot
/// be cast to `&dyn FitForArgumentMessage`.
#[inline]
pub fn argument_field(_: &dyn FitForArgumentMessage) {}

/// First choice: a field of a type that implements `std::error::Error`.
pub trait ErrorField<T> {
    /// The field, to be refused.
    fn reticent_argument_field(&self) -> &T {
        unreachable!("argument field checks are never called")
    }
}
impl<T: Error> ErrorField<T> for &&ArgumentField<T> {}

/// Second choice: a field of an error type that does not implement `std::error::Error`
/// (see `ErrorLike`).
pub trait ErrorLikeField<T> {
    /// The field, to be refused.
    fn reticent_argument_field(&self) -> &T {
        unreachable!("argument field checks are never called")
    }
}
impl<T: ErrorLike> ErrorLikeField<T> for &ArgumentField<T> {}

/// Last choice: any other type, which an argument message may format.
pub trait PlainField {
    /// Nothing to refuse.
    fn reticent_argument_field(&self) -> &'static dyn FitForArgumentMessage {
        unreachable!("argument field checks are never called")
    }
}
impl<T: ?Sized> PlainField for ArgumentField<T> {}

/// Error types that do not implement `std::error::Error`: boxed trait objects, and the error
/// types of `anyhow` and `eyre` (with the features of those names).
pub trait ErrorLike {}

impl ErrorLike for Box<dyn Error> {}
impl ErrorLike for Box<dyn Error + Send> {}
impl ErrorLike for Box<dyn Error + Sync> {}
impl ErrorLike for Box<dyn Error + Send + Sync> {}
// `Arc<dyn Error ..>` implements `std::error::Error` itself; these keep it refused if that
// ever changes.
impl ErrorLike for Arc<dyn Error> {}
impl ErrorLike for Arc<dyn Error + Send> {}
impl ErrorLike for Arc<dyn Error + Sync> {}
impl ErrorLike for Arc<dyn Error + Send + Sync> {}
#[cfg(feature = "anyhow")]
impl ErrorLike for anyhow::Error {}
#[cfg(feature = "eyre")]
impl ErrorLike for eyre::Report {}

/// Implemented by `#[derive(Disclose)]` for the type, when it has argument fields: its
/// function holds the checks of those fields, which the compiler makes when it checks the
/// impl. Never called.
pub trait ArgumentFields {
    /// The checks.
    fn check_argument_fields();
}
