//! Passing a running call's progress and log lines on to the client that asked for them.

#[allow(deprecated)] // MCP logging, deprecated by the 2026-07-28 protocol, still in use
use rmcp::model::{LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;

use super::session::mcp_level;
use crate::tool::{Deliver, ToolUpdate};

/// Passes a running call's reports on to the client: progress as `notifications/progress`
/// (with the request's token), log lines as `notifications/message` (the tool's name as the
/// logger). A client that went away misses them.
pub(super) struct Notify<'a> {
    pub(super) peer: Peer<RoleServer>,
    pub(super) progress_token: Option<ProgressToken>,
    pub(super) tool: &'a str,
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
