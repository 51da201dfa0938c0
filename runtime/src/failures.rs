//! The errors a failed call carries, to downcast [`ToolFailure::error`](crate::ToolFailure::error)
//! to, and the kinds the runtime gives the failures it detects itself.
//!
//! A tool's own errors are its own types; these are the ones the runtime makes: a call that
//! panicked, ran out of time or named no tool, an output that could not be encoded, a call a
//! rule of the agent refused, a call a resumed run did not run again.
//!
//! ```
//! use reticent::ToolFailure;
//! use reticent::failures::{ToolTimedOut, kinds};
//!
//! fn describe(failure: &ToolFailure) -> String {
//!     match failure.error.downcast_ref::<ToolTimedOut>() {
//!         Some(timed_out) => format!("stopped: {timed_out}"),
//!         None if failure.kind == kinds::UNKNOWN_TOOL => "no such tool".to_owned(),
//!         None => failure.kind.clone(),
//!     }
//! }
//! # let _ = describe;
//! ```

pub use crate::agent::approval::{NotApproved, NotRunAgain};
pub use crate::agent::gates::{ForbiddenAfterUntrusted, PrerequisiteNotMet};
pub use crate::agent::state::{ErrorNotKept, ResumeRefused};
pub use crate::agent::turn::ToolsDisabled;
pub use crate::error::{BoxError, EffectOutcome, RetryHint, kinds};
pub use crate::tool::errors::{ToolPanicked, ToolTimedOut, UnknownTool};
pub use crate::tool::output::OutputError;
