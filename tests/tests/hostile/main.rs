//! Hostile inputs: arguments and provider responses built to break the loop, and error types
//! whose `Display` panics. Every one must end in a clear result, and the caller's program goes
//! on.
//!
//! One test binary, a module per concern. Nothing here installs a global subscriber: a run on a
//! small stack must measure the runtime, not a test's instrumentation.
#![forbid(unsafe_code)]

mod display_panic;
mod inputs;
mod pattern;
