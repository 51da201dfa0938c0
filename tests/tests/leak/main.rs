//! The promise, checked at every surface: a failed tool tells the model less than it tells the
//! caller. The leak property over thousands of generated failures, and the canary tests of a
//! tool called directly, the agent loop, the HTTP providers' wire bytes and the MCP server's.
//!
//! One test binary, a module per surface. The support code is the `reticent_tests` library
//! (`reticent_tests::leak` holds the failing tools and the checks). Each case registers its
//! failures under keys of its own, spans are captured per test, and the quiet panic hook
//! silences only the panics a failing tool raises on purpose, so the modules' tests run side by
//! side in one process.
#![forbid(unsafe_code)]

mod agent_canary;
mod budget;
mod kit;
mod mcp_canary;
mod property;
mod provider_canary;
mod tool_canary;
