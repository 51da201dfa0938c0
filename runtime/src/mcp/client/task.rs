//! Following a call the server answered with a task (MCP's tasks extension, SEP-2663, which the
//! client declares): `tasks/get` at the interval the server asks for, until the task ends with
//! the call's result, under the call's limits. A call abandoned first — cancelled, out of time,
//! its future dropped — sends `tasks/cancel`.

use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{CallToolResult, CancelTaskParams, GetTaskParams, Task, TaskPayload};
use rmcp::service::{Peer, RoleClient};
use tokio::time::Instant;

use super::notes::Watch;

/// The shortest and longest waits between two `tasks/get`, whatever the server asks.
const POLL_BOUNDS: (Duration, Duration) = (Duration::from_millis(50), Duration::from_secs(5));

/// The wait between two `tasks/get` when the server suggests none.
const POLL_DEFAULT: Duration = Duration::from_millis(500);

/// How long a `tasks/cancel` sent for an abandoned call may take.
const CANCEL_WITHIN: Duration = Duration::from_secs(5);

/// How a task the client followed ended.
pub(super) enum Followed {
    /// With the call's result (which may be a tool error, `isError`).
    Result(CallToolResult),
    /// With a JSON-RPC error, or without an answer: cancelled on the server's side, or no
    /// longer known to it. The effect is unknown.
    Lost(Lost),
    /// A request failed (the connection, an answer that cannot be read).
    Service(ServiceError),
    /// Neither progress nor any change of the task for the client's idle timeout.
    Silent(Duration),
}

/// Why a task ended without the call's result.
#[derive(Debug)]
pub(super) enum Lost {
    /// The server says the task failed, with this JSON-RPC error.
    Failed(rmcp::model::ErrorData),
    /// The server cancelled the task.
    Cancelled,
    /// The server no longer knows the task (its time to live was over), with its error.
    Unknown(ServiceError),
    /// The task's answer is not a tool result.
    Unreadable,
}

/// Sends `tasks/cancel` for a task nobody follows any more, when dropped before it ended.
struct Abandoned<'a> {
    peer: &'a Peer<RoleClient>,
    task_id: Option<String>,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        let Some(task_id) = self.task_id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let cancel = peer.cancel_task(CancelTaskParams::new(task_id));
            let _ = tokio::time::timeout(CANCEL_WITHIN, cancel).await;
        });
    }
}

/// Follows `task` to its end: its progress and log lines reach the caller through `watch`
/// meanwhile, and with `idle`, a task that shows neither progress nor any change for that long
/// ends the wait. The call's own time limit is the caller's to apply: dropping this future then
/// cancels the task.
pub(super) async fn follow(
    peer: &Peer<RoleClient>,
    task: Task,
    watch: &Watch,
    idle: Option<Duration>,
) -> Followed {
    let mut abandoned = Abandoned {
        peer,
        task_id: Some(task.task_id.clone()),
    };
    let mut interval = poll_interval(&task);
    let mut updated = task.last_updated_at.clone();
    let mut heard_at = Instant::now();
    let id = task.task_id;
    let followed = loop {
        let next = Instant::now() + interval;
        // Progress moves the call on while it waits for the next poll.
        loop {
            tokio::select! {
                biased;
                () = tokio::time::sleep_until(next) => break,
                () = watch.heard() => heard_at = Instant::now(),
            }
        }
        let detailed = match peer.get_task(GetTaskParams::new(id.clone())).await {
            Ok(got) => got.task,
            Err(ServiceError::McpError(error)) => {
                break Followed::Lost(Lost::Unknown(ServiceError::McpError(error)));
            }
            Err(error) => break Followed::Service(error),
        };
        if detailed.task.last_updated_at != updated {
            updated.clone_from(&detailed.task.last_updated_at);
            heard_at = Instant::now();
        }
        interval = poll_interval(&detailed.task);
        match detailed.payload {
            TaskPayload::Completed { result } => {
                break match serde_json::from_value(serde_json::Value::Object(result)) {
                    Ok(result) => Followed::Result(result),
                    Err(_) => Followed::Lost(Lost::Unreadable),
                };
            }
            TaskPayload::Failed { error } => {
                break match serde_json::from_value(serde_json::Value::Object(error)) {
                    Ok(error) => Followed::Lost(Lost::Failed(error)),
                    Err(_) => Followed::Lost(Lost::Unreadable),
                };
            }
            TaskPayload::Cancelled => break Followed::Lost(Lost::Cancelled),
            // Still running, or waiting for input this client does not give (it declares no
            // capability a server could ask for in a task).
            _ => {}
        }
        if let Some(idle) = idle
            && heard_at.elapsed() >= idle
        {
            return Followed::Silent(idle);
        }
    };
    // The task ended: nothing to cancel.
    abandoned.task_id = None;
    followed
}

/// The wait before the next `tasks/get`: what the server suggests, within bounds.
fn poll_interval(task: &Task) -> Duration {
    task.poll_interval_ms
        .map_or(POLL_DEFAULT, Duration::from_millis)
        .clamp(POLL_BOUNDS.0, POLL_BOUNDS.1)
}
