//! The rules `#[tool]`, `#[tools]`, `#[derive(Disclose)]` and [`Secret`](crate::Secret) check
//! when your crate compiles, as the traits a compile error names.
//!
//! You never implement or call these traits: the macros' generated code checks your types
//! against them, and a type that breaks a rule fails to compile at your own tokens, with a
//! message that says what is wrong and what to write instead. Each trait's documentation is
//! the rule it stands for.
//!
//! | trait | the rule |
//! |---|---|
//! | [`ToolParam`] | a parameter's type implements `serde::Deserialize` and owns its data |
//! | [`ToolParamSchema`] | a parameter's type implements `schemars::JsonSchema` |
//! | [`ToolOutput`] | a tool's output implements `serde::Serialize` |
//! | [`OutputIsNotAResult`] | a tool's `Result` does not hold another `Result` as its output |
//! | [`OutputIsNotAnError`] | a tool's output is not itself an error type |
//! | [`ToolErrorType`] | a tool's error is an error type (or `ArgumentError`, `Failure`, `ToolError`, `Box<dyn Error + Send + Sync>`, `anyhow::Error`/`eyre::Report` with those features) |
//! | [`ThreadSafeError`] | a tool's error type is `Send + Sync + 'static` |
//! | [`DiscloseErrorType`] | a type that derives `Disclose` is an error type, `Send + Sync + 'static` |
//! | [`FitForArgumentMessage`] | a field of a `#[disclose(argument)]` error is not an error type |
//! | [`SecretCannotBeFormatted`] | a [`Secret`](crate::Secret) is never formatted into text |
//! | [`SecretCannotBeSerialized`] | a [`Secret`](crate::Secret) is never serialized |
//! | [`ProgressAmount`], [`ProgressTotal`] | a call's progress is counted in numbers, integers or floats |
//!
//! What a tool returns is taken apart by its type, never by how it is written: a `Result` —
//! `Result<T, E>`, `io::Result<T>`, an alias, a `Result` renamed with `use … as` — has its
//! error classified; a `Result` anywhere deeper in an output (`Vec<Result<T, E>>`, a struct
//! field) is refused when the output is encoded, as a fatal
//! [`OutputError`](crate::failures::OutputError).
//!
//! The methods of these traits are not part of the public API.

pub use crate::argument_field::FitForArgumentMessage;
pub use crate::secret::{SecretCannotBeFormatted, SecretCannotBeSerialized};
pub use crate::tool::rules::{
    DiscloseErrorType, OutputIsNotAResult, OutputIsNotAnError, ProgressAmount, ProgressTotal,
    ThreadSafeError, ToolErrorType, ToolOutput, ToolParam, ToolParamSchema,
};
