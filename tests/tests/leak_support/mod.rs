//! The failures `leak_property` generates: tools that fail in every way a tool can, with a
//! message holding a canary, the strategies that generate them, and what the model and the
//! caller must be shown for each.
//!
//! A tool finds the failure it must produce by its `key` argument in a process-wide table, so
//! the message never travels through the arguments (which the model wrote, and which the
//! transcript holds).

use std::cell::Cell;
use std::collections::HashMap;
use std::error::Error as StdError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Once};
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use reticent::ToolError;

const MAX_MESSAGE_LEN: usize = ToolError::MAX_MESSAGE_LEN;
use reticent::{ArgumentError, BoxError, Disclose, Failure, RetryHint, Tool};
use serde::ser::{Error as _, Serialize, Serializer};

// ---- the canary ----------------------------------------------------------------------------

/// The canary of failure `index` of a case seeded `seed`. Every canary of a case has the same
/// length, so none is a part of another, and only characters JSON and `Debug` write as they
/// are, so a search of serialized text finds it.
pub fn canary(seed: u64, index: usize) -> String {
    format!("CNRY{seed:016x}x{index:04}")
}

/// The length of every canary.
pub const CANARY_LEN: usize = 4 + 16 + 1 + 4;

// ---- the error types -----------------------------------------------------------------------

/// A plain error type: the model sees `PlainError`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PlainError(pub String);

/// A `Disclose` enum with argument, kind, hinted and fatal variants.
#[derive(Debug, thiserror::Error, Disclose)]
pub enum StoreError {
    #[error("no record matches {0}")]
    #[disclose(argument)]
    NotFound(String),
    #[error("{0}")]
    #[disclose(argument, permanent)]
    OutOfRange(String),
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("throttled by {0}")]
    #[disclose(kind = "RateLimited")]
    Throttled(String),
    #[error("{0}")]
    #[disclose(transient)]
    Flaky(String),
    #[error("gone: {0}")]
    #[disclose(permanent)]
    Gone(String),
    #[error("{0}")]
    #[disclose(fatal)]
    Corrupt(String),
    /// Its own message is harmless; its source holds the secret.
    #[error("the store's backend failed")]
    Backend(#[source] std::io::Error),
}

/// An error whose own message is harmless and whose source holds the secret.
#[derive(Debug, thiserror::Error)]
#[error("could not read the ledger")]
pub struct LedgerError(#[source] pub std::io::Error);

/// The typed error behind an argument error: its message, written for the model, is clean;
/// its source holds the secret.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct BadDate {
    pub message: String,
    #[source]
    pub source: std::io::Error,
}

/// An output that cannot be turned into JSON: serializing it fails with its message.
#[derive(Debug)]
pub struct Unserializable(pub String);

impl Serialize for Unserializable {
    fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(S::Error::custom(&self.0))
    }
}

/// An error a developer made `Serialize`: were it sent as an output, its fields would reach the
/// model.
#[derive(Debug, thiserror::Error, serde::Serialize)]
#[error("{message}")]
pub struct SerError {
    pub message: String,
}

/// An alias of `Result`: classified by its type, as `Result` written out is.
pub type Outcome = Result<String, SerError>;

mod renamed {
    pub use std::result::Result as Res;
}
use renamed::Res;

/// An output with a `Result` in a struct field.
#[derive(serde::Serialize)]
pub struct Report {
    pub rows: u32,
    pub outcome: Result<u32, SerError>,
}

/// The message of an output refused because it holds a `Result`: fixed, nothing of the value.
const HOLDS_RESULT: &str = "the tool's output holds a `Result`, which is never sent to the model \
    as output (its `Err` would reach the model as a success); return errors as the tool's own `Err`";

/// The argument message a developer wrote in an `anyhow`/`eyre` chain: the canary is in the
/// context around it.
const REPORT_ARGUMENT: &str = "dates look like 2024-05-01";
/// The root cause or `Disclose` error of an `anyhow`/`eyre` chain: the canary is in the
/// context around it.
const REPORT_ROOT: &str = "the ledger is locked";

pub const IO_KINDS: [std::io::ErrorKind; 5] = [
    std::io::ErrorKind::NotFound,
    std::io::ErrorKind::PermissionDenied,
    std::io::ErrorKind::ConnectionRefused,
    std::io::ErrorKind::TimedOut,
    std::io::ErrorKind::Other,
];

// ---- the failures --------------------------------------------------------------------------

/// The `Disclose` variants that are not argument errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreFault {
    Unavailable,
    Throttled,
    Flaky,
    Gone,
    Corrupt,
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
    StoreArgument { canary: bool, hinted: bool },
    /// `io::Error` of one of [`IO_KINDS`].
    Io(usize),
    /// `Box<dyn Error + Send + Sync>`: from the message, or from a `LedgerError` (the secret
    /// in its source).
    Boxed { sourced: bool },
    /// A hand-built `Failure::new("Upstream", ..)`.
    HandFailure {
        hint: Option<RetryHint>,
        fatal: bool,
    },
    /// `Failure::from_error(PlainError)`.
    FailureFromError,
    /// A hand-built `ArgumentError::new(..)`; `canary` says whether its message holds it.
    Argument {
        canary: bool,
        hint: Option<RetryHint>,
    },
    /// `ArgumentError::from_error(BadDate)`: a clean message, the secret in the source.
    ArgumentSourced,
    /// `LedgerError`: a clean message, the secret in the source.
    Sourced,
    /// A panic whose payload holds the secret, before or after the tool first awaits.
    Panic { asynchronous: bool },
    /// A tool that runs past its time and would then fail with the secret.
    Timeout,
    /// An output that cannot be turned into JSON, the secret in serde's message (fatal).
    Output,
    /// An error that derives `Serialize`, returned through an alias of `Result` (or a `Result`
    /// renamed with `use … as`): classified by its type.
    Aliased { renamed: bool },
    /// A `Result` deeper in a successful output, the secret in its error: refused as it is
    /// encoded (fatal), with a message that holds nothing of it.
    ResultInOutput(Depth),
    /// An `anyhow::Error` (or `eyre::Report`) whose context string holds the secret.
    Report { eyre: bool, inner: ReportFault },
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
}

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
    fn holds_canary(self) -> bool {
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
                inner: ReportFault::Plain,
                ..
            } => "Error",
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
    fn hint(self) -> Option<RetryHint> {
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
    /// shown it.
    fn display(self, message: &str, canary: &str) -> Option<String> {
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
            Self::Panic { .. } | Self::Timeout => return None,
        })
    }
}

/// One generated failure: how the tool fails, and the text around the canary in its message.
#[derive(Clone, Debug)]
pub struct Spec {
    pub fault: Fault,
    pub prefix: String,
    pub suffix: String,
}

/// A failure a tool can be asked for: its spec made concrete with its canary.
#[derive(Debug)]
pub struct Registered {
    pub key: u64,
    pub fault: Fault,
    pub canary: String,
    /// The message the tool puts in its error (in the source, for the sourced faults).
    pub message: String,
}

impl Registered {
    pub fn tool(&self) -> &'static str {
        self.fault.tool()
    }

    /// The error's own message, as the model may be shown it.
    fn display(&self) -> Option<String> {
        self.fault.display(&self.message, &self.canary)
    }

    /// The model may be shown the canary: the message of an argument error, which the
    /// developer wrote for the model, or an error's own message when the run opted in.
    pub fn may_show(&self, include_error_message: bool) -> bool {
        if !self.fault.holds_canary() {
            return false;
        }
        let shown_as_argument = self.fault.is_argument();
        let shown_by_opt_in = include_error_message && !self.fault.is_argument();
        (shown_as_argument || shown_by_opt_in)
            && self.display().is_some_and(|d| d.contains(&self.canary))
    }

    /// What the caller's record of the error must hold, in its message or its sources: the
    /// whole message (and so the canary), or, for a stopped call, which returned no error, the
    /// limit it was given.
    pub fn caller_text(&self, limit: Duration) -> String {
        match self.fault {
            Fault::Timeout => format!(
                "the tool `fail_slow` did not finish within {}",
                duration_text(limit)
            ),
            Fault::Panic { .. } => format!("the tool `{}` panicked: {}", self.tool(), self.message),
            // the output was the tool's success; refused, it is not kept
            Fault::ResultInOutput(_) => HOLDS_RESULT.to_owned(),
            _ => self.message.clone(),
        }
    }

    /// Checks the text the model was shown for this failure (not collapsed as a repeat).
    pub fn check_shown(
        &self,
        shown: &str,
        include_error_message: bool,
        limit: Duration,
    ) -> Result<(), String> {
        let tool = self.tool();
        if shown.len() >= 1024 + tool.len() {
            return Err(format!(
                "the model's text is {} bytes, over 1 KiB + the tool name: {shown}",
                shown.len()
            ));
        }
        let hint = self
            .fault
            .hint()
            .map(|h| format!(" ({})", h.text()))
            .unwrap_or_default();
        let fixed = |expected: String| {
            if shown == expected {
                Ok(())
            } else {
                Err(format!(
                    "expected `{expected}`, the model was shown `{shown}`"
                ))
            }
        };
        match self.fault {
            Fault::Panic { .. } => fixed(format!("Tool '{tool}' failed with panic")),
            Fault::Timeout => fixed(format!(
                "Tool '{tool}' timed out after {} and was stopped; whether it took effect is unknown",
                duration_text(limit)
            )),
            fault if fault.is_argument() => {
                let display = self.display().expect("argument errors show");
                let head = format!("Invalid arguments for tool '{tool}': ");
                let message = shown
                    .strip_prefix(&head)
                    .and_then(|rest| rest.strip_suffix(&hint))
                    .ok_or_else(|| format!("not an argument error's text: `{shown}`"))?;
                check_cut(message, &display)
            }
            fault => {
                let line = format!("Tool '{tool}' failed with {}{hint}", fault.kind());
                if !include_error_message {
                    return fixed(line);
                }
                let display = self.display().expect("failures have messages");
                let message = shown
                    .strip_prefix(&line)
                    .and_then(|rest| rest.strip_prefix(": "))
                    .ok_or_else(|| format!("expected `{line}: ..`, got `{shown}`"))?;
                check_cut(message, &display)
            }
        }
    }
}

/// `shown` is `full`, or, when `full` is longer than `MAX_MESSAGE_LEN`, `full` with its middle
/// replaced by the marker `… (N bytes cut) …`, at most `MAX_MESSAGE_LEN` bytes in all.
pub fn check_cut(shown: &str, full: &str) -> Result<(), String> {
    if full.len() <= MAX_MESSAGE_LEN {
        return if shown == full {
            Ok(())
        } else {
            Err(format!(
                "expected the message `{full}` whole, got `{shown}`"
            ))
        };
    }
    if shown.len() > MAX_MESSAGE_LEN {
        return Err(format!(
            "a {} byte message was shown as {} bytes, over {MAX_MESSAGE_LEN}: `{shown}`",
            full.len(),
            shown.len()
        ));
    }
    let common = shown
        .bytes()
        .zip(full.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let is_cut = (0..=common).rev().any(|head| {
        let Some(rest) = shown.get(head..).and_then(|r| r.strip_prefix("… (")) else {
            return false;
        };
        let Some((dropped, tail)) = rest.split_once(" bytes cut) …") else {
            return false;
        };
        dropped.parse::<usize>().is_ok_and(|dropped| {
            dropped > 0 && head + dropped + tail.len() == full.len() && full.ends_with(tail)
        })
    });
    if is_cut {
        Ok(())
    } else {
        Err(format!(
            "`{shown}` is not the {} byte message cut in its middle: `{full}`",
            full.len()
        ))
    }
}

// ---- the table the tools read --------------------------------------------------------------

static TABLE: LazyLock<Mutex<HashMap<u64, Arc<Registered>>>> = LazyLock::new(Default::default);
static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

/// The failures of one case; they leave the table when it is dropped.
#[derive(Default)]
pub struct Registry {
    keys: Vec<u64>,
}

impl Registry {
    /// Makes `spec` something a tool can be asked for, with this canary.
    pub fn register(&mut self, spec: &Spec, canary: String) -> Arc<Registered> {
        let key = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
        let message = if spec.fault.holds_canary() {
            format!("{}{canary}{}", spec.prefix, spec.suffix)
        } else {
            format!("{}{}", spec.prefix, spec.suffix)
        };
        let registered = Arc::new(Registered {
            key,
            fault: spec.fault,
            canary,
            message,
        });
        TABLE.lock().unwrap().insert(key, Arc::clone(&registered));
        self.keys.push(key);
        registered
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
        for key in &self.keys {
            table.remove(key);
        }
    }
}

fn lookup(key: u64) -> Arc<Registered> {
    let table = TABLE.lock().unwrap();
    Arc::clone(table.get(&key).expect("the key was registered"))
}

fn io(message: String) -> std::io::Error {
    std::io::Error::other(message)
}

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Panics with `payload` without the panic hook printing it: thousands of generated panics
/// would bury the test's output.
fn quiet_panic(payload: String) -> ! {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.replace(false)) {
                previous(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    std::panic::panic_any(payload)
}

// ---- the tools -----------------------------------------------------------------------------

/// Fails with a plain error type.
#[reticent::tool]
pub fn fail_plain(
    /// Which failure.
    key: u64,
) -> Result<String, PlainError> {
    Err(PlainError(lookup(key).message.clone()))
}

/// Fails with a variant of a `Disclose` enum.
#[reticent::tool]
pub async fn fail_store(
    /// Which failure.
    key: u64,
) -> Result<String, StoreError> {
    let spec = lookup(key);
    let message = spec.message.clone();
    Err(match spec.fault {
        Fault::StoreArgument { hinted: false, .. } => StoreError::NotFound(message),
        Fault::StoreArgument { hinted: true, .. } => StoreError::OutOfRange(message),
        Fault::Store(StoreFault::Unavailable) => StoreError::Unavailable(message),
        Fault::Store(StoreFault::Throttled) => StoreError::Throttled(message),
        Fault::Store(StoreFault::Flaky) => StoreError::Flaky(message),
        Fault::Store(StoreFault::Gone) => StoreError::Gone(message),
        Fault::Store(StoreFault::Corrupt) => StoreError::Corrupt(message),
        Fault::Store(StoreFault::Backend) => StoreError::Backend(io(message)),
        other => unreachable!("{other:?} is not a store fault"),
    })
}

/// Fails with an `io::Error`.
#[reticent::tool]
pub fn fail_io(
    /// Which failure.
    key: u64,
) -> Result<String, std::io::Error> {
    let spec = lookup(key);
    let Fault::Io(kind) = spec.fault else {
        unreachable!()
    };
    Err(std::io::Error::new(IO_KINDS[kind], spec.message.clone()))
}

/// Fails with a boxed error.
#[reticent::tool]
pub async fn fail_boxed(
    /// Which failure.
    key: u64,
) -> Result<String, BoxError> {
    let spec = lookup(key);
    Err(match spec.fault {
        Fault::Boxed { sourced: true } => {
            Box::new(LedgerError(io(spec.message.clone()))) as BoxError
        }
        _ => spec.message.clone().into(),
    })
}

/// Fails with a hand-built `Failure`.
#[reticent::tool]
pub fn fail_failure(
    /// Which failure.
    key: u64,
) -> Result<String, Failure> {
    let spec = lookup(key);
    let error = PlainError(spec.message.clone());
    Err(match spec.fault {
        Fault::HandFailure { hint, fatal } => {
            let mut failure = Failure::new("Upstream", error);
            if let Some(hint) = hint {
                failure = failure.with_hint(hint);
            }
            if fatal {
                failure = failure.fatal();
            }
            failure
        }
        _ => Failure::from_error(error),
    })
}

/// Fails with a hand-built `ArgumentError`.
#[reticent::tool]
pub fn fail_argument(
    /// Which failure.
    key: u64,
) -> Result<String, ArgumentError> {
    let spec = lookup(key);
    Err(match spec.fault {
        Fault::Argument { hint, .. } => {
            let error = ArgumentError::new(spec.message.clone());
            match hint {
                Some(hint) => error.with_hint(hint),
                None => error,
            }
        }
        _ => {
            // the message the developer wrote for the model is the prefix and suffix; the
            // secret is in the source
            let error = BadDate {
                message: spec.message.replace(&spec.canary, ""),
                source: io(spec.message.clone()),
            };
            ArgumentError::new(error.to_string()).with_source(error)
        }
    })
}

/// Fails with an error whose source holds the secret.
#[reticent::tool]
pub fn fail_sourced(
    /// Which failure.
    key: u64,
) -> Result<String, LedgerError> {
    Err(LedgerError(io(lookup(key).message.clone())))
}

/// Panics.
#[reticent::tool]
pub fn fail_panic(
    /// Which failure.
    key: u64,
) -> String {
    quiet_panic(lookup(key).message.clone())
}

/// Panics after it first awaits.
#[reticent::tool]
pub async fn fail_panic_async(
    /// Which failure.
    key: u64,
) -> String {
    tokio::task::yield_now().await;
    quiet_panic(lookup(key).message.clone())
}

/// Runs past any time limit, then fails.
#[reticent::tool(timeout = "5s")]
pub async fn fail_slow(
    /// Which failure.
    key: u64,
) -> Result<String, PlainError> {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    Err(PlainError(lookup(key).message.clone()))
}

/// Returns an output that cannot be turned into JSON.
#[reticent::tool]
pub fn fail_output(
    /// Which failure.
    key: u64,
) -> Result<Unserializable, PlainError> {
    Ok(Unserializable(lookup(key).message.clone()))
}

/// Fails through an alias of `Result` with an error that derives `Serialize`.
#[reticent::tool]
pub fn fail_aliased(
    /// Which failure.
    key: u64,
) -> Outcome {
    Err(SerError {
        message: lookup(key).message.clone(),
    })
}

/// Fails through a `Result` renamed with `use … as`.
#[reticent::tool]
pub async fn fail_renamed(
    /// Which failure.
    key: u64,
) -> Res<String, SerError> {
    Err(SerError {
        message: lookup(key).message.clone(),
    })
}

/// The outputs with a `Result` deeper in them: serialized as the shape they hold.
#[derive(serde::Serialize)]
#[serde(untagged)]
pub enum Shapes {
    Vec(Vec<Result<u32, SerError>>),
    Field(Report),
    OptionOfAlias(Option<Vec<Outcome>>),
}

/// Succeeds with a `Result` deeper in its output, the secret in its error.
#[reticent::tool]
pub fn fail_result_in_output(
    /// Which failure.
    key: u64,
) -> Result<Shapes, PlainError> {
    let spec = lookup(key);
    let error = SerError {
        message: spec.message.clone(),
    };
    let Fault::ResultInOutput(depth) = spec.fault else {
        unreachable!()
    };
    Ok(match depth {
        Depth::Vec => Shapes::Vec(vec![Ok(1), Err(error)]),
        Depth::Field => Shapes::Field(Report {
            rows: 1,
            outcome: Err(error),
        }),
        Depth::OptionOfAlias => Shapes::OptionOfAlias(Some(vec![Outcome::Err(error)])),
    })
}

/// Fails with an `anyhow::Error` whose context string holds the secret.
#[reticent::tool]
pub fn fail_anyhow(
    /// Which failure.
    key: u64,
) -> anyhow::Result<String> {
    use anyhow::Context as _;
    let spec = lookup(key);
    let Fault::Report { inner, .. } = spec.fault else {
        unreachable!()
    };
    let context = spec.message.clone();
    match inner {
        ReportFault::Argument => Err(ArgumentError::new(REPORT_ARGUMENT)).context(context),
        ReportFault::Store => Err(StoreError::Unavailable(REPORT_ROOT.to_owned())).context(context),
        ReportFault::Plain => Err(anyhow::anyhow!(REPORT_ROOT)).context(context),
    }
}

/// Fails with an `eyre::Report` whose context string holds the secret.
#[reticent::tool]
pub async fn fail_eyre(
    /// Which failure.
    key: u64,
) -> eyre::Result<String> {
    use eyre::WrapErr as _;
    let spec = lookup(key);
    let Fault::Report { inner, .. } = spec.fault else {
        unreachable!()
    };
    let context = spec.message.clone();
    match inner {
        ReportFault::Argument => Err(ArgumentError::new(REPORT_ARGUMENT)).wrap_err(context),
        ReportFault::Store => {
            Err(StoreError::Unavailable(REPORT_ROOT.to_owned())).wrap_err(context)
        }
        ReportFault::Plain => Err(eyre::eyre!(REPORT_ROOT)).wrap_err(context),
    }
}

/// Every failing tool, once.
pub fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(FailPlain),
        Arc::new(FailStore),
        Arc::new(FailIo),
        Arc::new(FailBoxed),
        Arc::new(FailFailure),
        Arc::new(FailArgument),
        Arc::new(FailSourced),
        Arc::new(FailPanic),
        Arc::new(FailPanicAsync),
        Arc::new(FailSlow),
        Arc::new(FailOutput),
        Arc::new(FailAliased),
        Arc::new(FailRenamed),
        Arc::new(FailResultInOutput),
        Arc::new(FailAnyhow),
        Arc::new(FailEyre),
    ]
}

/// The tool named `name`.
pub fn tool(name: &str) -> Arc<dyn Tool> {
    tools()
        .into_iter()
        .find(|t| t.definition().name == name)
        .expect("a failing tool")
}

// ---- the caller's record -------------------------------------------------------------------

/// `error`'s message and all its sources', for "holds" checks.
pub fn full_chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(error) = source {
        text.push_str(" | ");
        text.push_str(&error.to_string());
        source = error.source();
    }
    text
}

/// Checks that `surface`, something the model received, holds no canary it may not see.
pub fn check_surface(
    what: &str,
    surface: &str,
    failures: &[Arc<Registered>],
    include_error_message: bool,
) -> Result<(), TestCaseError> {
    for failure in failures {
        if failure.may_show(include_error_message) {
            continue;
        }
        if let Some(at) = surface.find(&failure.canary) {
            let from = surface.floor_char_boundary(at.saturating_sub(200));
            let to = surface.ceil_char_boundary((at + 200).min(surface.len()));
            return Err(TestCaseError::fail(format!(
                "{what} holds the canary of a {:?} failure of `{}` (include_error_message: \
                 {include_error_message}): ..{}..",
                failure.fault,
                failure.tool(),
                &surface[from..to]
            )));
        }
    }
    Ok(())
}

// ---- the strategies ------------------------------------------------------------------------

fn hint() -> impl Strategy<Value = Option<RetryHint>> {
    prop_oneof![
        2 => Just(None),
        1 => Just(Some(RetryHint::Transient)),
        1 => Just(Some(RetryHint::Permanent)),
    ]
}

/// Every way to fail; `timeouts` weighs stopped calls (each costs real time where the clock
/// is not paused).
pub fn fault(timeouts: u32) -> impl Strategy<Value = Fault> {
    use StoreFault::*;
    prop_oneof![
        16 => Just(Fault::Plain),
        8 => Just(Fault::Store(Unavailable)),
        4 => Just(Fault::Store(Throttled)),
        4 => Just(Fault::Store(Flaky)),
        4 => Just(Fault::Store(Gone)),
        4 => Just(Fault::Store(Backend)),
        8 => (any::<bool>(), any::<bool>())
            .prop_map(|(canary, hinted)| Fault::StoreArgument { canary, hinted }),
        12 => (0..IO_KINDS.len()).prop_map(Fault::Io),
        8 => any::<bool>().prop_map(|sourced| Fault::Boxed { sourced }),
        8 => (hint(), prop::bool::weighted(0.05))
            .prop_map(|(hint, fatal)| Fault::HandFailure { hint, fatal }),
        4 => Just(Fault::FailureFromError),
        20 => (any::<bool>(), hint()).prop_map(|(canary, hint)| Fault::Argument { canary, hint }),
        8 => Just(Fault::ArgumentSourced),
        8 => Just(Fault::Sourced),
        8 => any::<bool>().prop_map(|asynchronous| Fault::Panic { asynchronous }),
        timeouts => Just(Fault::Timeout),
        // fatal: each ends its run after its turn, so rarer
        1 => Just(Fault::Store(Corrupt)),
        1 => Just(Fault::Output),
        8 => any::<bool>().prop_map(|renamed| Fault::Aliased { renamed }),
        1 => prop_oneof![Just(Depth::Vec), Just(Depth::Field), Just(Depth::OptionOfAlias)]
            .prop_map(Fault::ResultInOutput),
        12 => (
            any::<bool>(),
            prop_oneof![
                Just(ReportFault::Argument),
                Just(ReportFault::Store),
                Just(ReportFault::Plain)
            ]
        )
            .prop_map(|(eyre, inner)| Fault::Report { eyre, inner }),
    ]
}

/// Characters to build long text from: one to four bytes each.
const UNITS: [&str; 6] = ["a", "é", "€", "𝄞", "postgres://u:p@h/db ", "🦀ß"];

/// `bytes` bytes (exactly) of `unit` repeated, padded with ASCII at the start, so the text
/// ends with the unit.
fn fill_before(unit: &str, bytes: usize) -> String {
    "x".repeat(bytes % unit.len()) + &unit.repeat(bytes / unit.len())
}

/// `bytes` bytes (exactly) of `unit` repeated, padded with ASCII at the end, so the text
/// starts with the unit.
fn fill_after(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes / unit.len()) + &"x".repeat(bytes % unit.len())
}

/// Where the canary starts in a message of about `MAX_MESSAGE_LEN` bytes.
#[derive(Clone, Debug)]
enum Position {
    Anywhere(prop::sample::Index),
    /// This many bytes from the start: 260..360 puts it across the end of the head a cut
    /// message keeps (about two thirds of what is kept).
    FromStart(usize),
    /// This many bytes after it: 100..220 puts it across the start of the tail a cut message
    /// keeps (about a third of what is kept).
    FromEnd(usize),
}

/// The text around the canary: short text of any characters, long text, or text that puts the
/// canary near where a message is cut (its length is about `MAX_MESSAGE_LEN`, and the canary
/// anywhere in it, or across the end of the part kept at the start, or across the start of
/// the part kept at the end).
pub fn around() -> impl Strategy<Value = (String, String)> {
    let short_any = (".{0,24}", ".{0,24}");
    let short_ascii = ("[ -~]{0,60}", "[ -~]{0,60}");
    let long = (
        prop::sample::select(&UNITS[..]),
        0usize..4000,
        prop::sample::select(&UNITS[..]),
        0usize..4000,
    )
        .prop_map(|(a, n, b, m)| (fill_before(a, n), fill_after(b, m)));
    let position = prop_oneof![
        any::<prop::sample::Index>().prop_map(Position::Anywhere),
        (260usize..360).prop_map(Position::FromStart),
        (100usize..220).prop_map(Position::FromEnd),
    ];
    let near_cut = (
        prop::sample::select(&UNITS[..]),
        (MAX_MESSAGE_LEN - 60)..(MAX_MESSAGE_LEN + 160),
        position,
    )
        .prop_map(|(unit, total, position)| {
            // the canary starts at 0..=room
            let room = total - CANARY_LEN;
            let at = match position {
                Position::Anywhere(index) => index.index(room + 1),
                Position::FromStart(at) => at.min(room),
                Position::FromEnd(after) => room.saturating_sub(after),
            };
            (fill_before(unit, at), fill_after(unit, room - at))
        });
    prop_oneof![
        3 => short_any,
        3 => short_ascii,
        1 => long,
        4 => near_cut,
    ]
}

pub fn spec(timeouts: u32) -> impl Strategy<Value = Spec> {
    (fault(timeouts), around()).prop_map(|(fault, (prefix, suffix))| Spec {
        fault,
        prefix,
        suffix,
    })
}

/// `RETICENT_LEAK_SCALE` (default 1) times `cases`: set it to run more cases.
pub fn cases(cases: u32) -> u32 {
    let scale: f64 = std::env::var("RETICENT_LEAK_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    ((f64::from(cases) * scale).ceil() as u32).max(1)
}

/// A duration as the runtime writes it in a timeout's text (written here, not taken from the
/// runtime, so that the test checks the format): `150ms`, `1.5s`, `30s`, `2m`, `1h30m`.
pub fn duration_text(limit: Duration) -> String {
    let ms = limit.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    if !ms.is_multiple_of(1000) {
        return format!("{}s", limit.as_secs_f64());
    }
    let secs = limit.as_secs();
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut text = String::new();
    if h > 0 {
        text += &format!("{h}h");
    }
    if m > 0 {
        text += &format!("{m}m");
    }
    if s > 0 || text.is_empty() {
        text += &format!("{s}s");
    }
    text
}
