//! One tool on its own, called directly: its definition and schema, how it decodes the model's
//! arguments (from a value or from JSON text), what the model is told when it fails, and
//! `Secret<T>`.
//!
//! One test binary, a module per concern. The support code is the `reticent_tests` library.
#![forbid(unsafe_code)]

mod decoding;
mod definition;
mod disclosure;
mod schema;
mod secret;
mod text;
