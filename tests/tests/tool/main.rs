//! One tool on its own, called directly: its definition and schema, how it decodes the model's
//! arguments (from a value or from JSON text), what the model is told when it fails, and
//! `Secret<T>`.
//!
//! One test binary, a module per concern. The support code is the `reticent_tests` library.
#![forbid(unsafe_code)]

mod classify_by_type;
mod classify_report;
mod constraints;
mod content_output;
mod decoding;
mod definition;
mod disclosure;
mod output_schema;
mod param_attrs;
mod parameters;
mod schema;
mod secret;
mod text;
mod text_output;
