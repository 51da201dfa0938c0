//! The HTTP providers against a scripted server on loopback: OpenAI Chat Completions and
//! Responses, Anthropic Messages and Gemini, the conformance suite all of them pass (and its
//! runs against llmock), state a provider needs back, choosing a provider from a
//! `PROVIDER:MODEL` spec, the schema dialects, and answers with too many tool calls.
//!
//! One test binary, a module per concern. The support code is the `reticent_tests` library.
#![forbid(unsafe_code)]

mod anthropic;
mod anthropic_stream;
mod conformance;
mod env;
mod errors_once;
mod gemini;
mod idle;
mod llmock;
mod many_calls;
mod openai;
mod openai_responses;
mod openai_stream;
mod provider_state;
mod schema_dialect;
mod schema_dialect_agent;
mod schema_dialect_property;
