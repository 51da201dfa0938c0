//! Classifying a tool's error by its type, when the crate compiles.
//!
//! The macro calls
//!
//! ```text
//! (&&&&Classify::new(&error)).reticent_kind().classify(Box::new(error))
//! ```
//!
//! Method resolution picks the most specific impl available for the error's concrete type, at
//! compile time:
//!
//! 1. errors that are already classified: `ArgumentError`, `Failure`, `ToolError`, boxed
//!    errors, and `anyhow::Error`/`eyre::Report` with those features (their chain is
//!    classified when the tool fails, see `report.rs`);
//! 2. `Disclose` types;
//! 3. any other `std::error::Error`, named by its type; it must be `Send + Sync + 'static`;
//! 4. anything else, which cannot be a tool's error.
//!
//! The ranks are the impls below, one `&` apart; the macro writes its call with one `&` per
//! rank, from its list `CLASSIFY_RANKS` (`macros/src/tool/expand.rs`), and a test here fails
//! when that list and these impls disagree.
//!
//! Tags 3 and 4 take the error as a trait object: a type that does not qualify fails to
//! compile where the box is made — in the tool's crate, at its error type — with the message of
//! [`ThreadSafeError`] or [`ToolErrorType`], never inside this crate.

use std::convert::Infallible;
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

/// What a tool that returns no `Result` fails with: nothing.
impl Classified for Infallible {
    fn into_tool_error(self) -> ToolError {
        match self {}
    }
}

/// First choice: already classified.
pub trait ClassifiedKind {
    /// Picks the tag.
    #[inline]
    fn reticent_kind(&self) -> ClassifiedTag {
        ClassifiedTag
    }
}
impl<E: Classified> ClassifiedKind for &&&Classify<E> {}

/// Second choice: `#[derive(Disclose)]` types.
pub trait DiscloseKind {
    /// Picks the tag.
    #[inline]
    fn reticent_kind(&self) -> DiscloseTag {
        DiscloseTag
    }
}
impl<E: Disclose> DiscloseKind for &&Classify<E> {}

/// Third choice: any other error type.
pub trait ErrorKind {
    /// Picks the tag.
    #[inline]
    fn reticent_kind(&self) -> ErrorTag {
        ErrorTag
    }
}
impl<E: StdError> ErrorKind for &Classify<E> {}

/// Last choice: a type that is not an error type.
pub trait NotAnErrorKind {
    /// Picks the tag.
    #[inline]
    fn reticent_kind(&self) -> NotAnErrorTag {
        NotAnErrorTag
    }
}
impl<E> NotAnErrorKind for Classify<E> {}

/// Tag for already classified errors.
#[derive(Debug)]
pub struct ClassifiedTag;
impl ClassifiedTag {
    /// Converts. (Every tag's `classify` takes the error boxed: the generated call is one
    /// expression for all of them.)
    #[inline]
    #[allow(clippy::boxed_local)]
    pub fn classify<E: Classified>(self, error: Box<E>) -> ToolError {
        (*error).into_tool_error()
    }
}

/// Tag for `Disclose` types.
#[derive(Debug)]
pub struct DiscloseTag;
impl DiscloseTag {
    /// Converts.
    #[inline]
    #[allow(clippy::boxed_local)]
    pub fn classify<E: Disclose>(self, error: Box<E>) -> ToolError {
        ToolError::from_disclose(*error)
    }
}

/// Tag for other error types.
#[derive(Debug)]
pub struct ErrorTag;
impl ErrorTag {
    /// Classifies by the type's name. The error arrives as a trait object, so that an error
    /// type that is not `Send + Sync + 'static` fails where the box is made, in the tool's
    /// crate.
    #[inline]
    pub fn classify(self, error: Box<dyn ThreadSafeError>) -> ToolError {
        let kind = Failure::type_kind_of_name(error.type_name());
        let error: BoxError = error;
        ToolError::Failed(Failure::with_kind(kind, error))
    }
}

/// Tag for a type that is not an error type: refused when the crate compiles.
#[derive(Debug)]
pub struct NotAnErrorTag;
impl NotAnErrorTag {
    /// Never called: no type implements [`ToolErrorType`], so the call does not compile.
    #[inline]
    pub fn classify(self, _: Box<dyn ToolErrorType>) -> ToolError {
        unreachable!("no type implements ToolErrorType")
    }
}

/// Implemented by no type: named when a tool's error type is none of the types a tool can
/// return as its error.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned as a tool's error",
    label = "the tool's error type must say what the model may be told",
    note = "return `reticent::ArgumentError` for the model's own mistakes (`ArgumentError::new(\"..\")`, its message is shown to the model), a type that derives `reticent::Disclose`, `reticent::Failure` for a failure of a kind you name (`Failure::new(\"Kind\", error)`), or any type implementing `std::error::Error + Send + Sync + 'static` (the model sees its type name)",
    note = "`Box<dyn Error>` must be `Box<dyn Error + Send + Sync>`; `anyhow::Error` and `eyre::Report` need `reticent`'s features `anyhow` and `eyre`"
)]
pub trait ToolErrorType: sealed::Never {}

mod sealed {
    pub trait Never {}
}

/// An error type that can cross threads, which every tool error must: it goes to the caller,
/// on whatever thread the caller awaits the run.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned as a tool's error: it is not `Send + Sync + 'static`",
    label = "the tool's error goes to the caller, who may be on another thread",
    note = "an error type must be `Send + Sync` and own its data: a field like `Rc`, `RefCell`, `Cell` or `&str` prevents that; use `Arc`, `Mutex`, atomics or `String`"
)]
pub trait ThreadSafeError: StdError + Send + Sync + 'static {
    /// The type's name, for its kind.
    #[doc(hidden)]
    fn type_name(&self) -> &'static str;
}

#[diagnostic::do_not_recommend]
impl<E: StdError + Send + Sync + 'static> ThreadSafeError for E {
    #[inline]
    fn type_name(&self) -> &'static str {
        std::any::type_name::<E>()
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
    #[doc(hidden)]
    fn assert() {}
}

#[diagnostic::do_not_recommend]
impl<E: StdError + Send + Sync + 'static> DiscloseErrorType for E {}

#[cfg(test)]
mod tests {
    /// The ranks as this file defines them: each `…Kind` trait, by the number of `&` before
    /// `Classify<E>` in its impl, first choice (most `&`) first.
    fn ranks_here() -> Vec<(usize, String)> {
        let mut ranks: Vec<(usize, String)> = include_str!("classify.rs")
            .lines()
            .filter_map(|line| {
                let (head, target) = line.strip_prefix("impl<E")?.split_once(" for ")?;
                let refs = target.strip_suffix("Classify<E> {}")?;
                if !refs.chars().all(|c| c == '&') {
                    return None;
                }
                let name = head.rsplit(' ').next()?;
                Some((refs.len(), name.to_owned()))
            })
            .collect();
        ranks.sort_by_key(|rank| std::cmp::Reverse(rank.0));
        ranks
    }

    /// The ranks as the macro writes its call: its `CLASSIFY_RANKS`, one `&` each.
    fn ranks_in_the_macro() -> Vec<String> {
        let source = include_str!("../../../macros/src/tool/expand.rs");
        let (_, list) = source
            .split_once("const CLASSIFY_RANKS")
            .expect("the macro names its ranks in CLASSIFY_RANKS");
        let (_, list) = list.split_once("= [").expect("a list of names");
        let (list, _) = list.split_once(']').expect("a list of names");
        list.split(',')
            .map(|name| name.trim().trim_matches('"').to_owned())
            .filter(|name| !name.is_empty())
            .collect()
    }

    #[test]
    fn the_macro_writes_the_ranks_this_file_defines_in_the_same_order() {
        let here = ranks_here();
        let refs: Vec<usize> = here.iter().map(|(refs, _)| *refs).collect();
        let count = here.len();
        assert_eq!(
            refs,
            (0..count).rev().collect::<Vec<_>>(),
            "one rank per number of `&`, from {} down to none",
            count - 1
        );
        let names: Vec<String> = here.into_iter().map(|(_, name)| name).collect();
        assert_eq!(
            names,
            [
                "ClassifiedKind",
                "DiscloseKind",
                "ErrorKind",
                "NotAnErrorKind"
            ],
            "the ranks this file defines"
        );
        assert_eq!(
            ranks_in_the_macro(),
            names,
            "macros/src/tool/expand.rs's CLASSIFY_RANKS must list this file's ranks, first choice first"
        );
    }
}
