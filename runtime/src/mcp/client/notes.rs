//! What a server says about running calls besides their results, passed on to the caller:
//! `notifications/progress` to the call whose progress token it carries, `notifications/message`
//! to every call of the client running when it arrives (MCP ties a log line to no request).
//!
//! Both go through the call's [`ToolContext`], as a local tool's own reports do: to
//! [`AgentEvent::ToolProgress`](crate::AgentEvent::ToolProgress) and
//! [`AgentEvent::ToolLog`](crate::AgentEvent::ToolLog), to the `execute_tool` span, or on to the
//! client of an [`McpServer`](crate::mcp::McpServer) that serves the tool; bounded and cut as
//! those are, and never to the model.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ClientHandler;
#[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
use rmcp::model::{
    ClientConfig, LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam,
    ProgressToken, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, Peer, RoleClient};
use serde_json::Value;
use tokio::sync::Notify;

use crate::tool::{LogLevel, ToolContext, moves_on};

/// How many progress reports for a token no call has claimed yet are kept: a report can
/// arrive between sending a call and registering its token.
const EARLY_REPORTS: usize = 16;

/// The client's handler: what the client says about itself, and where the server's reports go.
pub(super) struct Listener {
    info: ClientConfig,
    routes: Arc<Routes>,
}

impl Listener {
    pub(super) fn new(info: ClientConfig, routes: Arc<Routes>) -> Self {
        Self { info, routes }
    }
}

/// The calls of one client that are running, by their progress token.
#[derive(Default)]
pub(super) struct Routes {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    calls: HashMap<ProgressToken, Arc<Watched>>,
    /// Reports for tokens no call has claimed, oldest first.
    early: VecDeque<ProgressNotificationParam>,
}

/// One running call, as the listener reaches it.
struct Watched {
    cx: ToolContext,
    /// Told of each report that moves the call's progress on.
    heard: Notify,
    /// The last progress that moved it on.
    last: Mutex<Option<f64>>,
}

impl Watched {
    fn progress(&self, report: &ProgressNotificationParam) {
        if !moves_on(&self.last, report.progress, report.total) {
            return;
        }
        self.cx
            .progress(report.progress, report.total, report.message.as_deref());
        self.heard.notify_one();
    }
}

/// A call's place in [`Routes`], removed when it is dropped.
pub(super) struct Watch {
    routes: Arc<Routes>,
    token: ProgressToken,
    watched: Arc<Watched>,
}

impl Watch {
    /// Resolves when the server reported progress that moved the call on, since the last time
    /// it resolved.
    pub(super) async fn heard(&self) {
        self.watched.heard.notified().await;
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let removed = self.routes.lock().calls.remove(&self.token);
        drop(removed);
    }
}

impl Routes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Routes the reports for `token` to the call whose context is `cx`, until the returned
    /// watch is dropped; reports that came before are passed on now.
    pub(super) fn watch(self: &Arc<Self>, token: ProgressToken, cx: &ToolContext) -> Watch {
        let watched = Arc::new(Watched {
            cx: cx.clone(),
            heard: Notify::new(),
            last: Mutex::new(None),
        });
        let early: VecDeque<ProgressNotificationParam> = {
            let mut inner = self.lock();
            inner.calls.insert(token.clone(), Arc::clone(&watched));
            let (mine, others) = std::mem::take(&mut inner.early)
                .into_iter()
                .partition(|report| report.progress_token == token);
            inner.early = others;
            mine
        };
        for report in &early {
            watched.progress(report);
        }
        Watch {
            routes: Arc::clone(self),
            token,
            watched,
        }
    }

    fn progress(&self, report: ProgressNotificationParam) {
        let watched = {
            let mut inner = self.lock();
            match inner.calls.get(&report.progress_token) {
                Some(watched) => Arc::clone(watched),
                None => {
                    if inner.early.len() == EARLY_REPORTS {
                        inner.early.pop_front();
                    }
                    inner.early.push_back(report);
                    return;
                }
            }
        };
        watched.progress(&report);
    }

    #[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
    fn log(&self, line: &LoggingMessageNotificationParam) {
        let running: Vec<Arc<Watched>> = self.lock().calls.values().cloned().collect();
        if running.is_empty() {
            tracing::debug!(
                level = ?line.level,
                "a log line from the MCP server while no call ran; not passed on"
            );
            return;
        }
        let level = level(line.level);
        let text = LogLine {
            logger: line.logger.as_deref(),
            data: &line.data,
        };
        for watched in running {
            watched.cx.log(level, &text);
        }
    }
}

/// MCP's eight levels as reticent's four: `notice` is `Info`, and everything above `error`
/// is `Error`.
#[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
fn level(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info | LoggingLevel::Notice => LogLevel::Info,
        LoggingLevel::Warning => LogLevel::Warning,
        _ => LogLevel::Error,
    }
}

/// Asks the server to send log lines at `level` and above, when it says it has logging. A
/// refusal is logged: the connection is no less usable.
#[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
pub(super) async fn ask_for_logs(peer: &Peer<RoleClient>, level: LogLevel) {
    let logging = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.logging.is_some());
    if !logging {
        return;
    }
    let level = match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warning => LoggingLevel::Warning,
        _ => LoggingLevel::Error,
    };
    if let Err(error) = peer.set_level(SetLevelRequestParams::new(level)).await {
        tracing::warn!(%error, "the MCP server refused the log level it was asked for");
    }
}

/// A log line as text: `LOGGER: DATA`, the data as it is when it is a string, as JSON
/// otherwise. Written only as far as the reader's bound.
struct LogLine<'a> {
    logger: Option<&'a str>,
    data: &'a Value,
}

impl fmt::Display for LogLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(logger) = self.logger {
            write!(f, "{logger}: ")?;
        }
        match self.data {
            Value::String(text) => f.write_str(text),
            other => write!(f, "{other}"),
        }
    }
}

#[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.routes.progress(params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.routes.log(&params);
    }
}
