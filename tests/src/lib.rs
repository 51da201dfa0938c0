//! The support code of reticent's integration tests: what the test binaries under `tests/`
//! share. Each module serves one concern:
//!
//! - [`transcript`]: reading the messages of a run and the requests a model received;
//! - [`spans`]: recording the `tracing` spans a test makes, kept apart from every other test in
//!   the same process;
//! - [`mcp`]: an rmcp client connected to a server in memory, and a failure hook that collects;
//! - [`provider`]: a scripted HTTP/1.1 server on loopback for the providers, and the fixtures;
//! - [`leak`]: the failing tools, strategies and checks of the leak property and the canary
//!   tests.
#![warn(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    rust_2018_idioms
)]
#![forbid(unsafe_code)]

pub mod leak;
pub mod mcp;
pub mod provider;
pub mod spans;
pub mod transcript;
