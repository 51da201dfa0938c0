//! Classifying a tool's error by its type, when the crate compiles.
//!
//! The macro calls `(&&&Classify::new(&error)).reticent_kind().classify(error)`. Method
//! resolution picks the most specific impl available for the error's concrete type, at compile
//! time: `ArgumentError`/`Failure`/`ToolError`/boxed errors first, then `Disclose` types, then
//! every other error type. A type that is none of these fails to compile at the error type.

use std::error::Error as StdError;
use std::marker::PhantomData;

use crate::error::{ArgumentError, BoxError, Disclose, Failure, ToolError};

/// Carries the error type for method resolution; holds no value.
#[derive(Debug)]
pub struct Classify<E>(PhantomData<E>);

impl<E> Classify<E> {
    /// Names `E` from a reference to an error.
    #[inline]
    pub fn new(_: &E) -> Self {
        Self(PhantomData)
    }
}

/// Errors that are already classified.
pub trait Classified {
    /// The tool error.
    fn into_tool_error(self) -> ToolError;
}

impl Classified for ArgumentError {
    fn into_tool_error(self) -> ToolError {
        ToolError::Argument(self)
    }
}

impl Classified for Failure {
    fn into_tool_error(self) -> ToolError {
        ToolError::Failed(self)
    }
}

impl Classified for ToolError {
    fn into_tool_error(self) -> ToolError {
        self
    }
}

impl Classified for BoxError {
    fn into_tool_error(self) -> ToolError {
        ToolError::Failed(Failure::new("Error", self))
    }
}

/// First choice: already classified.
pub trait ClassifiedKind {
    /// Picks the tag.
    fn reticent_kind(&self) -> ClassifiedTag {
        ClassifiedTag
    }
}
impl<E: Classified> ClassifiedKind for &&Classify<E> {}

/// Second choice: `#[derive(Disclose)]` types.
pub trait DiscloseKind {
    /// Picks the tag.
    fn reticent_kind(&self) -> DiscloseTag {
        DiscloseTag
    }
}
impl<E: Disclose> DiscloseKind for &Classify<E> {}

/// Last choice: any other type, which must be an error type.
pub trait ErrorKind {
    /// Picks the tag.
    fn reticent_kind(&self) -> ErrorTag {
        ErrorTag
    }
}
impl<E> ErrorKind for Classify<E> {}

/// Tag for already classified errors.
#[derive(Debug)]
pub struct ClassifiedTag;
impl ClassifiedTag {
    /// Converts.
    #[inline]
    pub fn classify<E: Classified>(self, error: E) -> ToolError {
        error.into_tool_error()
    }
}

/// Tag for `Disclose` types.
#[derive(Debug)]
pub struct DiscloseTag;
impl DiscloseTag {
    /// Converts.
    #[inline]
    pub fn classify<E: Disclose>(self, error: E) -> ToolError {
        ToolError::from_disclose(error)
    }
}

/// Tag for other error types.
#[derive(Debug)]
pub struct ErrorTag;
impl ErrorTag {
    /// Converts.
    #[inline]
    pub fn classify<E: ToolErrorType>(self, error: E) -> ToolError {
        error.into_failure()
    }
}

/// An error type a tool can return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned as a tool's error",
    label = "the tool's error type must say what the model may be told",
    note = "return `reticent::ArgumentError` for the model's own mistakes, a type that derives `reticent::Disclose`, or any type implementing `std::error::Error + Send + Sync + 'static` (the model sees its type name)",
    note = "`anyhow::Error` and `Box<dyn Error>` without `Send + Sync` are not `std::error::Error + Send + Sync`: return a concrete error type or `Box<dyn Error + Send + Sync>`"
)]
pub trait ToolErrorType {
    /// Classifies by type name.
    fn into_failure(self) -> ToolError;
}

#[diagnostic::do_not_recommend]
impl<E: StdError + Send + Sync + 'static> ToolErrorType for E {
    #[inline]
    fn into_failure(self) -> ToolError {
        ToolError::from_error(self)
    }
}

/// What `#[derive(Disclose)]` asserts of a concrete type, so that a type that is not an
/// error is told so at its name rather than inside the generated impl.
#[diagnostic::on_unimplemented(
    message = "`{Self}` derives `Disclose` but is not a `std::error::Error + Send + Sync + 'static`",
    label = "`Disclose` says how this error is shown to the model, so it must be an error type",
    note = "derive the error too: `#[derive(Debug, thiserror::Error, reticent::Disclose)]`, or implement `std::error::Error` by hand",
    note = "an error type must also be `Send + Sync` and own its data: a field like `Rc`, `RefCell` or `&str` prevents that; use `Arc`, `Mutex` or `String`"
)]
pub trait DiscloseErrorType {
    /// Named, never called, by the generated assertion.
    fn assert() {}
}

#[diagnostic::do_not_recommend]
impl<E: StdError + Send + Sync + 'static> DiscloseErrorType for E {}
