//! [`ArgumentError`]: the model's own mistake, shown to it in full.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;

use super::{BoxError, RetryHint};

/// An error the model caused and can correct: its message is shown to the model in full.
///
/// Write the message for the model: say what was wrong and what a valid value looks like.
/// Never put data from elsewhere (database rows, paths, other users' records) in it.
///
/// ```
/// use reticent::ArgumentError;
///
/// fn parse_day(s: &str) -> Result<u32, ArgumentError> {
///     s.parse().map_err(|_| ArgumentError::new("`day` must be a number from 1 to 31"))
/// }
/// assert!(parse_day("x").is_err());
/// ```
///
/// # Turning another error into an argument error
///
/// There is deliberately no one-call conversion from an arbitrary error: an error's message
/// is written for developers and can carry anything it read (a connection string, a row). When
/// an error's message really is about the model's own input — a validation error you wrote,
/// such as "order ids look like ORD-1042" — say so explicitly, and keep the error for the
/// caller:
///
/// ```
/// use reticent::ArgumentError;
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("order ids look like ORD-1042, got {0:?}")]
/// struct BadOrderId(String);
///
/// let error = BadOrderId("42".into());
/// // The model sees the message; the caller can still downcast the source.
/// let argument = ArgumentError::new(error.to_string()).with_source(error);
/// assert!(argument.error().unwrap().downcast_ref::<BadOrderId>().is_some());
/// ```
///
/// For an error type of your own, derive [`Disclose`](crate::Disclose) and mark the variants
/// the model can correct `#[disclose(argument)]`: the rule is then checked when the crate
/// compiles.
pub struct ArgumentError {
    message: Cow<'static, str>,
    source: Option<BoxError>,
    hint: Option<RetryHint>,
    /// Where in the arguments the mistake is (`effort`, `assignee.teamTags`), when the decoder
    /// knows.
    path: Option<Box<str>>,
}

impl ArgumentError {
    /// The kind recorded for argument errors.
    pub const KIND: &'static str = "argument";

    /// An argument error with this message.
    pub fn new(message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            message: message.into(),
            source: None,
            hint: None,
            path: None,
        }
    }

    /// An argument error whose message is `error`'s `Display`: what `#[disclose(argument)]`
    /// asks for, and checks when the crate compiles.
    pub(crate) fn from_disclosed<E: StdError + Send + Sync + 'static>(error: E) -> Self {
        Self::new(crate::error::chain::display(&error)).with_source(error)
    }

    /// What the model is shown of `self` (its message, hint and path), without its source.
    #[cfg(any(feature = "anyhow", feature = "eyre"))]
    pub(crate) fn shown_copy(&self) -> Self {
        Self {
            message: self.message.clone(),
            source: None,
            hint: self.hint,
            path: self.path.clone(),
        }
    }

    /// Keeps `error` for the caller, as [`ArgumentError::error`] and the
    /// [`source`](StdError::source). The model is not shown it: it sees the message only.
    #[must_use]
    pub fn with_source(mut self, error: impl Into<BoxError>) -> Self {
        self.source = Some(error.into());
        self
    }

    /// Where in the arguments the mistake is: a parameter (`effort`) or a path into one
    /// (`assignee.teamTags`, `items[2]`).
    #[must_use]
    pub fn at(mut self, path: impl Into<Box<str>>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Adds a fixed retry hint to what the model is shown.
    #[must_use]
    pub fn with_hint(mut self, hint: RetryHint) -> Self {
        self.hint = Some(hint);
        self
    }

    pub(crate) fn with_optional_hint(mut self, hint: Option<RetryHint>) -> Self {
        self.hint = hint;
        self
    }

    /// The retry hint, if any.
    pub fn hint(&self) -> Option<RetryHint> {
        self.hint
    }

    /// The message shown to the model (before it is cut to length).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where in the arguments the mistake is, when known (see [`ArgumentError::at`]).
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// The typed error this came from, if any.
    pub fn error(&self) -> Option<&(dyn StdError + Send + Sync + 'static)> {
        self.source.as_deref()
    }
}

impl fmt::Debug for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("ArgumentError");
        debug.field("message", &self.message);
        if let Some(path) = &self.path {
            debug.field("path", path);
        }
        if let Some(source) = &self.source {
            debug.field("source", source);
        }
        debug.finish()
    }
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for ArgumentError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}
