//! The check `#[derive(Disclose)]` makes of every field of a `#[disclose(argument)]` variant:
//! the field's type must not be an error type. An argument error's `Display` is shown to the
//! model in full, so a field holding another error (a database error, an I/O error) would put
//! that error's message, with its connection strings, paths and SQL, into the model's text.
//!
//! A field's type is refused when it is an error type (it implements `std::error::Error`), or
//! gives access to one — it derefs to an error or `AsRef`s a `dyn Error`, as `anyhow::Error`,
//! `eyre::Report` and `Box<dyn Error>` do — whatever features `reticent` is built with.
//!
//! Decided from the field's type and the traits it implements, never from how it is spelled
//! (an alias of an error type is caught too), by method resolution at compile time: the derive
//! writes, spanned at the field's type,
//!
//! ```text
//! argument_field((&&&&&&&ArgumentField::<FieldType>::new()).reticent_argument_field())
//! ```
//!
//! and the most specific method available for `FieldType` is chosen: for a type refused it
//! returns `&FieldType`, which [`argument_field`] takes only as a `&dyn FitForArgumentMessage`,
//! a trait no type implements, so the cast fails with that trait's message, at the field; for
//! any other type it returns a `&dyn FitForArgumentMessage` already, and the check passes.
//! Nothing here runs: the checks live in functions that are never called.

use std::error::Error;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

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

/// Where every argument field ends: a field refused arrives as a reference to its own type
/// and cannot be cast to `&dyn FitForArgumentMessage`.
#[inline]
pub fn argument_field(_: &dyn FitForArgumentMessage) {}

/// Writes a level of the probe: a trait whose method, for a field type `T` that meets the
/// bounds, returns `&T`, to be refused.
macro_rules! refused {
    ($(#[$doc:meta])* $name:ident for $probe:ty where $($bounds:tt)*) => {
        $(#[$doc])*
        pub trait $name<T> {
            /// The field, to be refused.
            fn reticent_argument_field(&self) -> &T {
                unreachable!("argument field checks are never called")
            }
        }
        impl<T> $name<T> for $probe where $($bounds)* {}
    };
}

refused! {
    /// First choice: a field of a type that implements `std::error::Error`.
    ErrorField for &&&&&&ArgumentField<T> where T: Error
}

refused! {
    /// Second choice: a type that derefs to an error: `anyhow::Error` and `eyre::Report`
    /// (to `dyn Error + Send + Sync`), `Box<dyn Error>`, `Rc<E>`.
    DerefErrorField for &&&&&ArgumentField<T> where T: Deref, T::Target: Error
}

refused! {
    /// Then a type that lends out a `dyn Error` with `AsRef`, with each set of auto traits.
    AsRefErrorField for &&&&ArgumentField<T> where T: AsRef<dyn Error + 'static>
}

refused! {
    /// See [`AsRefErrorField`].
    AsRefSendErrorField for &&&ArgumentField<T> where T: AsRef<dyn Error + Send + 'static>
}

refused! {
    /// See [`AsRefErrorField`].
    AsRefSyncErrorField for &&ArgumentField<T> where T: AsRef<dyn Error + Sync + 'static>
}

refused! {
    /// See [`AsRefErrorField`].
    AsRefSendSyncErrorField for &ArgumentField<T>
    where T: AsRef<dyn Error + Send + Sync + 'static>
}

/// Last choice: any other type, which an argument message may format.
pub trait PlainField {
    /// Nothing to refuse.
    fn reticent_argument_field(&self) -> &'static dyn FitForArgumentMessage {
        unreachable!("argument field checks are never called")
    }
}
impl<T: ?Sized> PlainField for ArgumentField<T> {}

/// Implemented by `#[derive(Disclose)]` for the type, when it has argument fields: its
/// function holds the checks of those fields, which the compiler makes when it checks the
/// impl. Never called.
pub trait ArgumentFields {
    /// The checks.
    fn check_argument_fields();
}
