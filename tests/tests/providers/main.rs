//! The HTTP providers against a scripted server on loopback: OpenAI Chat Completions and
//! Anthropic Messages, choosing a provider from a `PROVIDER:MODEL` spec, and the schema
//! dialects.
//!
//! One test binary, a module per concern. The support code is the `reticent_tests` library.
#![forbid(unsafe_code)]

mod anthropic;
mod env;
mod openai;
mod schema_dialect;
