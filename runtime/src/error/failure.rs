//! [`Failure`]: a failure that is not the model's fault, shown to it by its kind only, and how
//! an error type is named as a kind.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

use super::{BoxError, EffectOutcome, RetryHint, chain};

/// A tool failure that is not the model's fault: the model is told its kind only.
///
/// The kind comes from the error's type (`GatewayError`, `OrderError::Database`) or from a
/// `&'static str` the developer wrote: a vocabulary chosen when the crate compiled, never
/// runtime data. The full error is kept for the caller as the [`source`](StdError::source) and
/// through [`Failure::error`].
///
/// ```
/// use std::error::Error;
/// use reticent::Failure;
///
/// let failure = Failure::from_error(std::io::Error::other("disk /dev/sda1 is full"));
/// assert_eq!(failure.kind(), "io::Error");
/// assert_eq!(failure.to_string(), "tool failed with io::Error");
/// assert_eq!(failure.source().unwrap().to_string(), "disk /dev/sda1 is full");
///
/// // A kind of your own: a fixed name, never text built at runtime.
/// let failure = Failure::new("RateLimited", std::io::Error::other("429 from api.example"));
/// assert_eq!(failure.kind(), "RateLimited");
/// ```
///
/// A kind cannot be made from runtime text: `Failure::new` takes a `&'static str`.
///
/// ```compile_fail
/// let dsn = String::from("postgres://admin:hunter2@db");
/// let failure = reticent::Failure::new(&format!("DbError at {dsn}"), std::io::Error::other("x"));
/// ```
#[derive(Clone)]
pub struct Failure {
    /// A `&'static str` or a type's name; owned only when a type named `Error` keeps its parent
    /// module (`io::Error`).
    kind: Cow<'static, str>,
    error: Arc<dyn StdError + Send + Sync + 'static>,
    hint: Option<RetryHint>,
    fatal: bool,
    show_message: bool,
    /// What the call that failed this way did, as far as the failure knows.
    effect: EffectOutcome,
    /// The message the model is shown when the message is shown: for an `anyhow`/`eyre` chain,
    /// that of the error that gave the kind, never a context string.
    shown: ShownMessage,
}

/// Which message a [`Failure`] shows the model when its message is shown.
#[derive(Clone, Debug)]
pub(crate) enum ShownMessage {
    /// That of the `n`th error of the chain (0: the failure's error itself, 1: its source
    /// ...), when a walk of the chain reaches it.
    At(usize),
    /// This text, read when the failure was classified: the message of an error an
    /// `anyhow`/`eyre` report holds as a context value, which is not an error of the chain.
    #[cfg_attr(not(any(feature = "anyhow", feature = "eyre")), allow(dead_code))]
    Text(Box<str>),
    /// None: the walk of an `anyhow`/`eyre` chain stopped before its root cause.
    #[cfg_attr(not(any(feature = "anyhow", feature = "eyre")), allow(dead_code))]
    Nothing,
}

impl Failure {
    /// A failure of kind `kind` caused by `error`.
    ///
    /// The kind is shown to the model: a fixed name such as `"RateLimited"`.
    pub fn new(kind: &'static str, error: impl Into<BoxError>) -> Self {
        Self {
            kind: Cow::Borrowed(kind),
            error: Arc::from(error.into()),
            hint: None,
            fatal: false,
            show_message: false,
            effect: EffectOutcome::Failed,
            shown: ShownMessage::At(0),
        }
    }

    /// A failure whose kind is the short name of `E` (see [`Failure::type_kind`]).
    pub fn from_error<E: StdError + Send + Sync + 'static>(error: E) -> Self {
        Self {
            kind: Self::type_kind::<E>(),
            error: Arc::new(error),
            hint: None,
            fatal: false,
            show_message: false,
            effect: EffectOutcome::Failed,
            shown: ShownMessage::At(0),
        }
    }

    /// A failure of kind `kind` (a type's short name) caused by `error`.
    pub(crate) fn with_kind(kind: Cow<'static, str>, error: BoxError) -> Self {
        Self {
            kind,
            error: Arc::from(error),
            hint: None,
            fatal: false,
            show_message: false,
            effect: EffectOutcome::Failed,
            shown: ShownMessage::At(0),
        }
    }

    /// [`Failure::type_kind`] of the type named `full` (as `std::any::type_name` names it).
    pub(crate) fn type_kind_of_name(full: &'static str) -> Cow<'static, str> {
        short_type_name(full)
    }

    /// The kind a failure of type `E` is shown as: the type's own name, without its module
    /// path or generic arguments (`app::pay::GatewayError<T>` → `GatewayError`). A type
    /// literally named `Error` keeps its nearest parent module that is not itself called
    /// `error` (`std::io::Error` → `io::Error`, `reqwest::Error` → `reqwest::Error`). `Box<E>`
    /// and `Arc<E>` are named after `E`, and a trait object after its trait (`Error`).
    ///
    /// ```
    /// use reticent::Failure;
    ///
    /// assert_eq!(Failure::type_kind::<std::io::Error>(), "io::Error");
    /// assert_eq!(Failure::type_kind::<Box<std::fmt::Error>>(), "fmt::Error");
    /// assert_eq!(Failure::type_kind::<reticent::failures::BoxError>(), "Error");
    /// ```
    pub fn type_kind<E: ?Sized>() -> Cow<'static, str> {
        short_type_name(std::any::type_name::<E>())
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

    /// Says what the call that failed this way did: [`EffectOutcome::Applied`] for a tool that
    /// finished its work and whose output could not be sent, [`EffectOutcome::Unknown`] for a
    /// call cut off after it was sent elsewhere (an MCP server that went away).
    pub(crate) fn with_effect(mut self, effect: EffectOutcome) -> Self {
        self.effect = effect;
        self
    }

    /// What the call that failed this way did ([`with_effect`](Self::with_effect)); a failure
    /// that says nothing failed without taking effect.
    pub(crate) fn effect(&self) -> EffectOutcome {
        self.effect
    }

    /// Says which message the model may be shown.
    #[cfg(any(feature = "anyhow", feature = "eyre"))]
    pub(crate) fn with_shown_message(mut self, shown: ShownMessage) -> Self {
        self.shown = shown;
        self
    }

    /// The message the model is shown when the message is shown, walked as every chain is;
    /// `None` when there is none to show.
    pub(crate) fn shown_message(&self) -> Option<String> {
        let n = match &self.shown {
            ShownMessage::At(n) => *n,
            ShownMessage::Text(text) => return Some(text.to_string()),
            ShownMessage::Nothing => return None,
        };
        let mut index = 0;
        let walked = chain::walk(&*self.error, |link| {
            if index == n {
                return std::ops::ControlFlow::Break(chain::display(link));
            }
            index += 1;
            std::ops::ControlFlow::Continue(())
        });
        match walked {
            chain::Walked::Stopped(message) => Some(message),
            // the chain ended before its `n`th error
            _ => None,
        }
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
            .field("shown", &self.shown)
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

/// The short name of a type given its full name (see [`Failure::type_kind`]).
fn short_type_name(full: &'static str) -> Cow<'static, str> {
    // The model is told about the error, not the pointer it is kept in.
    let mut full = full;
    while let Some(inner) = ["alloc::boxed::Box<", "alloc::sync::Arc<"]
        .iter()
        .find_map(|pointer| full.strip_prefix(pointer)?.strip_suffix('>'))
    {
        full = inner;
    }
    if full.starts_with("dyn ") {
        return Cow::Borrowed("Error");
    }
    let path = full.split('<').next().unwrap_or(full);
    let mut segments = path.rsplit("::");
    let name = segments.next().unwrap_or(path);
    if name != "Error" {
        return Cow::Borrowed(name);
    }
    match segments.find(|s| !matches!(*s, "error" | "errors" | "err")) {
        Some(parent) => Cow::Owned(format!("{parent}::Error")),
        None => Cow::Borrowed(name),
    }
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn short_names() {
        assert_eq!(short_type_name("app::pay::GatewayError"), "GatewayError");
        assert_eq!(
            short_type_name("app::pay::Wrapper<alloc::string::String>"),
            "Wrapper"
        );
        assert_eq!(short_type_name("std::io::error::Error"), "io::Error");
        assert_eq!(short_type_name("reqwest::error::Error"), "reqwest::Error");
        assert_eq!(short_type_name("core::fmt::Error"), "fmt::Error");
        assert_eq!(short_type_name("Error"), "Error");
        assert_eq!(short_type_name("Plain"), "Plain");
        assert_eq!(
            short_type_name("alloc::boxed::Box<app::pay::GatewayError>"),
            "GatewayError"
        );
        assert_eq!(
            short_type_name("alloc::sync::Arc<alloc::boxed::Box<std::io::error::Error>>"),
            "io::Error"
        );
        assert_eq!(
            short_type_name("alloc::sync::Arc<dyn core::error::Error + core::marker::Send>"),
            "Error"
        );
    }
}
