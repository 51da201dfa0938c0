//! The agent loop on a scripted model: failure modes and limits, faults, cancellation,
//! timeouts, parallel calls, prerequisites, approvals and the calls they are bound to, resuming,
//! the stream, telemetry and the trajectory, the fence around untrusted output, and what the loop does after a failure (fatal
//! failures, retry hints, the effects ledger, per-tool counts, taint).
//!
//! One test binary, a module per concern. The support code is the `reticent_tests` library.
//! Spans are captured per test (`reticent_tests::spans`), and the paused clocks are per
//! runtime, so the modules' tests run side by side in one process.
#![forbid(unsafe_code)]

mod after_failure_fatal;
mod after_failure_hints;
mod after_failure_ledger;
mod after_failure_stats;
mod after_failure_taint;
mod approval;
mod approval_binding;
mod cancellation;
mod contain_faults;
mod content;
mod failure_modes;
mod faults;
mod fence;
mod idempotency;
mod limits;
mod parallel;
mod prerequisites;
mod progress;
mod reconcile;
mod resume;
mod state_canary;
mod steps;
mod stream;
mod streaming;
mod telemetry;
mod timeouts;
mod trajectory;
mod turn_retry;
