//! What a running tool reports besides its result — progress and log lines, written for people
//! — and how they reach whoever watches the call: events on its `execute_tool` span, and a
//! bounded queue a consumer (the agent's event stream, an MCP client) drains while the call
//! runs. Nothing here reaches the model.

use std::fmt::{self, Write as _};
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tracing::Span;

/// The longest progress or log message passed on, in bytes; a longer one is cut, and ends
/// with `… (cut)`.
pub(crate) const MAX_UPDATE_LEN: usize = 2048;

/// How many reports wait for a slow consumer before further ones are dropped.
const QUEUE_LEN: usize = 64;

/// The severity of a line a tool logs with [`ToolContext::log`](super::ToolContext::log).
///
/// Ordered from `Debug` to `Error`. On the call's `execute_tool` span a line is an event at the
/// `tracing` level of the same name (`Warning` is `WARN`); over MCP it is a
/// `notifications/message` at the MCP level of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// What the tool is doing.
    Info,
    /// Something the reader should know about, that did not stop the tool.
    Warning,
    /// Something failed (the tool may still succeed, or fail with its own error).
    Error,
}

impl LogLevel {
    /// The level's name, lowercase (`"warning"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A count [`ToolContext::progress`](super::ToolContext::progress) takes for how far a call got:
/// any integer or float type, so that steps counted in integers need no conversion. Passed on
/// as an `f64` (an integer past 2^53 loses its last digits, which a progress bar never shows).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a progress count",
    label = "expected a number",
    note = "progress is counted in any integer or float type: `cx.progress(3, 10, \"copying\")`"
)]
pub trait ProgressAmount: sealed::Sealed {
    /// The count as an `f64`.
    #[doc(hidden)]
    fn into_f64(self) -> f64;
}

/// The total [`ToolContext::progress`](super::ToolContext::progress) takes: a count, as for
/// [`ProgressAmount`], or `None` when the total is not known (or an `Option<f64>`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a progress total",
    label = "expected a number or `None`",
    note = "a total is any integer or float type, or `None` when it is not known: `cx.progress(3, None, None)`"
)]
pub trait ProgressTotal: sealed::Sealed {
    /// The total as an `f64`, if known.
    #[doc(hidden)]
    fn into_total(self) -> Option<f64>;
}

mod sealed {
    pub trait Sealed {}
}

/// `ProgressAmount` and `ProgressTotal` for each primitive number type.
macro_rules! progress_amounts {
    ($($ty:ty),*) => {$(
        impl sealed::Sealed for $ty {}

        impl ProgressAmount for $ty {
            #[inline]
            fn into_f64(self) -> f64 {
                self as f64
            }
        }

        impl ProgressTotal for $ty {
            #[inline]
            fn into_total(self) -> Option<f64> {
                Some(self as f64)
            }
        }
    )*};
}

progress_amounts!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64
);

// Only `Option<f64>`: with an `Option` of each number type, a bare `None` would not say which.
impl sealed::Sealed for Option<f64> {}

impl ProgressTotal for Option<f64> {
    #[inline]
    fn into_total(self) -> Option<f64> {
        self
    }
}

/// One report of a running tool, for a consumer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ToolUpdate {
    /// `cx.progress(..)`.
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// `cx.log(..)`.
    Log { level: LogLevel, message: String },
}

/// What a consumer wants passed on to it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Forward {
    /// Progress reports.
    pub(crate) progress: bool,
    /// Log lines at this level and above; none when `None`.
    pub(crate) logs: Option<LogLevel>,
}

impl Forward {
    fn anything(self) -> bool {
        self.progress || self.logs.is_some()
    }
}

/// Who watches one call: its span, and the queue of a consumer. A call nobody watches has no
/// observer, and its reports cost a branch.
#[derive(Debug)]
pub(crate) struct Observer {
    /// The call's `execute_tool` span, when it is enabled.
    span: Option<Span>,
    queue: Option<mpsc::Sender<ToolUpdate>>,
    forward: Forward,
    /// The last progress passed on: progress only increases.
    last_progress: Mutex<Option<f64>>,
    /// Whether a dropped report was already noted on the span.
    dropped: AtomicBool,
}

/// The consumer's end of a call's reports.
#[derive(Debug)]
pub(crate) struct Updates(mpsc::Receiver<ToolUpdate>);

impl Observer {
    /// The observer of a call that runs on `span`, with the consumer's end of its queue when
    /// `forward` asks for anything; `None` when nobody watches (the span is disabled and the
    /// consumer wants nothing).
    #[inline]
    pub(crate) fn new(span: &Span, forward: Forward) -> Option<(Arc<Self>, Option<Updates>)> {
        // Most calls: two tests, in the caller.
        if span.is_disabled() && !forward.anything() {
            return None;
        }
        Self::watching(span, forward)
    }

    /// [`new`](Self::new), for a call someone watches.
    fn watching(span: &Span, forward: Forward) -> Option<(Arc<Self>, Option<Updates>)> {
        let span = (!span.is_disabled()).then(|| span.clone());
        let (queue, updates) = if forward.anything() {
            let (sender, receiver) = mpsc::channel(QUEUE_LEN);
            (Some(sender), Some(Updates(receiver)))
        } else {
            (None, None)
        };
        let observer = Self {
            span,
            queue,
            forward,
            last_progress: Mutex::new(None),
            dropped: AtomicBool::new(false),
        };
        Some((Arc::new(observer), updates))
    }

    /// A progress report. Dropped when `progress` or `total` is not a finite number, or when
    /// `progress` is not more than the last one passed on.
    pub(crate) fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if !moves_on(&self.last_progress, progress, total) {
            return;
        }
        let message = message.map(|m| bounded(&m));
        if let Some(span) = &self.span {
            tracing::info!(
                parent: span,
                progress,
                total,
                progress.message = message.as_deref(),
                "tool progress"
            );
        }
        if self.forward.progress {
            self.send(ToolUpdate::Progress {
                progress,
                total,
                message,
            });
        }
    }

    /// A log line; formatted only when someone will read it.
    pub(crate) fn log(&self, level: LogLevel, message: &dyn fmt::Display) {
        let forward = self.forward.logs.is_some_and(|min| level >= min);
        if !forward && self.span.is_none() {
            return;
        }
        let message = bounded(message);
        if let Some(span) = &self.span {
            // The line is the event's message, marked as the tool's own.
            match level {
                LogLevel::Debug => tracing::debug!(parent: span, tool.log = true, "{message}"),
                LogLevel::Info => tracing::info!(parent: span, tool.log = true, "{message}"),
                LogLevel::Warning => tracing::warn!(parent: span, tool.log = true, "{message}"),
                LogLevel::Error => tracing::error!(parent: span, tool.log = true, "{message}"),
            }
        }
        if forward {
            self.send(ToolUpdate::Log { level, message });
        }
    }

    /// Queues `update` for the consumer; drops it when the queue is full (the consumer reads
    /// slower than the tool reports) or gone (the call is over).
    fn send(&self, update: ToolUpdate) {
        let Some(queue) = &self.queue else { return };
        if let Err(mpsc::error::TrySendError::Full(_)) = queue.try_send(update)
            && !self.dropped.swap(true, Ordering::Relaxed)
            && let Some(span) = &self.span
        {
            tracing::warn!(
                parent: span,
                "the tool reports faster than they are read: reports were dropped"
            );
        }
    }
}

/// A consumer of a call's reports.
pub(crate) trait Deliver: Send {
    /// Passes one report on.
    fn deliver(&mut self, update: ToolUpdate) -> impl Future<Output = ()> + Send;
}

/// Runs `call` while passing its reports on to `deliver`, in the order they were made, and
/// every report made before the call ended before its output is returned. Without `updates`,
/// just `call`.
///
/// While a report is being delivered the call is not polled: a consumer that reads slowly
/// slows the call, instead of letting reports pile up.
pub(crate) async fn drive<F: Future>(
    call: F,
    updates: Option<Updates>,
    deliver: &mut impl Deliver,
) -> F::Output {
    let Some(Updates(mut updates)) = updates else {
        return call.await;
    };
    let mut call = pin!(call);
    loop {
        tokio::select! {
            biased;
            output = &mut call => {
                // Reports from a call abandoned on another thread are not passed on after its
                // end.
                updates.close();
                while let Ok(update) = updates.try_recv() {
                    deliver.deliver(update).await;
                }
                return output;
            }
            Some(update) = updates.recv() => deliver.deliver(update).await,
        }
    }
}

/// `message` as text of at most [`MAX_UPDATE_LEN`] bytes; formatting stops there.
fn bounded(message: &dyn fmt::Display) -> String {
    const CUT: &str = "… (cut)";
    struct Writer {
        text: String,
        cut: bool,
    }
    impl fmt::Write for Writer {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let room = MAX_UPDATE_LEN - CUT.len() - self.text.len();
            if s.len() <= room {
                self.text.push_str(s);
                Ok(())
            } else {
                self.text.push_str(&s[..s.floor_char_boundary(room)]);
                self.cut = true;
                Err(fmt::Error)
            }
        }
    }
    let mut writer = Writer {
        text: String::new(),
        cut: false,
    };
    // An error is the writer's own (the message is cut there) or a `Display` that failed:
    // what it wrote is kept.
    let _ = write!(writer, "{message}");
    if writer.cut {
        writer.text.push_str(CUT);
    }
    writer.text
}

/// Whether a report of `progress` (of `total`) moves a call on from the `last` one passed on,
/// which it then becomes: both finite, and `progress` more than the last.
pub(crate) fn moves_on(last: &Mutex<Option<f64>>, progress: f64, total: Option<f64>) -> bool {
    if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
        return false;
    }
    let mut last = last.lock().unwrap_or_else(PoisonError::into_inner);
    if last.is_some_and(|last| progress <= last) {
        return false;
    }
    *last = Some(progress);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_cut_on_a_char_boundary() {
        assert_eq!(bounded(&"short"), "short");
        let long = "é".repeat(MAX_UPDATE_LEN);
        let cut = bounded(&long);
        assert!(cut.len() <= MAX_UPDATE_LEN, "{}", cut.len());
        assert!(cut.ends_with("é… (cut)"), "{cut}");
        // Formatting stops at the limit: a message that would be endless is not.
        struct Endless;
        impl fmt::Display for Endless {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                loop {
                    f.write_str("again ")?;
                }
            }
        }
        assert!(bounded(&Endless).ends_with("… (cut)"));
    }

    #[test]
    fn nobody_watching_means_no_observer() {
        assert!(Observer::new(&Span::none(), Forward::default()).is_none());
    }

    #[tokio::test]
    async fn progress_only_increases_and_reaches_the_consumer_in_order() {
        let forward = Forward {
            progress: true,
            logs: Some(LogLevel::Warning),
        };
        let (observer, updates) = Observer::new(&Span::none(), forward).unwrap();
        struct Collect(Vec<ToolUpdate>);
        impl Deliver for Collect {
            async fn deliver(&mut self, update: ToolUpdate) {
                self.0.push(update);
            }
        }
        let mut seen = Collect(Vec::new());
        let output = drive(
            async move {
                observer.progress(1.0, Some(3.0), Some("one"));
                observer.progress(1.0, None, Some("not more than the last"));
                observer.progress(f64::NAN, None, None);
                observer.log(LogLevel::Info, &"below the level");
                observer.log(LogLevel::Error, &format_args!("{} failed", "step 2"));
                observer.progress(2.0, Some(f64::INFINITY), None);
                observer.progress(3.0, None, None);
                "done"
            },
            updates,
            &mut seen,
        )
        .await;
        assert_eq!(output, "done");
        assert_eq!(
            seen.0,
            vec![
                ToolUpdate::Progress {
                    progress: 1.0,
                    total: Some(3.0),
                    message: Some("one".into())
                },
                ToolUpdate::Log {
                    level: LogLevel::Error,
                    message: "step 2 failed".into()
                },
                ToolUpdate::Progress {
                    progress: 3.0,
                    total: None,
                    message: None
                },
            ]
        );
    }

    #[tokio::test]
    async fn a_full_queue_drops_reports_and_keeps_the_call_going() {
        let forward = Forward {
            progress: true,
            logs: None,
        };
        let (observer, updates) = Observer::new(&Span::none(), forward).unwrap();
        struct Count(usize);
        impl Deliver for Count {
            async fn deliver(&mut self, _: ToolUpdate) {
                self.0 += 1;
            }
        }
        let mut count = Count(0);
        drive(
            async move {
                // A sync tool reports everything before it is ever polled again.
                for i in 0..1000 {
                    observer.progress(f64::from(i), None, None);
                }
            },
            updates,
            &mut count,
        )
        .await;
        assert_eq!(count.0, QUEUE_LEN);
    }
}
