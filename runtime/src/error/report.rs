//! Classifying an `anyhow::Error` or an `eyre::Report` (features `anyhow`, `eyre`): an error
//! whose type says nothing, so its chain of errors is read, with the bounded walker, when the
//! tool fails.
//!
//! The chain is read from the outside in, and the first error that is classified decides what
//! the model is shown:
//!
//! - an argument error — an [`ArgumentError`] (`bail!(ArgumentError::new(".."))`), a
//!   [`ToolError::Argument`], or a `#[derive(Disclose)]` error whose variant is
//!   `#[disclose(argument)]` — is shown as an argument error, with its own message alone;
//! - a [`Failure`], a [`ToolError::Failed`] or another `#[derive(Disclose)]` error gives the
//!   failure its kind, its retry hint, and whether it is fatal;
//! - with neither, the kind is `Error`.
//!
//! Nothing inside the first classified error is read: an argument error inside a `Failure` —
//! an inner call's, say, which echoes what a server sent it — is part of that failure, and the
//! model is told its kind, as it is for the same `Failure` returned on its own. An argument
//! error outside a kind (the kind its source) is the model's.
//!
//! The errors of a chain are found by downcasting each error to those types, and so are the
//! values the report holds as context (`.context(ArgumentError::new(".."))`,
//! `.context(Failure::new(..))`): a context value stands where its context does, outside the
//! error it wraps. A `#[derive(Disclose)]` type is found when the derive registered it: every
//! non-generic type that derives `Disclose` in a program built with the feature registers its
//! downcasts (with the `inventory` crate: no code runs for it until a chain is read). A generic
//! `Disclose` type (`LookupError<E>`) cannot be registered, and neither can an error type that
//! implements `Disclose` by hand: the walk reads past such an error as past any other; wrap it
//! in a [`Failure`] to give it a kind.
//!
//! Context strings (`.context("..")`, `.wrap_err("..")`) never reach the model: the message an
//! argument error shows is its own, and with `include_error_message` (or
//! [`Failure::show_message`]) the message shown is that of the error that gave the kind — for
//! kind `Error`, that of the root cause, and only when the walk reached the end of the chain
//! (a chain longer than the walk reads shows no message). `Option::context` (and eyre's
//! `ContextCompat`) on a `None` wraps no error: its value becomes the error itself, the root
//! cause of a chain of one, shown as `anyhow!(..)`'s message is. The caller's record holds the
//! whole chain.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;
use std::ops::ControlFlow;

use crate::error::chain;
use crate::error::{
    ArgumentError, BoxError, Disclose, Disclosure, Failure, RetryHint, ShownMessage, ToolError,
};

/// An `anyhow::Error` or an `eyre::Report`, for the downcasts that find the values it holds as
/// context.
#[derive(Clone, Copy, Debug)]
pub enum ReportRef<'e> {
    /// An `anyhow::Error`.
    #[cfg(feature = "anyhow")]
    Anyhow(&'e anyhow::Error),
    /// An `eyre::Report`.
    #[cfg(feature = "eyre")]
    Eyre(&'e eyre::Report),
}

impl<'e> ReportRef<'e> {
    /// The outermost value of type `T` the report holds as context, or its own error when that
    /// is a `T`.
    fn downcast<T>(self) -> Option<&'e T>
    where
        T: fmt::Display + fmt::Debug + Send + Sync + 'static,
    {
        match self {
            #[cfg(feature = "anyhow")]
            Self::Anyhow(report) => report.downcast_ref::<T>(),
            #[cfg(feature = "eyre")]
            Self::Eyre(report) => report.downcast_ref::<T>(),
        }
    }
}

/// The downcasts from an error of a chain, and from a report's context values, to a
/// `#[derive(Disclose)]` type, registered by the derive.
#[derive(Debug)]
pub struct DiscloseEntry {
    in_chain: InChain,
    held: Held,
}

/// A downcast of an error of a chain to one `Disclose` type.
type InChain = for<'e> fn(&'e (dyn StdError + 'static)) -> Option<&'e dyn Disclose>;

/// The outermost value of one `Disclose` type a report holds as context (or its own error).
type Held = for<'e> fn(ReportRef<'e>) -> Option<&'e dyn Disclose>;

impl DiscloseEntry {
    /// The entry of the downcasts the derive generated.
    pub const fn new(in_chain: InChain, held: Held) -> Self {
        Self { in_chain, held }
    }
}

inventory::collect!(DiscloseEntry);

/// Carries a type for the downcasts the derive registers; holds no value.
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

    /// The outermost value of this type `report` holds as context (or its own error).
    fn reticent_disclose_held<'e>(&self, report: ReportRef<'e>) -> Option<&'e dyn Disclose>;
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

    #[inline]
    fn reticent_disclose_held<'e>(&self, report: ReportRef<'e>) -> Option<&'e dyn Disclose> {
        report.downcast::<E>().map(|error| error as &dyn Disclose)
    }
}

/// Last choice: a type that derives `Disclose` but is not an error type, which fails to
/// compile on its own; its downcasts find nothing rather than failing a second time.
pub trait NotDisclose {
    /// Nothing.
    fn reticent_disclose<'e>(
        &self,
        error: &'e (dyn StdError + 'static),
    ) -> Option<&'e dyn Disclose>;

    /// Nothing.
    fn reticent_disclose_held<'e>(&self, report: ReportRef<'e>) -> Option<&'e dyn Disclose>;
}
impl<E> NotDisclose for DiscloseProbe<E> {
    #[inline]
    fn reticent_disclose<'e>(&self, _: &'e (dyn StdError + 'static)) -> Option<&'e dyn Disclose> {
        None
    }

    #[inline]
    fn reticent_disclose_held<'e>(&self, _: ReportRef<'e>) -> Option<&'e dyn Disclose> {
        None
    }
}

/// What a chain says the model may be shown.
enum Found {
    /// The model's own mistake: what it is shown.
    Argument(ArgumentError),
    /// A failure of this kind.
    Kind {
        kind: Cow<'static, str>,
        hint: Option<RetryHint>,
        fatal: bool,
        show_message: bool,
        /// The message the model is shown when the message is shown.
        message: ShownMessage,
    },
}

impl Found {
    /// The kind `Error`: nothing in the chain is classified. Its message is the root cause's,
    /// the `last`th error of the chain, when the walk reached it.
    fn unclassified(last: Option<usize>) -> Self {
        Self::Kind {
            kind: Cow::Borrowed("Error"),
            hint: None,
            fatal: false,
            show_message: false,
            message: last.map_or(ShownMessage::Nothing, ShownMessage::At),
        }
    }
}

/// Where a value sits in memory: an error of the chain, or a value a report holds as context.
///
/// A report holds each context value inside the error that carries it in the chain, so the
/// first error of the chain whose place holds a value's place is where the value stands.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Place {
    start: usize,
    end: usize,
}

impl Place {
    fn of<T: ?Sized>(value: &T) -> Self {
        let start = std::ptr::from_ref(value).cast::<u8>().addr();
        Self {
            start,
            end: start + std::mem::size_of_val(value),
        }
    }

    fn holds(self, inner: Self) -> bool {
        self.start <= inner.start && inner.end <= self.end
    }
}

/// Reads the chain of `report`, whose first error is `first`, as the module says.
fn read(first: &(dyn StdError + 'static), report: ReportRef<'_>) -> Found {
    let mut places: Vec<Place> = Vec::new();
    let walked = chain::walk(first, |error| {
        let at = places.len();
        places.push(Place::of(error));
        match in_chain(error, at) {
            Some(found) => ControlFlow::Break(found),
            None => ControlFlow::Continue(()),
        }
    });
    let places = match (&walked, places.split_last()) {
        (chain::Walked::Stopped(_), Some((classified, unclassified))) => Places {
            unclassified,
            classified: Some(*classified),
        },
        _ => Places {
            unclassified: &places,
            classified: None,
        },
    };
    if let Some(held) = held(report, &places) {
        return held;
    }
    match walked {
        chain::Walked::Stopped(found) => found,
        // the root cause, the last error read
        chain::Walked::Done => Found::unclassified(places.unclassified.len().checked_sub(1)),
        // the walk stopped short of the root cause
        chain::Walked::Cycle | chain::Walked::TooDeep | chain::Walked::SourcePanicked => {
            Found::unclassified(None)
        }
    }
}

/// The places of the errors of a chain the walk read: those not classified, and the first
/// classified one, where the walk stopped.
struct Places<'p> {
    unclassified: &'p [Place],
    classified: Option<Place>,
}

/// What `error`, the `at`th error of the chain, says the model may be shown, when it is
/// classified.
fn in_chain(error: &(dyn StdError + 'static), at: usize) -> Option<Found> {
    if let Some(argument) = error.downcast_ref::<ArgumentError>() {
        return Some(Found::Argument(argument.shown_copy()));
    }
    match error.downcast_ref::<ToolError>() {
        Some(ToolError::Argument(argument)) => return Some(Found::Argument(argument.shown_copy())),
        // its message is the failure's own error's, the next in the chain
        Some(ToolError::Failed(failure)) => {
            return Some(failure_kind(failure, ShownMessage::At(at + 1)));
        }
        None => {}
    }
    if let Some(failure) = error.downcast_ref::<Failure>() {
        return Some(failure_kind(failure, ShownMessage::At(at + 1)));
    }
    let disclose = registered(error)?;
    Some(disclosed(disclose, error, ShownMessage::At(at)))
}

/// The first value `report` holds as context that is classified and stands before the first
/// classified error of its chain, whose errors are at `places`.
fn held(report: ReportRef<'_>, places: &Places<'_>) -> Option<Found> {
    // Where `value` stands: the first unclassified error that holds it. The report's own
    // error, when it is the classified one, is not a context value.
    let at = |value: Place| {
        if places.classified == Some(value) {
            return None;
        }
        places
            .unclassified
            .iter()
            .position(|error| error.holds(value))
    };
    let mut first: Option<(usize, Found)> = None;
    let mut consider = |at: Option<usize>, found: &dyn Fn() -> Found| {
        if let Some(at) = at
            && first.as_ref().is_none_or(|(first, _)| at < *first)
        {
            first = Some((at, found()));
        }
    };
    if let Some(argument) = report.downcast::<ArgumentError>() {
        consider(at(Place::of(argument)), &|| {
            Found::Argument(argument.shown_copy())
        });
    }
    if let Some(tool_error) = report.downcast::<ToolError>() {
        consider(at(Place::of(tool_error)), &|| match tool_error {
            ToolError::Argument(argument) => Found::Argument(argument.shown_copy()),
            ToolError::Failed(failure) => failure_kind(failure, own_message(failure)),
        });
    }
    if let Some(failure) = report.downcast::<Failure>() {
        consider(at(Place::of(failure)), &|| {
            failure_kind(failure, own_message(failure))
        });
    }
    for entry in inventory::iter::<DiscloseEntry> {
        if let Some(disclose) = (entry.held)(report) {
            consider(at(Place::of(disclose)), &|| {
                let message = ShownMessage::Text(chain::display(disclose).into());
                disclosed(disclose, disclose, message)
            });
        }
    }
    first.map(|(_, found)| found)
}

/// The message of `failure`'s own error, read now: a failure held as context is not an error
/// of the chain.
fn own_message(failure: &Failure) -> ShownMessage {
    ShownMessage::Text(chain::display(&**failure.error()).into())
}

/// The kind `failure` gives, whose message is `message`.
fn failure_kind(failure: &Failure, message: ShownMessage) -> Found {
    Found::Kind {
        kind: Cow::Owned(failure.kind().to_owned()),
        hint: failure.hint(),
        fatal: failure.is_fatal(),
        show_message: failure.shows_message(),
        message,
    }
}

/// What the `Disclose` error `disclose` (`error`, as an error) says, whose message, when it is
/// a kind, is `message`.
fn disclosed(
    disclose: &dyn Disclose,
    error: &(dyn StdError + 'static),
    message: ShownMessage,
) -> Found {
    match disclose.disclosure() {
        Disclosure::Argument => Found::Argument(
            ArgumentError::new(chain::display(error)).with_optional_hint(disclose.retry_hint()),
        ),
        Disclosure::Kind(kind) => Found::Kind {
            kind: Cow::Borrowed(kind),
            hint: disclose.retry_hint(),
            fatal: disclose.is_fatal(),
            show_message: false,
            message,
        },
    }
}

/// `error` as a registered `#[derive(Disclose)]` type.
fn registered<'e>(error: &'e (dyn StdError + 'static)) -> Option<&'e dyn Disclose> {
    inventory::iter::<DiscloseEntry>
        .into_iter()
        .find_map(|entry| (entry.in_chain)(error))
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
            message,
        } => {
            let mut failure = Failure::with_kind(kind, whole).with_shown_message(message);
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

#[cfg(feature = "anyhow")]
impl super::classify::Classified for anyhow::Error {
    fn into_tool_error(self) -> ToolError {
        let found = read(&*self, ReportRef::Anyhow(&self));
        classified(found, self.into())
    }
}

#[cfg(feature = "eyre")]
impl super::classify::Classified for eyre::Report {
    fn into_tool_error(self) -> ToolError {
        let found = read(&*self, ReportRef::Eyre(&self));
        classified(found, self.into())
    }
}

/// What `#[derive(Disclose)]` writes for a type without generic parameters: registers the
/// downcasts to it, so that the type is found in an `anyhow`/`eyre` chain and among the
/// values a report holds as context.
#[doc(hidden)]
#[macro_export]
macro_rules! __register_disclose {
    ($ty:ty) => {
        $crate::__private::inventory::submit! {
            $crate::__private::DiscloseEntry::new(
                {
                    fn __reticent_disclose<'e>(
                        error: &'e (dyn ::std::error::Error + 'static),
                    ) -> ::core::option::Option<&'e dyn $crate::Disclose> {
                        #[allow(unused_imports)]
                        use $crate::__private::{IsDisclose as _, NotDisclose as _};
                        (&&$crate::__private::DiscloseProbe::<$ty>::new()).reticent_disclose(error)
                    }
                    __reticent_disclose
                },
                {
                    fn __reticent_disclose_held<'e>(
                        report: $crate::__private::ReportRef<'e>,
                    ) -> ::core::option::Option<&'e dyn $crate::Disclose> {
                        #[allow(unused_imports)]
                        use $crate::__private::{IsDisclose as _, NotDisclose as _};
                        (&&$crate::__private::DiscloseProbe::<$ty>::new())
                            .reticent_disclose_held(report)
                    }
                    __reticent_disclose_held
                },
            )
        }
    };
}
