//! The failing tools: one per way a tool can fail, each reading its failure by key.

use std::cell::Cell;
use std::sync::{Arc, Once};
use std::time::Duration;

use reticent::{ArgumentError, Failure, Tool, ToolError, failures::BoxError};

use super::errors::{
    BadDate, IO_KINDS, LedgerError, Outcome, PlainError, Report, SerError, StoreError,
    Unserializable,
};
use super::fault::{Depth, Fault, REPORT_ARGUMENT, REPORT_ROOT, ReportFault, StoreFault, TOO_DEEP};
use super::registry::lookup;

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

mod renamed {
    pub(super) use std::result::Result as Res;
}
use renamed::Res;

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
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum Shapes {
    /// `Vec<Result<..>>`.
    Vec(Vec<Result<u32, SerError>>),
    /// A struct field.
    Field(Report),
    /// `Option<Vec<Outcome>>`.
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
        // the shape: an inner call's argument error, given a kind, through `?`
        ReportFault::FailureOverArgument => {
            let inner = ToolError::Argument(ArgumentError::new(context));
            Err(Failure::new("InternalLookup", inner))?
        }
        ReportFault::TooDeep => Err((0..TOO_DEEP)
            .fold(anyhow::anyhow!(REPORT_ROOT), |error, _| {
                error.context(context.clone())
            })),
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
        ReportFault::FailureOverArgument => {
            Err(Failure::new("InternalLookup", ArgumentError::new(context)))?
        }
        ReportFault::TooDeep => Err((0..TOO_DEEP).fold(eyre::eyre!(REPORT_ROOT), |error, _| {
            error.wrap_err(context.clone())
        })),
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
