//! Encoding a tool's output as JSON, and taking apart what a tool returned.

use serde::Serialize;
use serde_json::Value;

use crate::error::{Failure, ToolError};

/// A type that can be a tool's output.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's output",
    label = "the output must be turned into JSON for the model",
    note = "a tool's output must implement `serde::Serialize`; for your own types add `#[derive(serde::Serialize)]`"
)]
pub trait ToolOutput {
    /// The output as JSON.
    fn encode(&self) -> Result<Value, ToolError>;
}

#[diagnostic::do_not_recommend]
impl<T: Serialize> ToolOutput for T {
    #[inline]
    fn encode(&self) -> Result<Value, ToolError> {
        serde_json::to_value(self)
            .map_err(|e| ToolError::Failed(Failure::new("OutputError", OutputError(e)).fatal()))
    }
}

/// A tool's output could not be turned into JSON (e.g. a map with non-string keys).
#[derive(Debug, thiserror::Error)]
#[error("the tool's output could not be serialized to JSON: {0}")]
pub struct OutputError(serde_json::Error);

/// A fallible tool's return type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `Result` a tool can return",
    label = "expected `std::result::Result<T, E>`",
    note = "return `Result<T, E>` where `E` is `reticent::ArgumentError`, a type that derives `reticent::Disclose`, or any `std::error::Error + Send + Sync + 'static`"
)]
pub trait IntoToolResult {
    /// The success type.
    type Output;
    /// The error type.
    type Error;
    /// The `Result`.
    fn into_tool_result(self) -> Result<Self::Output, Self::Error>;
}

impl<T, E> IntoToolResult for Result<T, E> {
    type Output = T;
    type Error = E;
    #[inline]
    fn into_tool_result(self) -> Self {
        self
    }
}
