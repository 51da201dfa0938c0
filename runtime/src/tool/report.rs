//! Classifying an `anyhow::Error` or an `eyre::Report` (features `anyhow`, `eyre`): an error
//! whose type says nothing, so its chain of errors is read, with the bounded walker, when the
//! tool fails.
//!
//! What the model is shown:
//!
//! 1. the first argument error in the chain, as an argument error with its own message alone:
//!    an [`ArgumentError`] (`bail!(ArgumentError::new(".."))`, also as a context value),
//!    a [`ToolError::Argument`], or a `#[derive(Disclose)]` error whose variant is
//!    `#[disclose(argument)]` (its `Display`);
//! 2. else the kind of the first [`Failure`], [`ToolError::Failed`] or `#[derive(Disclose)]`
//!    error in the chain, with its retry hint, and fatal if it is;
//! 3. else the kind `Error`.
//!
//! Errors are found by downcasting each error of the chain to those types. A
//! `#[derive(Disclose)]` type is found when the derive registered it: every non-generic type
//! that derives `Disclose` in a program built with the feature registers a downcast (with the
//! `inventory` crate: no code runs for it until a chain is read). A generic `Disclose` type
//! (`LookupError<E>`) cannot be registered, and neither can an error type that implements
//! `Disclose` by hand; wrap such an error in a [`Failure`] to give it a kind.
//!
//! Context strings (`.context("..")`, `.wrap_err("..")`) never reach the model: the message an
//! argument error shows is its own, and with `include_error_message` (or
//! [`Failure::show_message`]) the message shown is that of the error that gave the kind — for
//! kind `Error`, that of the root cause. The caller's record holds the whole chain.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::ops::ControlFlow;

use crate::error::chain;
use crate::error::{ArgumentError, BoxError, Disclose, Disclosure, Failure, RetryHint, ToolError};

/// A downcast from an error of a chain to a `#[derive(Disclose)]` type, registered by the
/// derive.
#[derive(Debug)]
pub struct DiscloseEntry(Downcast);

/// A downcast to one `Disclose` type.
type Downcast = for<'e> fn(&'e (dyn StdError + 'static)) -> Option<&'e dyn Disclose>;

impl DiscloseEntry {
    /// The entry of a downcast the derive generated.
    pub const fn new(downcast: Downcast) -> Self {
        Self(downcast)
    }
}

inventory::collect!(DiscloseEntry);

/// Carries a type for the downcast the derive registers; holds no value.
#[derive(Debug)]
pub struct DiscloseProbe<E>(std::marker::PhantomData<E>);

impl<E> DiscloseProbe<E> {
    /// Names `E`.
    #[inline]
    pub const fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

impl<E> Default for DiscloseProbe<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// First choice: a `Disclose` type, downcast.
pub trait IsDisclose {
    /// `error` as a `Disclose` error, when it is one of this type.
    fn reticent_disclose<'e>(
        &self,
        error: &'e (dyn StdError + 'static),
    ) -> Option<&'e dyn Disclose>;
}
impl<E: Disclose> IsDisclose for &DiscloseProbe<E> {
    #[inline]
    fn reticent_disclose<'e>(
        &self,
        error: &'e (dyn StdError + 'static),
    ) -> Option<&'e dyn Disclose> {
        error
            .downcast_ref::<E>()
            .map(|error| error as &dyn Disclose)
    }
}

/// Last choice: a type that derives `Disclose` but is not an error type, which fails to
/// compile on its own; its downcast finds nothing rather than failing a second time.
pub trait NotDisclose {
    /// Nothing.
    fn reticent_disclose<'e>(
        &self,
        error: &'e (dyn StdError + 'static),
    ) -> Option<&'e dyn Disclose>;
}
impl<E> NotDisclose for DiscloseProbe<E> {
    #[inline]
    fn reticent_disclose<'e>(&self, _: &'e (dyn StdError + 'static)) -> Option<&'e dyn Disclose> {
        None
    }
}

/// What a chain says the model may be shown.
enum Found {
    /// The model's own mistake: what it is shown.
    Argument(ArgumentError),
    /// A failure of this kind, whose message is that of the error at `message_at`.
    Kind {
        kind: Cow<'static, str>,
        hint: Option<RetryHint>,
        fatal: bool,
        show_message: bool,
        message_at: usize,
    },
}

/// Reads the chain whose first error is `first` (the error an `anyhow::Error` or
/// `eyre::Report` holds). `context_argument` is an `ArgumentError` the report holds as a
/// context value.
fn read(first: &(dyn StdError + 'static), context_argument: Option<&ArgumentError>) -> Found {
    let mut kind: Option<Found> = None;
    let mut index = 0;
    let walked = chain::walk(first, |error| {
        let at = index;
        index += 1;
        if let Some(argument) = argument_in(error) {
            return ControlFlow::Break(argument);
        }
        if kind.is_none() {
            kind = kind_of(error, at);
        }
        ControlFlow::Continue(())
    });
    match walked {
        chain::Walked::Stopped(argument) => Found::Argument(argument),
        _ => match (context_argument, kind) {
            (Some(argument), _) => Found::Argument(argument.shown_copy()),
            (None, Some(kind)) => kind,
            (None, None) => Found::Kind {
                kind: Cow::Borrowed("Error"),
                hint: None,
                fatal: false,
                show_message: false,
                // the root cause
                message_at: usize::MAX,
            },
        },
    }
}

/// The tool error `found` says, keeping `whole` — the chain, owned — for the caller.
fn classified(found: Found, whole: BoxError) -> ToolError {
    match found {
        Found::Argument(argument) => ToolError::Argument(argument.with_source(whole)),
        Found::Kind {
            kind,
            hint,
            fatal,
            show_message,
            message_at,
        } => {
            let mut failure = Failure::with_kind(kind, whole).with_message_at(message_at);
            if let Some(hint) = hint {
                failure = failure.with_hint(hint);
            }
            if fatal {
                failure = failure.fatal();
            }
            if show_message {
                failure = failure.show_message();
            }
            ToolError::Failed(failure)
        }
    }
}

/// `error` as an argument error the model is shown, when it is one.
fn argument_in(error: &(dyn StdError + 'static)) -> Option<ArgumentError> {
    if let Some(argument) = error.downcast_ref::<ArgumentError>() {
        return Some(argument.shown_copy());
    }
    if let Some(ToolError::Argument(argument)) = error.downcast_ref::<ToolError>() {
        return Some(argument.shown_copy());
    }
    let disclose = registered(error)?;
    match disclose.disclosure() {
        Disclosure::Argument => Some(
            ArgumentError::new(chain::display(error)).with_optional_hint(disclose.retry_hint()),
        ),
        Disclosure::Kind(_) => None,
    }
}

/// The kind `error`, the `at`th error of the chain, gives the failure, when it gives one.
fn kind_of(error: &(dyn StdError + 'static), at: usize) -> Option<Found> {
    let failure =
        error
            .downcast_ref::<Failure>()
            .or_else(|| match error.downcast_ref::<ToolError>() {
                Some(ToolError::Failed(failure)) => Some(failure),
                _ => None,
            });
    if let Some(failure) = failure {
        return Some(Found::Kind {
            kind: Cow::Owned(failure.kind().to_owned()),
            hint: failure.hint(),
            fatal: failure.is_fatal(),
            show_message: failure.shows_message(),
            // the failure's own error, its source
            message_at: at + 1,
        });
    }
    let disclose = registered(error)?;
    match disclose.disclosure() {
        Disclosure::Kind(kind) => Some(Found::Kind {
            kind: Cow::Borrowed(kind),
            hint: disclose.retry_hint(),
            fatal: disclose.is_fatal(),
            show_message: false,
            message_at: at,
        }),
        Disclosure::Argument => None,
    }
}

/// `error` as a registered `#[derive(Disclose)]` type.
fn registered<'e>(error: &'e (dyn StdError + 'static)) -> Option<&'e dyn Disclose> {
    inventory::iter::<DiscloseEntry>
        .into_iter()
        .find_map(|entry| (entry.0)(error))
}

#[cfg(feature = "anyhow")]
impl super::classify::Classified for anyhow::Error {
    fn into_tool_error(self) -> ToolError {
        let context_argument = self.downcast_ref::<ArgumentError>();
        let found = read(&*self, context_argument);
        classified(found, self.into())
    }
}

#[cfg(feature = "eyre")]
impl super::classify::Classified for eyre::Report {
    fn into_tool_error(self) -> ToolError {
        let context_argument = self.downcast_ref::<ArgumentError>();
        let found = read(&*self, context_argument);
        classified(found, self.into())
    }
}

/// What `#[derive(Disclose)]` writes for a type without generic parameters: registers a
/// downcast to it, so that the type is found in an `anyhow`/`eyre` chain.
#[doc(hidden)]
#[macro_export]
macro_rules! __register_disclose {
    ($ty:ty) => {
        $crate::__private::inventory::submit! {
            $crate::__private::DiscloseEntry::new({
                fn __reticent_disclose<'e>(
                    error: &'e (dyn ::std::error::Error + 'static),
                ) -> ::core::option::Option<&'e dyn $crate::Disclose> {
                    #[allow(unused_imports)]
                    use $crate::__private::{IsDisclose as _, NotDisclose as _};
                    (&&$crate::__private::DiscloseProbe::<$ty>::new()).reticent_disclose(error)
                }
                __reticent_disclose
            })
        }
    };
}
