//! Tool errors and how they are disclosed: [`ToolError`], [`ArgumentError`], [`Failure`],
//! [`Disclose`] and [`Disclosure`].

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

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
    /// Classifies an error whose type implements [`Disclose`].
    pub fn from_disclose<E: Disclose>(error: E) -> Self {
        let hint = error.retry_hint();
        match error.disclosure() {
            Disclosure::Argument => {
                let mut argument = ArgumentError::from_error(error);
                argument.hint = hint;
                Self::Argument(argument)
            }
            Disclosure::Kind(kind) => {
                let fatal = error.is_fatal();
                let mut failure = Failure::new(kind, error);
                failure.hint = hint;
                failure.fatal = fatal;
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
    /// This is the one place that decides what a tool error may tell the model:
    ///
    /// | error | text |
    /// |---|---|
    /// | [`ToolError::Argument`] | `Invalid arguments for tool 'NAME': MESSAGE` |
    /// | [`ToolError::Failed`] | `Tool 'NAME' failed with KIND` |
    /// | [`ToolError::Failed`], `include_error_message` | `Tool 'NAME' failed with KIND: MESSAGE` |
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
        crate::render::tool_error(tool, self, include_error_message)
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
pub struct ArgumentError {
    message: Cow<'static, str>,
    source: Option<BoxError>,
    hint: Option<RetryHint>,
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
        }
    }

    /// An argument error whose message is `error`'s `Display`, keeping `error` as the source.
    ///
    /// Used for `#[disclose(argument)]` variants.
    pub fn from_error<E: StdError + Send + Sync + 'static>(error: E) -> Self {
        Self {
            message: Cow::Owned(error.to_string()),
            source: Some(Box::new(error)),
            hint: None,
        }
    }

    /// Adds a fixed retry hint to what the model is shown.
    #[must_use]
    pub fn with_hint(mut self, hint: RetryHint) -> Self {
        self.hint = Some(hint);
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

    /// The typed error this came from, if any.
    pub fn error(&self) -> Option<&(dyn StdError + Send + Sync + 'static)> {
        self.source.as_deref()
    }
}

impl fmt::Debug for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(source) => f
                .debug_struct("ArgumentError")
                .field("message", &self.message)
                .field("source", source)
                .finish(),
            None => f.debug_tuple("ArgumentError").field(&self.message).finish(),
        }
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

/// A tool failure that is not the model's fault: the model is told its kind only.
///
/// The kind comes from the error's type (`GatewayError`, `OrderError::Database`), a vocabulary
/// the developer chose, never from runtime data. The full error is kept for the caller as the
/// [`source`](StdError::source) and through [`Failure::error`].
///
/// ```
/// use std::error::Error;
/// use reticent::Failure;
///
/// let failure = Failure::from_error(std::io::Error::other("disk /dev/sda1 is full"));
/// assert_eq!(failure.kind(), "io::Error");
/// assert_eq!(failure.to_string(), "tool failed with io::Error");
/// assert_eq!(failure.source().unwrap().to_string(), "disk /dev/sda1 is full");
/// ```
#[derive(Clone)]
pub struct Failure {
    kind: Cow<'static, str>,
    error: Arc<dyn StdError + Send + Sync + 'static>,
    hint: Option<RetryHint>,
    fatal: bool,
    show_message: bool,
}

impl Failure {
    /// A failure of kind `kind` caused by `error`.
    ///
    /// The kind is shown to the model: use a fixed name, never text built from runtime data.
    pub fn new(kind: impl Into<Cow<'static, str>>, error: impl Into<BoxError>) -> Self {
        Self {
            kind: kind.into(),
            error: Arc::from(error.into()),
            hint: None,
            fatal: false,
            show_message: false,
        }
    }

    /// A failure whose kind is the short name of `E` (see the crate docs for the naming rule).
    pub fn from_error<E: StdError + Send + Sync + 'static>(error: E) -> Self {
        Self {
            kind: crate::render::short_type_name(std::any::type_name::<E>()),
            error: Arc::new(error),
            hint: None,
            fatal: false,
            show_message: false,
        }
    }

    /// Adds a fixed retry hint to what the model is shown.
    #[must_use]
    pub fn with_hint(mut self, hint: RetryHint) -> Self {
        self.hint = Some(hint);
        self
    }

    /// Marks the failure as fatal: it ends the run with
    /// [`AgentError::ToolFailed`](crate::AgentError::ToolFailed) even under
    /// [`ToolFailureMode::ReportToModel`](crate::ToolFailureMode::ReportToModel), so the model
    /// is not invited to route around a broken safety or policy boundary.
    #[must_use]
    pub fn fatal(mut self) -> Self {
        self.fatal = true;
        self
    }

    /// Shows the model this failure's message after its kind
    /// (`Tool 'NAME' failed with KIND: MESSAGE`), cut to a bounded length, as
    /// `include_error_message` does for every failure of a run.
    ///
    /// For a message someone chose to disclose, such as the text of an MCP server's tool
    /// error when its client opts in (`McpClientBuilder::include_error_message`).
    /// Like `include_error_message`, it taints the run when the tool's output is untrusted.
    ///
    /// ```
    /// use reticent::{Failure, ToolError};
    ///
    /// let failure = Failure::new("SyncError", std::io::Error::other("quota exceeded"));
    /// let failure = ToolError::Failed(failure.show_message());
    /// assert_eq!(
    ///     failure.model_text("sync", false),
    ///     "Tool 'sync' failed with SyncError: quota exceeded"
    /// );
    /// ```
    #[must_use]
    pub fn show_message(mut self) -> Self {
        self.show_message = true;
        self
    }

    /// Whether the model is shown this failure's message (see [`Failure::show_message`]).
    pub fn shows_message(&self) -> bool {
        self.show_message
    }

    /// The retry hint, if any.
    pub fn hint(&self) -> Option<RetryHint> {
        self.hint
    }

    /// Whether the failure ends the run.
    pub fn is_fatal(&self) -> bool {
        self.fatal
    }

    /// The kind the model is shown, e.g. `GatewayError` or `OrderError::Database`.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The full error, for the caller only.
    pub fn error(&self) -> &Arc<dyn StdError + Send + Sync + 'static> {
        &self.error
    }

    /// The full error, for the caller only.
    pub fn into_error(self) -> Arc<dyn StdError + Send + Sync + 'static> {
        self.error
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Failure")
            .field("kind", &self.kind)
            .field("error", &self.error)
            .field("hint", &self.hint)
            .field("fatal", &self.fatal)
            .field("show_message", &self.show_message)
            .finish()
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool failed with {}", self.kind)
    }
}

impl StdError for Failure {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.error)
    }
}

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
pub trait Disclose: StdError + Send + Sync + 'static {
    /// How this error is shown to the model.
    fn disclosure(&self) -> Disclosure;

    /// A fixed hint for the model on whether retrying can help (`#[disclose(transient)]`,
    /// `#[disclose(permanent)]`).
    fn retry_hint(&self) -> Option<RetryHint> {
        None
    }

    /// Whether the error ends the run (`#[disclose(fatal)]`); see [`Failure::fatal`].
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
            Self::Transient => "transient: retrying later may succeed",
            Self::Permanent => "permanent: retrying the same call will not help",
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
