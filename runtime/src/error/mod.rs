//! The disclosure rule — a failed tool tells the model less than it tells the caller — in one
//! place: the errors a tool fails with, how each is classified, and the record the caller gets.
//! The texts the model is shown are written by `crate::render`; the rules table is
//! `docs/disclosure.md`.
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | [`ToolError`], what a tool fails with, and [`ToolError::model_text`], the one place that decides what the model is told |
//! | `argument.rs` | [`ArgumentError`]: the model's own mistake, shown in full |
//! | `failure.rs` | [`Failure`]: any other failure, shown by its kind only; how a type is named as a kind |
//! | `disclose.rs` | [`Disclose`], [`Disclosure`], [`RetryHint`]: what an error type says of itself |
//! | `classify.rs` | classifying a tool's error by its type, at compile time (the ranks the macro's call picks from) |
//! | `report.rs` | classifying an `anyhow::Error`/`eyre::Report` by its chain (features `anyhow`, `eyre`) |
//! | `chain.rs` | the one bounded walk of an error's chain of sources |
//! | `tool_failure.rs` | [`ToolFailure`]: the caller's record of a failed call, what a [`ToolError`] becomes in it; [`kinds`] |

use std::error::Error as StdError;

mod argument;
pub(crate) mod chain;
pub(crate) mod classify;
mod disclose;
mod failure;
#[cfg(any(feature = "anyhow", feature = "eyre"))]
pub(crate) mod report;
mod tool_failure;

pub use argument::ArgumentError;
pub use disclose::{Disclose, Disclosure, RetryHint};
pub use failure::Failure;
#[cfg(any(feature = "anyhow", feature = "eyre"))]
pub(crate) use failure::ShownMessage;
pub use tool_failure::{EffectOutcome, ToolFailure, kinds};

/// What `#[derive(Disclose)]` writes without the features `anyhow` and `eyre`: nothing (see
/// `report.rs`).
#[cfg(not(any(feature = "anyhow", feature = "eyre")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __register_disclose {
    ($ty:ty) => {};
}

/// A boxed error that can cross threads.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// Why a tool call failed, classified for disclosure.
///
/// The model sees an [`ToolError::Argument`] in full and a [`ToolError::Failed`] by its kind
/// only; see [`ToolError::model_text`]. The caller always has the whole error: the `Display`
/// of a `ToolError` is as terse as the model's line, and the full error is its
/// [`source`](StdError::source).
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The model's own mistake (bad arguments); the message is shown to it.
    #[error(transparent)]
    Argument(ArgumentError),
    /// Any other failure; the model is shown its kind, not its message.
    #[error(transparent)]
    Failed(Failure),
}

impl ToolError {
    /// The longest message (in bytes) the model is shown for one failure: longer messages —
    /// an argument error echoing what the model sent, a message shown by opt-in — are cut in
    /// the middle, keeping their start and end.
    pub const MAX_MESSAGE_LEN: usize = crate::render::MAX_MESSAGE_LEN;

    /// Classifies an error whose type implements [`Disclose`].
    pub fn from_disclose<E: Disclose>(error: E) -> Self {
        let hint = error.retry_hint();
        match error.disclosure() {
            Disclosure::Argument => {
                Self::Argument(ArgumentError::from_disclosed(error).with_optional_hint(hint))
            }
            Disclosure::Kind(kind) => {
                let fatal = error.is_fatal();
                let mut failure = Failure::new(kind, error);
                if let Some(hint) = hint {
                    failure = failure.with_hint(hint);
                }
                if fatal {
                    failure = failure.fatal();
                }
                Self::Failed(failure)
            }
        }
    }

    /// The retry hint shown to the model, if the error declares one.
    pub fn retry_hint(&self) -> Option<RetryHint> {
        match self {
            Self::Argument(error) => error.hint(),
            Self::Failed(failure) => failure.hint(),
        }
    }

    /// Whether the failure must end the run (see [`Failure::fatal`]).
    pub fn is_fatal(&self) -> bool {
        matches!(self, Self::Failed(failure) if failure.is_fatal())
    }

    /// Classifies any other error by its type name (see [`Failure::from_error`]).
    pub fn from_error<E: StdError + Send + Sync + 'static>(error: E) -> Self {
        Self::Failed(Failure::from_error(error))
    }

    /// Whether this is the model's own mistake.
    pub fn is_argument(&self) -> bool {
        matches!(self, Self::Argument(_))
    }

    /// `"argument"` for argument errors, otherwise the failure's kind.
    pub fn kind(&self) -> &str {
        match self {
            Self::Argument(_) => ArgumentError::KIND,
            Self::Failed(failure) => failure.kind(),
        }
    }

    /// The text the model is shown for this error when it came from the tool `tool`.
    ///
    /// This is the one place that decides what a tool error may tell the model: an
    /// [`ToolError::Argument`] in full, a [`ToolError::Failed`] by its kind, with its message
    /// only when `include_error_message` (or [`Failure::show_message`]) says so — the rules of
    /// [How failures are classified](crate#how-failures-are-classified).
    ///
    /// Messages are cut to a bounded length, so an argument the model sent is never echoed
    /// back whole.
    ///
    /// ```
    /// use reticent::{ArgumentError, Failure, ToolError};
    ///
    /// let bad = ToolError::Argument(ArgumentError::new("dates look like 2024-05-01"));
    /// assert_eq!(
    ///     bad.model_text("book", false),
    ///     "Invalid arguments for tool 'book': dates look like 2024-05-01"
    /// );
    ///
    /// let io = std::io::Error::other("cannot open /srv/secrets.db");
    /// let failed = ToolError::Failed(Failure::from_error(io));
    /// assert_eq!(failed.model_text("book", false), "Tool 'book' failed with io::Error");
    /// ```
    pub fn model_text(&self, tool: &str, include_error_message: bool) -> String {
        use crate::render;
        match self {
            Self::Argument(error) => {
                render::argument_error(tool, error.message(), error.hint().map(RetryHint::text))
            }
            Self::Failed(failure) => {
                let message = if include_error_message || failure.shows_message() {
                    failure.shown_message()
                } else {
                    None
                };
                render::failure(
                    tool,
                    failure.kind(),
                    failure.hint().map(RetryHint::text),
                    message.as_deref(),
                )
            }
        }
    }
}

impl From<ArgumentError> for ToolError {
    fn from(error: ArgumentError) -> Self {
        Self::Argument(error)
    }
}

impl From<Failure> for ToolError {
    fn from(failure: Failure) -> Self {
        Self::Failed(failure)
    }
}
