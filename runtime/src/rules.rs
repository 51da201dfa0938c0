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

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

pub use crate::argument_field::FitForArgumentMessage;
pub use crate::secret::{SecretCannotBeFormatted, SecretCannotBeSerialized};
pub use crate::tool::rules::{
    DiscloseErrorType, OutputIsNotAResult, OutputIsNotAnError, ProgressAmount, ProgressTotal,
    ThreadSafeError, ToolErrorType, ToolOutput,
};

/// A type a tool parameter can be decoded into. `#[tool]` checks each parameter's type with
/// `<T as ToolParam>::CHECK`, spanned at the type, so that a type that is not `Deserialize` is
/// reported there, once. Its schema is [`ToolParamSchema`]'s: two traits, so a type that lacks
/// one of `Deserialize` and `JsonSchema` is told which.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `serde::Deserialize`",
    label = "the model's arguments cannot be decoded into `{Self}`",
    note = "a tool parameter's type must implement `serde::Deserialize` and `schemars::JsonSchema`, and own its data (`String`, not `&str`)",
    note = "for your own types add `#[derive(serde::Deserialize, schemars::JsonSchema)]`"
)]
pub trait ToolParam {
    /// Nothing: naming it checks that the type is a `ToolParam`.
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> ToolParam for T {}

/// A type whose schema can describe a tool parameter; see [`ToolParam`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `schemars::JsonSchema`",
    label = "the model cannot be shown a schema for `{Self}`",
    note = "a tool parameter's type must implement `serde::Deserialize` and `schemars::JsonSchema`",
    note = "for your own types add `#[derive(schemars::JsonSchema)]` beside `serde::Deserialize`"
)]
pub trait ToolParamSchema {
    /// Nothing: naming it checks that the type is a `ToolParamSchema`.
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema> ToolParamSchema for T {}
