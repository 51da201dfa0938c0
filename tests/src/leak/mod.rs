//! The failures the leak property and the canary tests generate: tools that fail in every way
//! a tool can, with a message holding a canary, the strategies that generate them, and what the
//! model and the caller must be shown for each.
//!
//! A tool finds the failure it must produce by its `key` argument in a process-wide table, so
//! the message never travels through the arguments (which the model wrote, and which the
//! transcript holds). Each case's failures have keys of their own, so cases running at once in
//! one process never see each other's failures.
//!
//! - [`canary`]: the secret planted in each message;
//! - the error types the tools fail with ([`PlainError`], [`StoreError`], ...);
//! - [`Fault`]: each way a tool can fail, and what that way shows;
//! - [`Registry`]: the table the tools read their failure from;
//! - the tools ([`tools`], [`tool`]);
//! - the checks of what the model and the caller were shown ([`Registered::check_shown`],
//!   [`check_surface`], [`full_chain`]);
//! - the proptest strategies ([`spec`], [`fault`], [`around`]) and [`cases`].

mod canary;
mod errors;
mod expect;
mod fault;
mod registry;
mod strategy;
mod tools;

pub use canary::{CANARY_LEN, canary};
pub use errors::{
    BadDate, IO_KINDS, LedgerError, Outcome, PlainError, Report, SerError, StoreError,
    Unserializable,
};
pub use expect::{check_cut, check_surface, duration_text, full_chain};
pub use fault::{Depth, Fault, ReportFault, SLOW_TOOL_LIMIT, StoreFault, every_fault};
pub use registry::{Registered, Registry, Spec};
pub use strategy::{around, cases, fault, spec};
pub use tools::{
    FailAliased, FailAnyhow, FailEyre, FailRenamed, FailResultInOutput, Shapes, fail_aliased,
    fail_anyhow, fail_eyre, fail_renamed, fail_result_in_output,
};
pub use tools::{
    FailArgument, FailBoxed, FailFailure, FailIo, FailOutput, FailPanic, FailPanicAsync, FailPlain,
    FailSlow, FailSourced, FailStore, fail_argument, fail_boxed, fail_failure, fail_io,
    fail_output, fail_panic, fail_panic_async, fail_plain, fail_slow, fail_sourced, fail_store,
    tool, tools,
};
