//! What one connection keeps: the log level its client set, and whether it is over — its input
//! closed, or the server is shutting down — so that calls still running are stopped at once
//! rather than waited for.
#![allow(deprecated)] // MCP logging is deprecated by the 2026-07-28 protocol (SEP-2577), still in use.

use std::borrow::Cow;
use std::future::Future;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::{LoggingLevel, ProgressToken, ProtocolVersion, RequestMetaObject};
use rmcp::service::{RequestContext, RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio_util::sync::CancellationToken;

use crate::tool::LogLevel;

/// One connection's state.
#[derive(Debug, Default)]
pub(crate) struct Session {
    /// The level set with `logging/setLevel`, as [`rank`] + 1; 0 until the client sets one.
    log_level: AtomicU8,
    /// Cancelled when the connection's input closes or the server shuts down.
    pub(crate) closed: CancellationToken,
}

impl Session {
    /// A session that ends when `shutdown` is cancelled (or its own input closes).
    pub(crate) fn ending_with(shutdown: &CancellationToken) -> Self {
        Self {
            log_level: AtomicU8::new(0),
            closed: shutdown.child_token(),
        }
    }

    /// The state a task's call keeps: this connection's log level, and a token of its own,
    /// for the call outlives the connection.
    pub(crate) fn for_task(&self) -> Self {
        Self {
            log_level: AtomicU8::new(self.log_level.load(Ordering::Relaxed)),
            closed: CancellationToken::new(),
        }
    }

    /// Records the level the client set with `logging/setLevel`.
    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        self.log_level.store(rank(level) + 1, Ordering::Relaxed);
    }

    /// The lowest level of a tool's log lines the client of a request with `meta` is sent:
    /// the level in the request's own `_meta` (`io.modelcontextprotocol/logLevel`, the
    /// 2026-07-28 way), else the one it set for the session (`logging/setLevel`). `None` — no
    /// lines — when it asked for neither: a client opts in to log lines.
    #[inline]
    pub(crate) fn log_level(&self, meta: &RequestMetaObject) -> Option<LogLevel> {
        let rank = match unless_empty(meta, RequestMetaObject::log_level) {
            Some(level) => rank(level),
            None => self.log_level.load(Ordering::Relaxed).checked_sub(1)?,
        };
        // A tool's levels are MCP's debug, info, warning and error.
        match rank {
            0 => Some(LogLevel::Debug),
            1 => Some(LogLevel::Info),
            2 | 3 => Some(LogLevel::Warning),
            4 => Some(LogLevel::Error),
            _ => None,
        }
    }
}

/// The progress token of a request with `meta`, if the client sent one: it is then sent the
/// tool's progress.
#[inline]
pub(crate) fn progress_token(meta: &RequestMetaObject) -> Option<ProgressToken> {
    unless_empty(meta, RequestMetaObject::get_progress_token)
}

/// What `read` finds in `meta`, which is not searched when empty: most requests carry no
/// `_meta`, and a lookup hashes the key.
#[inline]
fn unless_empty<T>(
    meta: &RequestMetaObject,
    read: impl FnOnce(&RequestMetaObject) -> Option<T>,
) -> Option<T> {
    if meta.0.0.is_empty() {
        None
    } else {
        read(meta)
    }
}

/// An MCP level's place, from `debug` (0) to `emergency` (7).
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The MCP level of a tool's log line.
pub(crate) fn mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
    }
}

/// A transport that cancels `closed` when its input ends.
///
/// rmcp waits up to five seconds for the requests still being handled when the input closes
/// before it stops them, longer than clients wait for a server to exit (the Python SDK kills it
/// after two). A client that closes its end has left: its calls are stopped at once.
pub(crate) struct Watched<T> {
    pub(crate) inner: T,
    pub(crate) closed: CancellationToken,
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Watched<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let message = self.inner.receive().await;
        if message.is_none() {
            self.closed.cancel();
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Whether the client of a request speaks the 2026-07-28 protocol or later: its results carry
/// `resultType`, and the server may not send it requests of its own.
pub(super) fn modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_opts_in_to_log_lines() {
        let session = Session::default();
        let none = RequestMetaObject::default();
        assert_eq!(session.log_level(&none), None);

        session.set_log_level(LoggingLevel::Notice);
        assert_eq!(session.log_level(&none), Some(LogLevel::Warning));
        session.set_log_level(LoggingLevel::Critical);
        assert_eq!(session.log_level(&none), None);

        // The request's own level wins.
        let mut meta = RequestMetaObject::default();
        meta.set_log_level(LoggingLevel::Debug);
        assert_eq!(session.log_level(&meta), Some(LogLevel::Debug));
    }

    #[test]
    fn a_session_ends_with_the_server() {
        let shutdown = CancellationToken::new();
        let session = Session::ending_with(&shutdown);
        shutdown.cancel();
        assert!(session.closed.is_cancelled());
    }
}
