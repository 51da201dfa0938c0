//! Each way a tool can fail, and what the model and the caller are shown for it.

use std::time::Duration;

use reticent::failures::RetryHint;

/// The `Disclose` variants that are not argument errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreFault {
    /// [`StoreError::Unavailable`](super::StoreError::Unavailable).
    Unavailable,
    /// [`StoreError::Throttled`](super::StoreError::Throttled).
    Throttled,
    /// [`StoreError::Flaky`](super::StoreError::Flaky).
    Flaky,
    /// [`StoreError::Gone`](super::StoreError::Gone).
    Gone,
    /// [`StoreError::Corrupt`](super::StoreError::Corrupt).
    Corrupt,
    /// [`StoreError::Backend`](super::StoreError::Backend).
    Backend,
}

/// One way a tool can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// `PlainError`, a thiserror struct.
    Plain,
    /// A `StoreError` variant that is not an argument error.
    Store(StoreFault),
    /// A `#[disclose(argument)]` variant; `canary` says whether its message holds it.
    /// `hinted` picks the variant with a retry hint.
    StoreArgument {
        /// The message holds the canary.
        canary: bool,
        /// The variant with a retry hint.
        hinted: bool,
    },
    /// `io::Error` of one of [`IO_KINDS`](super::IO_KINDS), by index.
    Io(usize),
    /// `Box<dyn Error + Send + Sync>`: from the message, or from a `LedgerError` (the secret
    /// in its source).
    Boxed {
        /// From a `LedgerError`, the secret in its source.
        sourced: bool,
    },
    /// A hand-built `Failure::new("Upstream", ..)`.
    HandFailure {
        /// The retry hint it carries.
        hint: Option<RetryHint>,
        /// It ends the run.
        fatal: bool,
    },
    /// `Failure::from_error(PlainError)`.
    FailureFromError,
    /// A hand-built `ArgumentError::new(..)`; `canary` says whether its message holds it.
    Argument {
        /// The message holds the canary.
        canary: bool,
        /// The retry hint it carries.
        hint: Option<RetryHint>,
    },
    /// `ArgumentError::from_error(BadDate)`: a clean message, the secret in the source.
    ArgumentSourced,
    /// `LedgerError`: a clean message, the secret in the source.
    Sourced,
    /// A panic whose payload holds the secret, before or after the tool first awaits.
    Panic {
        /// After the tool first awaits.
        asynchronous: bool,
    },
    /// A tool that runs past its time and would then fail with the secret.
    Timeout,
    /// An output that cannot be turned into JSON, the secret in serde's message (fatal).
    Output,
    /// An error that derives `Serialize`, returned through an alias of `Result` (or a `Result`
    /// renamed with `use … as`): classified by its type.
    Aliased {
        /// Through a `Result` renamed with `use … as`, not an alias.
        renamed: bool,
    },
    /// A `Result` deeper in a successful output, the secret in its error: refused as it is
    /// encoded (fatal), with a message that holds nothing of it.
    ResultInOutput(Depth),
    /// An `anyhow::Error` (or `eyre::Report`) whose context string holds the secret (or, for
    /// [`ReportFault::FailureOverArgument`], the argument error inside its `Failure`).
    Report {
        /// An `eyre::Report`, not an `anyhow::Error`.
        eyre: bool,
        /// What the chain holds under its context string.
        inner: ReportFault,
    },
}

/// Where a `Result` sits in an output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// `Vec<Result<..>>`.
    Vec,
    /// A struct field.
    Field,
    /// `Option<Vec<Outcome>>`: through an alias, two levels down.
    OptionOfAlias,
}

/// What an `anyhow`/`eyre` chain holds under its context string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFault {
    /// An `ArgumentError`: the model is shown its message alone.
    Argument,
    /// A `Disclose` variant that is not an argument error: its kind.
    Store,
    /// Nothing classified: `Error`.
    Plain,
    /// Returned through `?` with no context: a `Failure` of kind `InternalLookup` whose source
    /// is the argument error of an inner call, the secret in its message: the kind, never the
    /// argument error inside it.
    FailureOverArgument,
    /// More contexts than the walk of a chain reads, each holding the secret, over a plain
    /// message: `Error`, and no root cause even with the opt-in.
    TooDeep,
}

/// How many contexts a [`ReportFault::TooDeep`] chain has: more than the 32 errors the walk
/// of a chain reads.
pub(super) const TOO_DEEP: usize = 40;

/// The message of an output refused because it holds a `Result`: fixed, nothing of the value.
pub(super) const HOLDS_RESULT: &str = "the tool's output holds a `Result`, which is never sent to the model \
    as output (its `Err` would reach the model as a success); return errors as the tool's own `Err`";

/// The argument message a developer wrote in an `anyhow`/`eyre` chain: the canary is in the
/// context around it.
pub(super) const REPORT_ARGUMENT: &str = "dates look like 2024-05-01";
/// The root cause or `Disclose` error of an `anyhow`/`eyre` chain: the canary is in the
/// context around it.
pub(super) const REPORT_ROOT: &str = "the ledger is locked";

/// One fault of each tool and kind.
pub fn every_fault() -> Vec<Fault> {
    use StoreFault::*;
    let mut faults = vec![
        Fault::Plain,
        Fault::StoreArgument {
            canary: true,
            hinted: false,
        },
        Fault::Io(0),
        Fault::Boxed { sourced: false },
        Fault::HandFailure {
            hint: None,
            fatal: false,
        },
        Fault::FailureFromError,
        Fault::Argument {
            canary: true,
            hint: None,
        },
        Fault::Sourced,
        Fault::Panic {
            asynchronous: false,
        },
        Fault::Panic { asynchronous: true },
        Fault::Timeout,
        Fault::Output,
    ];
    faults.extend([Unavailable, Throttled, Flaky, Gone, Corrupt, Backend].map(Fault::Store));
    faults.extend([false, true].map(|renamed| Fault::Aliased { renamed }));
    faults.push(Fault::ResultInOutput(Depth::Vec));
    for eyre in [false, true] {
        for inner in [
            ReportFault::Argument,
            ReportFault::Store,
            ReportFault::Plain,
            ReportFault::FailureOverArgument,
            ReportFault::TooDeep,
        ] {
            faults.push(Fault::Report { eyre, inner });
        }
    }
    faults
}

/// The time limit of `fail_slow` itself.
pub const SLOW_TOOL_LIMIT: Duration = Duration::from_secs(5);

impl Fault {
    /// The tool that fails this way.
    pub fn tool(self) -> &'static str {
        match self {
            Self::Plain => "fail_plain",
            Self::Store(_) | Self::StoreArgument { .. } => "fail_store",
            Self::Io(_) => "fail_io",
            Self::Boxed { .. } => "fail_boxed",
            Self::HandFailure { .. } | Self::FailureFromError => "fail_failure",
            Self::Argument { .. } | Self::ArgumentSourced => "fail_argument",
            Self::Sourced => "fail_sourced",
            Self::Panic {
                asynchronous: false,
            } => "fail_panic",
            Self::Panic { asynchronous: true } => "fail_panic_async",
            Self::Timeout => "fail_slow",
            Self::Output => "fail_output",
            Self::Aliased { renamed: false } => "fail_aliased",
            Self::Aliased { renamed: true } => "fail_renamed",
            Self::ResultInOutput(_) => "fail_result_in_output",
            Self::Report { eyre: false, .. } => "fail_anyhow",
            Self::Report { eyre: true, .. } => "fail_eyre",
        }
    }

    /// The message (or source) holds the canary.
    pub(super) fn holds_canary(self) -> bool {
        match self {
            Self::StoreArgument { canary, .. } | Self::Argument { canary, .. } => canary,
            _ => true,
        }
    }

    /// The model is shown the message as an argument error.
    pub fn is_argument(self) -> bool {
        matches!(
            self,
            Self::StoreArgument { .. }
                | Self::Argument { .. }
                | Self::ArgumentSourced
                | Self::Report {
                    inner: ReportFault::Argument,
                    ..
                }
        )
    }

    /// The failure ends the run whatever the failure mode.
    pub fn is_fatal(self) -> bool {
        matches!(
            self,
            Self::Store(StoreFault::Corrupt)
                | Self::HandFailure { fatal: true, .. }
                | Self::Output
                | Self::ResultInOutput(_)
        )
    }

    /// The call is stopped at its time limit.
    pub fn is_timeout(self) -> bool {
        self == Self::Timeout
    }

    /// The kind the caller's record and the model's line name.
    pub fn kind(self) -> &'static str {
        match self {
            Self::Plain | Self::FailureFromError => "PlainError",
            Self::Store(StoreFault::Unavailable) => "StoreError::Unavailable",
            Self::Store(StoreFault::Throttled) => "RateLimited",
            Self::Store(StoreFault::Flaky) => "StoreError::Flaky",
            Self::Store(StoreFault::Gone) => "StoreError::Gone",
            Self::Store(StoreFault::Corrupt) => "StoreError::Corrupt",
            Self::Store(StoreFault::Backend) => "StoreError::Backend",
            Self::StoreArgument { .. }
            | Self::Argument { .. }
            | Self::ArgumentSourced
            | Self::Report {
                inner: ReportFault::Argument,
                ..
            } => "argument",
            Self::Aliased { .. } => "SerError",
            Self::ResultInOutput(_) => "OutputError",
            Self::Report {
                inner: ReportFault::Store,
                ..
            } => "StoreError::Unavailable",
            Self::Report {
                inner: ReportFault::Plain | ReportFault::TooDeep,
                ..
            } => "Error",
            Self::Report {
                inner: ReportFault::FailureOverArgument,
                ..
            } => "InternalLookup",
            Self::Io(_) => "io::Error",
            Self::Boxed { .. } => "Error",
            Self::HandFailure { .. } => "Upstream",
            Self::Sourced => "LedgerError",
            Self::Panic { .. } => "panic",
            Self::Timeout => "timeout",
            Self::Output => "OutputError",
        }
    }

    /// The fixed retry hint the model is shown.
    pub(super) fn hint(self) -> Option<RetryHint> {
        match self {
            Self::Store(StoreFault::Flaky) => Some(RetryHint::Transient),
            Self::Store(StoreFault::Gone) => Some(RetryHint::Permanent),
            Self::StoreArgument { hinted: true, .. } => Some(RetryHint::Permanent),
            Self::HandFailure { hint, .. } | Self::Argument { hint, .. } => hint,
            _ => None,
        }
    }

    /// The error's own message (its `Display`), given the generated message and canary: what
    /// an argument error shows, and what the opt-in appends. `None` when the model is never
    /// shown a message.
    pub(super) fn display(self, message: &str, canary: &str) -> Option<String> {
        Some(match self {
            Self::Plain
            | Self::Store(StoreFault::Flaky | StoreFault::Corrupt)
            | Self::StoreArgument { hinted: true, .. }
            | Self::Io(_)
            | Self::Boxed { sourced: false }
            | Self::HandFailure { .. }
            | Self::FailureFromError
            | Self::Argument { .. } => message.to_owned(),
            // the developer's message for the model; the secret is in the source
            Self::ArgumentSourced => message.replace(canary, ""),
            Self::StoreArgument { hinted: false, .. } => format!("no record matches {message}"),
            Self::Store(StoreFault::Unavailable) => format!("store unavailable: {message}"),
            Self::Store(StoreFault::Throttled) => format!("throttled by {message}"),
            Self::Store(StoreFault::Gone) => format!("gone: {message}"),
            Self::Store(StoreFault::Backend) => "the store's backend failed".to_owned(),
            Self::Boxed { sourced: true } | Self::Sourced => "could not read the ledger".to_owned(),
            Self::Output => {
                format!("the tool's output could not be serialized to JSON: {message}")
            }
            Self::Aliased { .. } => message.to_owned(),
            Self::ResultInOutput(_) => HOLDS_RESULT.to_owned(),
            Self::Report {
                inner: ReportFault::Argument,
                ..
            } => REPORT_ARGUMENT.to_owned(),
            Self::Report {
                inner: ReportFault::Store,
                ..
            } => format!("store unavailable: {REPORT_ROOT}"),
            Self::Report {
                inner: ReportFault::Plain,
                ..
            } => REPORT_ROOT.to_owned(),
            // the failure's own error, as a `Failure` returned on its own shows
            Self::Report {
                inner: ReportFault::FailureOverArgument,
                ..
            } => message.to_owned(),
            Self::Report {
                inner: ReportFault::TooDeep,
                ..
            }
            | Self::Panic { .. }
            | Self::Timeout => return None,
        })
    }
}
