//! Watching a call for the client: the observer the tool's context reports to, and passing a
//! running call's progress and log lines on to the client that asked for them.

use std::future::Future;
use std::sync::Arc;

#[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
use rmcp::model::{
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken, RequestMetaObject,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;

use super::session::{self, Session, mcp_level};
use crate::tool::{Deliver, Forward, Observer, ToolUpdate, Updates, drive};

/// The observer of a call whose request carries `meta`, and its watch when the client will be
/// sent its reports. Progress goes to a client that sent a token for it, log lines to one that
/// asked for them, both to the span when it is enabled; a call nobody watches has no observer.
#[inline(always)]
pub(super) fn watch<'a>(
    session: &Session,
    span: &tracing::Span,
    meta: &RequestMetaObject,
    peer: &Peer<RoleServer>,
    tool: &'a str,
) -> (Option<Arc<Observer>>, Option<Watch<'a>>) {
    let progress_token = session::progress_token(meta);
    let forward = Forward {
        progress: progress_token.is_some(),
        logs: session.log_level(meta),
    };
    let (observer, updates) = Observer::new(span, forward).unzip();
    let watch = updates.flatten().map(|updates| Watch {
        updates,
        notify: Notify {
            peer: peer.clone(),
            progress_token,
            tool,
        },
    });
    (observer, watch)
}

/// A call's reports, and where they go.
pub(super) struct Watch<'a> {
    updates: Updates,
    notify: Notify<'a>,
}

impl Watch<'_> {
    /// Runs `running` to its end, passing its reports on to the client meanwhile.
    pub(super) async fn drive<F: Future>(mut self, running: F) -> F::Output {
        drive(running, Some(self.updates), &mut self.notify).await
    }
}

/// Passes a running call's reports on to the client: progress as `notifications/progress`
/// (with the request's token), log lines as `notifications/message` (the tool's name as the
/// logger). A client that went away misses them.
struct Notify<'a> {
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    tool: &'a str,
}

impl Deliver for Notify<'_> {
    #[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
    async fn deliver(&mut self, update: ToolUpdate) {
        match update {
            ToolUpdate::Progress {
                progress,
                total,
                message,
            } => {
                // Queued only when there is a token.
                let Some(token) = &self.progress_token else {
                    return;
                };
                let mut params = ProgressNotificationParam::new(token.clone(), progress);
                params.total = total;
                params.message = message;
                let _ = self.peer.notify_progress(params).await;
            }
            ToolUpdate::Log { level, message } => {
                let params =
                    LoggingMessageNotificationParam::new(mcp_level(level), Value::String(message))
                        .with_logger(self.tool);
                let _ = self.peer.notify_logging_message(params).await;
            }
        }
    }
}
