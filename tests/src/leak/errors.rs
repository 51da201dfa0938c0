//! The error types the failing tools return.

use reticent::Disclose;
use serde::ser::{Error as _, Serialize, Serializer};

/// A plain error type: the model sees `PlainError`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PlainError(pub String);

/// A `Disclose` enum with argument, kind, hinted and fatal variants.
#[derive(Debug, thiserror::Error, Disclose)]
pub enum StoreError {
    /// An argument error: the model sees `no record matches ..`.
    #[error("no record matches {0}")]
    #[disclose(argument)]
    NotFound(String),
    /// An argument error with a retry hint: the model sees the message and `(permanent)`.
    #[error("{0}")]
    #[disclose(argument, permanent)]
    OutOfRange(String),
    /// The model sees `StoreError::Unavailable`.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The model sees the kind set by hand, `RateLimited`.
    #[error("throttled by {0}")]
    #[disclose(kind = "RateLimited")]
    Throttled(String),
    /// The model sees `StoreError::Flaky` and a transient hint.
    #[error("{0}")]
    #[disclose(transient)]
    Flaky(String),
    /// The model sees `StoreError::Gone` and a permanent hint.
    #[error("gone: {0}")]
    #[disclose(permanent)]
    Gone(String),
    /// A failure that ends the run whatever the failure mode.
    #[error("{0}")]
    #[disclose(fatal)]
    Corrupt(String),
    /// Its own message is harmless; its source holds the secret.
    #[error("the store's backend failed")]
    Backend(#[source] std::io::Error),
}

/// An error whose own message is harmless and whose source holds the secret.
#[derive(Debug, thiserror::Error)]
#[error("could not read the ledger")]
pub struct LedgerError(#[source] pub std::io::Error);

/// The typed error behind an argument error: its message, written for the model, is clean;
/// its source holds the secret.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct BadDate {
    /// The message written for the model.
    pub message: String,
    /// The error behind it, which holds the secret.
    #[source]
    pub source: std::io::Error,
}

/// An output that cannot be turned into JSON: serializing it fails with its message.
#[derive(Debug)]
pub struct Unserializable(pub String);

impl Serialize for Unserializable {
    fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(S::Error::custom(&self.0))
    }
}

/// An error a developer made `Serialize`: were it sent as an output, its fields would reach the
/// model.
#[derive(Debug, thiserror::Error, serde::Serialize)]
#[error("{message}")]
pub struct SerError {
    /// The error's message.
    pub message: String,
}

/// An alias of `Result`: classified by its type, as `Result` written out is.
pub type Outcome = Result<String, SerError>;

/// An output with a `Result` in a struct field.
#[derive(Debug, serde::Serialize)]
pub struct Report {
    /// A field of the output.
    pub rows: u32,
    /// The `Result` in it.
    pub outcome: Result<u32, SerError>,
}

/// The `io::ErrorKind`s an `io::Error` failure may have.
pub const IO_KINDS: [std::io::ErrorKind; 5] = [
    std::io::ErrorKind::NotFound,
    std::io::ErrorKind::PermissionDenied,
    std::io::ErrorKind::ConnectionRefused,
    std::io::ErrorKind::TimedOut,
    std::io::ErrorKind::Other,
];
