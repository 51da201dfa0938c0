//! The providers and the agent loop against llmock, an independent fault-injecting mock of the
//! model APIs (`reticent_tests::llmock`): the harness itself, then runs under injected faults
//! whose every outcome is judged by llmock's verdict and journal.
//!
//! Skipped, loudly, when `RETICENT_LLMOCK_PYTHON` is not set (`.ci/run` sets it).
#![forbid(unsafe_code)]

mod desk;
mod faults;
mod harness;
mod random;
