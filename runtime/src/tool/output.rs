//! Taking apart what a tool returned, by its type, and encoding its output as JSON or as text
//! ([`Encoding`]: the output a call asks for, and the tool's method that makes it; [`text_of`]:
//! the one rule for an output as text).
//!
//! What a tool returned is split where `#[tool]` calls it, by method resolution on the
//! returned value's concrete type — never by how the return type is spelled, so an alias of
//! `Result`, `use std::result::Result as Res` or `io::Result<T>` split the same way:
//!
//! ```text
//! (&Returned::new(&returned)).reticent_split().split(returned)
//! ```
//!
//! A `Result<T, E>` is split into its output `T` and its error `E`, which `error/classify.rs`
//! classifies; any other value is an output that cannot fail. The output is then checked by
//! its type (`(&&&OutputProbe::new(&output)).reticent_output().encode(&output)`): a `Result`
//! inside the tool's `Result`, or an output that is itself an error type, is a compile error at
//! the return type; anything else must be `Serialize`, and is encoded with every `Result`
//! deeper inside it refused (see `no_result.rs`).

use std::borrow::Cow;
use std::convert::Infallible;
use std::error::Error as StdError;
use std::fmt;
use std::marker::PhantomData;

use serde::Serialize;
use serde_json::Value;

use super::{Tool, ToolContext, ToolFuture, no_result, text};
use crate::content::ContentOutput;
use crate::error::{EffectOutcome, Failure, ToolError};

// ---- splitting what a tool returned --------------------------------------------------------

/// Carries the type a tool returned, for method resolution; holds no value.
#[derive(Debug)]
pub struct Returned<R>(PhantomData<R>);

impl<R> Returned<R> {
    /// Names `R` from a reference to what the tool returned.
    #[inline]
    pub fn new(_: &R) -> Self {
        Self(PhantomData)
    }
}

/// First choice: a `Result`, however its type is written.
pub trait ResultReturn {
    /// Picks the tag.
    #[inline]
    fn reticent_split(&self) -> ResultTag {
        ResultTag
    }
}
impl<T, E> ResultReturn for &Returned<Result<T, E>> {}

/// Last choice: any other value, an output that cannot fail.
pub trait ValueReturn {
    /// Picks the tag.
    #[inline]
    fn reticent_split(&self) -> ValueTag {
        ValueTag
    }
}
impl<R> ValueReturn for Returned<R> {}

/// Tag for a `Result`.
#[derive(Debug)]
pub struct ResultTag;
impl ResultTag {
    /// The result as it is.
    #[inline]
    pub fn split<T, E>(self, returned: Result<T, E>) -> Result<T, E> {
        returned
    }
}

/// Tag for a value that is not a `Result`.
#[derive(Debug)]
pub struct ValueTag;
impl ValueTag {
    /// The value as an output, with no error.
    #[inline]
    pub fn split<T>(self, returned: T) -> Result<T, Infallible> {
        Ok(returned)
    }
}

// ---- checking the output's type ------------------------------------------------------------

/// Carries a tool's output type, for method resolution; holds no value.
#[derive(Debug)]
pub struct OutputProbe<T>(PhantomData<T>);

impl<T> OutputProbe<T> {
    /// Names `T` from a reference to the output.
    #[inline]
    pub fn new(_: &T) -> Self {
        Self(PhantomData)
    }
}

/// First choice: a `Result` as the output of a tool that returned a `Result`.
pub trait NestedResultOutput {
    /// Picks the tag.
    #[inline]
    fn reticent_output(&self) -> NestedResultTag {
        NestedResultTag
    }
}
impl<T, E> NestedResultOutput for &&OutputProbe<Result<T, E>> {}

/// Second choice: an output that is an error type.
pub trait ErrorOutput {
    /// Picks the tag.
    #[inline]
    fn reticent_output(&self) -> ErrorOutputTag {
        ErrorOutputTag
    }
}
impl<T: StdError> ErrorOutput for &OutputProbe<T> {}

/// Last choice: any other output, which must be `Serialize`.
pub trait PlainOutput {
    /// Picks the tag.
    #[inline]
    fn reticent_output(&self) -> PlainOutputTag {
        PlainOutputTag
    }
}
impl<T> PlainOutput for OutputProbe<T> {}

/// Tag for an output that can be encoded.
#[derive(Debug)]
pub struct PlainOutputTag;
impl PlainOutputTag {
    /// The output encoded as `as_` says. Taken as a `&dyn ToolOutput`, so that an output that
    /// is not `Serialize` fails where the tool's return type is written.
    #[inline]
    pub fn encode(self, output: &dyn ToolOutput, as_: OutputAs) -> Result<Encoded, ToolError> {
        as_.encode(output)
    }
}

/// Tag for a `Result` inside a tool's `Result`: refused when the crate compiles.
#[derive(Debug)]
pub struct NestedResultTag;
impl NestedResultTag {
    /// Never called: no type implements [`OutputIsNotAResult`], so the call does not compile.
    #[inline]
    pub fn encode(self, _: &dyn OutputIsNotAResult, _: OutputAs) -> Result<Encoded, ToolError> {
        unreachable!("no type implements OutputIsNotAResult")
    }
}

/// Tag for an output that is an error type: refused when the crate compiles.
#[derive(Debug)]
pub struct ErrorOutputTag;
impl ErrorOutputTag {
    /// Never called: no type implements [`OutputIsNotAnError`], so the call does not compile.
    #[inline]
    pub fn encode(self, _: &dyn OutputIsNotAnError, _: OutputAs) -> Result<Encoded, ToolError> {
        unreachable!("no type implements OutputIsNotAnError")
    }
}

/// Implemented by no type: a `Result` inside the `Result` a tool returns would be sent to the
/// model as a successful output, its error with it.
#[diagnostic::on_unimplemented(
    message = "a tool cannot return a `Result` inside its `Result`: `{Self}` would reach the model as a successful output, its error with it",
    label = "the output of this `Result` is itself a `Result`",
    note = "return one `Result<T, E>` with one error type: flatten the inner result with `?` (`Ok(inner?)`) or `.and_then(..)`, converting its error into the tool's error type (`#[from]` on a variant of a `#[derive(Disclose)]` enum)"
)]
pub trait OutputIsNotAResult: sealed::Never {}

/// Implemented by no type: an error returned as a tool's output would be sent to the model as
/// a success, its message and fields with it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is an error type, and a tool's output is sent to the model as a success",
    label = "this output is an error type",
    note = "return the error as the `Err` of a `Result<T, {Self}>`, so that the model is told of it by its kind only"
)]
pub trait OutputIsNotAnError: sealed::Never {}

mod sealed {
    /// Implemented by no type.
    pub trait Never {}

    /// The types that are `Serialize`: no other type can implement `ToolOutput`, whose
    /// encoding refuses a `Result` anywhere in an output.
    pub trait Serializable {}
    impl<T: serde::Serialize> Serializable for T {}
}

// ---- content outputs -----------------------------------------------------------------------

/// Carries a tool's return type, to tell whether its output is content blocks
/// ([`ContentOutput`]); holds no value. `#[tool]` writes
/// `(&&&ContentProbe::<R>::new()).content_output()`, which picks, at compile time,
/// [`ResultContentOutput`] for a `Result<O, E>` whose `O` is content (however the `Result` is
/// spelled), else [`IsContentOutput`] when `R` is, else [`NotContentOutput`].
pub struct ContentProbe<R: ?Sized>(PhantomData<fn() -> PhantomData<R>>);

impl<R: ?Sized> ContentProbe<R> {
    /// The marker for `R`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<R: ?Sized> fmt::Debug for ContentProbe<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ContentProbe")
    }
}

/// First choice: a `Result` whose output is content.
pub trait ResultContentOutput {
    /// `true`.
    #[inline]
    fn content_output(&self) -> bool {
        true
    }
}
impl<O: ContentOutput, E> ResultContentOutput for &&ContentProbe<Result<O, E>> {}

/// Second choice: an output that is content.
pub trait IsContentOutput {
    /// `true`.
    #[inline]
    fn content_output(&self) -> bool {
        true
    }
}
impl<T: ContentOutput + ?Sized> IsContentOutput for &ContentProbe<T> {}

/// Last choice: any other output.
pub trait NotContentOutput {
    /// `false`.
    #[inline]
    fn content_output(&self) -> bool {
        false
    }
}
impl<T: ?Sized> NotContentOutput for ContentProbe<T> {}

// ---- encoding ------------------------------------------------------------------------------

/// A type that can be a tool's output.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's output",
    label = "the output must be turned into JSON for the model",
    note = "a tool's output must implement `serde::Serialize`; for your own types add `#[derive(serde::Serialize)]`"
)]
pub trait ToolOutput: sealed::Serializable {
    /// The output as JSON; refuses a `Result` anywhere in it.
    #[doc(hidden)]
    fn encode(&self) -> Result<Value, ToolError>;

    /// The output as the text a client is shown (a string as it is, anything else as compact
    /// JSON), written without building a `Value`; refuses a `Result` anywhere in it, as [`encode`](Self::encode) does.
    #[doc(hidden)]
    fn encode_text(&self) -> Result<String, ToolError>;
}

#[diagnostic::do_not_recommend]
impl<T: Serialize> ToolOutput for T {
    #[inline]
    fn encode(&self) -> Result<Value, ToolError> {
        no_result::to_value(self).map_err(output_error)
    }

    #[inline]
    fn encode_text(&self) -> Result<String, ToolError> {
        let json = no_result::to_text(self).map_err(output_error)?;
        if json.starts_with('"') {
            // A string is shown as it is, not as a JSON string literal.
            return serde_json::from_str(&json).map_err(|error| output_error(Some(error)));
        }
        Ok(json)
    }
}

/// The failure of an output that could not be encoded: `None` when it holds a `Result`.
fn output_error(error: Option<serde_json::Error>) -> ToolError {
    let error = match error {
        Some(error) => OutputError(Repr::Serialize(error)),
        None => OutputError(Repr::HoldsResult),
    };
    // The tool returned `Ok`: whatever it did, it did.
    let failure = Failure::new("OutputError", error).fatal();
    ToolError::Failed(failure.with_effect(EffectOutcome::Applied))
}

/// The one rule for an output as text — what the model is shown of a successful call, and an
/// MCP result's text content: a string as it is, anything else as compact JSON.
pub(crate) fn text_of(output: &Value) -> Cow<'_, str> {
    match output {
        Value::String(text) => Cow::Borrowed(text),
        // Writes bytes straight to a buffer, unlike `Display`; a `Value` always serializes.
        other => Cow::Owned(serde_json::to_string(other).unwrap_or_default()),
    }
}

/// [`text_of`], taking the output: a string is moved, not copied.
pub(crate) fn into_text(output: Value) -> String {
    match output {
        Value::String(text) => text,
        other => text_of(&other).into_owned(),
    }
}

/// How a call wants a `#[tool]`'s output: as JSON or as text. A value, not a type, so that a
/// tool's generated code is compiled once for both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputAs {
    /// As a `serde_json::Value`, for [`Tool::call`](super::Tool::call).
    Value,
    /// As the text a client is shown, for
    /// [`Tool::call_text_output`](super::Tool::call_text_output).
    Text,
}

impl OutputAs {
    /// `output` encoded as asked; refuses a `Result` anywhere in it.
    #[inline]
    pub fn encode(self, output: &dyn ToolOutput) -> Result<Encoded, ToolError> {
        match self {
            Self::Value => output.encode().map(Encoded::Value),
            Self::Text => output.encode_text().map(Encoded::Text),
        }
    }
}

/// A `#[tool]`'s output, encoded as the call asked ([`OutputAs`]).
#[derive(Debug)]
pub enum Encoded {
    /// As JSON.
    Value(Value),
    /// As text.
    Text(String),
}

impl Encoded {
    /// What a tool that returns nothing (`()`) has as its output.
    #[inline]
    pub fn unit(as_: OutputAs) -> Self {
        match as_ {
            OutputAs::Value => Self::Value(Value::Null),
            OutputAs::Text => Self::Text(into_text(Value::Null)),
        }
    }
}

/// How the runtime asks for a tool's output, by type — [`AsValue`] (the agent loop, and an MCP
/// tool with an output schema) or [`AsText`] (an MCP tool without one) — and the tool's method
/// that makes it.
pub trait Encoding {
    /// The encoded output.
    type Output: Send + 'static;

    /// Which encoding, as a value.
    const AS: OutputAs;

    /// The output of a call that asked for [`AS`](Self::AS).
    fn from_encoded(encoded: Encoded) -> Self::Output;

    /// Calls `tool` with arguments as a value.
    #[doc(hidden)]
    fn call(tool: &dyn Tool, args: Value, cx: ToolContext) -> ToolFuture<'_, Self::Output>;

    /// Calls `tool` with arguments as JSON text.
    #[doc(hidden)]
    fn call_text<'a>(
        tool: &'a dyn Tool,
        text: &str,
        cx: ToolContext,
    ) -> ToolFuture<'a, Self::Output>;
}

/// The output as a `serde_json::Value`.
#[derive(Debug)]
pub enum AsValue {}

impl Encoding for AsValue {
    type Output = Value;

    const AS: OutputAs = OutputAs::Value;

    #[inline]
    fn from_encoded(encoded: Encoded) -> Value {
        match encoded {
            Encoded::Value(value) => value,
            Encoded::Text(_) => unreachable!("a call that asks for a value is answered with one"),
        }
    }

    #[inline]
    fn call(tool: &dyn Tool, args: Value, cx: ToolContext) -> ToolFuture<'_, Value> {
        tool.call(args, cx)
    }

    #[inline]
    fn call_text<'a>(tool: &'a dyn Tool, text: &str, cx: ToolContext) -> ToolFuture<'a, Value> {
        tool.call_text(text, cx)
    }
}

/// The output as the text a client is shown: a string as it is, anything else as compact JSON.
#[derive(Debug)]
pub enum AsText {}

impl Encoding for AsText {
    type Output = String;

    const AS: OutputAs = OutputAs::Text;

    #[inline]
    fn from_encoded(encoded: Encoded) -> String {
        match encoded {
            Encoded::Text(text) => text,
            Encoded::Value(_) => unreachable!("a call that asks for text is answered with it"),
        }
    }

    #[inline]
    fn call(tool: &dyn Tool, args: Value, cx: ToolContext) -> ToolFuture<'_, String> {
        tool.call_text_output(args, cx)
    }

    /// Rare (an MCP client that sends the arguments as a JSON string): parsed, then called.
    fn call_text<'a>(tool: &'a dyn Tool, text: &str, cx: ToolContext) -> ToolFuture<'a, String> {
        match text::parse(text) {
            Ok(args) => tool.call_text_output(args, cx),
            Err(error) => ToolFuture::ready(Err(error)),
        }
    }
}

/// A tool's output could not be turned into JSON (e.g. a map with non-string keys), or it
/// holds a `Result`, which is never sent to the model as output.
///
/// Either way the failure is fatal: the tool finished its work, and what it returned cannot be
/// shown. The message of a refused `Result` holds nothing of the value.
pub struct OutputError(Repr);

enum Repr {
    Serialize(serde_json::Error),
    HoldsResult,
}

impl OutputError {
    /// Whether the output was refused because it holds a `Result` (`Vec<Result<T, E>>`, a
    /// struct field of type `Result`).
    pub fn holds_result(&self) -> bool {
        matches!(self.0, Repr::HoldsResult)
    }
}

impl fmt::Debug for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Serialize(error) => f.debug_tuple("OutputError").field(error).finish(),
            Repr::HoldsResult => f.write_str("OutputError(HoldsResult)"),
        }
    }
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Serialize(error) => {
                write!(
                    f,
                    "the tool's output could not be serialized to JSON: {error}"
                )
            }
            Repr::HoldsResult => f.write_str(
                "the tool's output holds a `Result`, which is never sent to the model as \
                 output (its `Err` would reach the model as a success); return errors as the \
                 tool's own `Err`",
            ),
        }
    }
}

impl StdError for OutputError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match &self.0 {
            // `Display` says serde's error: its source is what it does not say
            Repr::Serialize(error) => {
                crate::error::chain::first_new_source(&error.to_string(), error)
            }
            Repr::HoldsResult => None,
        }
    }
}
