//! [`Disclose`]: how an error type says what the model may be told about it.

use std::error::Error as StdError;
use std::sync::Arc;

/// How an error type is disclosed to the model. Derive it: `#[derive(reticent::Disclose)]`.
///
/// ```
/// #[derive(Debug, thiserror::Error, reticent::Disclose)]
/// enum OrderError {
///     /// The model's fault: the message is shown.
///     #[error("no order {0}; order ids look like ORD-1042")]
///     #[disclose(argument)]
///     NotFound(String),
///     /// The model sees `OrderError::Database` only.
///     #[error("database unavailable: {0}")]
///     Database(String),
///     /// The model sees `RateLimited`.
///     #[error("rate limited by {0}")]
///     #[disclose(kind = "RateLimited")]
///     Throttled(String),
/// }
///
/// use reticent::{Disclose, Disclosure};
/// assert_eq!(OrderError::NotFound("x".into()).disclosure(), Disclosure::Argument);
/// assert_eq!(OrderError::Database("pg://".into()).disclosure(), Disclosure::Kind("OrderError::Database"));
/// assert_eq!(OrderError::Throttled("x".into()).disclosure(), Disclosure::Kind("RateLimited"));
/// ```
/// An argument variant's message is shown to the model in full, so the derive refuses, at
/// compile time, a field of an argument variant (or of a type that is `#[disclose(argument)]`
/// as a whole) that is a source error (`#[from]`, `#[source]`, named `source`), whose type is
/// an error type or gives access to one (anything implementing `std::error::Error`, or that
/// derefs to an error or `AsRef`s a `dyn Error`: `Box<dyn Error>`, `anyhow::Error`,
/// `eyre::Report`, whatever the features; decided from the type and its traits, so an alias
/// is refused too), or whose type depends on a type parameter of the error type, which could
/// be an error type in some use. Keep such an error as the source of a variant that is not an
/// argument error:
///
/// ```compile_fail,E0277
/// # #[derive(Debug, thiserror::Error)] #[error("connection to db.internal refused")] struct DbError;
/// #[derive(Debug, thiserror::Error, reticent::Disclose)]
/// enum CustomerError {
///     #[error("bad customer reference: {0}")]
///     #[disclose(argument)]
///     BadRef(DbError), // error: `DbError` is an error type, and a `#[disclose(argument)]`
///                      // message is shown to the model in full
/// }
/// ```
///
/// ```
/// # #[derive(Debug, thiserror::Error)] #[error("connection to db.internal refused")] struct DbError;
/// #[derive(Debug, thiserror::Error, reticent::Disclose)]
/// enum CustomerError {
///     #[error("no customer {0}; customer ids look like C-1042")]
///     #[disclose(argument)]
///     NotFound(String),
///     #[error("customer database unavailable")]
///     Database(#[source] DbError), // the model sees `CustomerError::Database`
/// }
///
/// use reticent::{Disclose, Disclosure};
/// let database = CustomerError::Database(DbError);
/// assert_eq!(database.disclosure(), Disclosure::Kind("CustomerError::Database"));
/// assert_eq!(CustomerError::NotFound("C-7".into()).disclosure(), Disclosure::Argument);
/// ```
pub trait Disclose: StdError + Send + Sync + 'static {
    /// How this error is shown to the model.
    fn disclosure(&self) -> Disclosure;

    /// A fixed hint for the model on whether retrying can help (`#[disclose(transient)]`,
    /// `#[disclose(permanent)]`).
    fn retry_hint(&self) -> Option<RetryHint> {
        None
    }

    /// Whether the error ends the run (`#[disclose(fatal)]`); see [`Failure::fatal`](crate::Failure::fatal).
    fn is_fatal(&self) -> bool {
        false
    }
}

/// Whether retrying a failed call can help: a fixed hint the model is shown after the
/// failure, chosen by the developer, never runtime data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RetryHint {
    /// Retrying later may succeed (`(transient: retrying later may succeed)`).
    Transient,
    /// Retrying the same call will not help (`(permanent: retrying the same call will not help)`).
    Permanent,
}

impl RetryHint {
    /// The text appended to the model's line.
    pub fn text(self) -> &'static str {
        match self {
            Self::Transient => crate::render::TRANSIENT_HINT,
            Self::Permanent => crate::render::PERMANENT_HINT,
        }
    }
}

/// A boxed error is disclosed as the error it holds (`Result<T, Box<OrderError>>`, as
/// `clippy::result_large_err` suggests, keeps its argument variants and kinds).
impl<E: Disclose> Disclose for Box<E> {
    fn disclosure(&self) -> Disclosure {
        (**self).disclosure()
    }

    fn retry_hint(&self) -> Option<RetryHint> {
        (**self).retry_hint()
    }

    fn is_fatal(&self) -> bool {
        (**self).is_fatal()
    }
}

/// A shared error is disclosed as the error it holds.
impl<E: Disclose> Disclose for Arc<E> {
    fn disclosure(&self) -> Disclosure {
        (**self).disclosure()
    }

    fn retry_hint(&self) -> Option<RetryHint> {
        (**self).retry_hint()
    }

    fn is_fatal(&self) -> bool {
        (**self).is_fatal()
    }
}

/// How an error is shown to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Disclosure {
    /// The model's own mistake: its `Display` is shown in full.
    Argument,
    /// Shown as `Tool 'NAME' failed with KIND`.
    Kind(&'static str),
}
