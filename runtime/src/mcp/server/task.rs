//! Long-running tools as MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663, as
//! rmcp serves it). A call of a `#[tool(task)]` tool from a client that declared the extension
//! is answered at once with a task; the call runs on through [`CallTool`], as any other call
//! (the same entry point, the same disclosure rules, the same hooks and span), and its answer
//! — exactly the result `tools/call` would have sent — is kept for the client's `tasks/get`.
//! `tasks/cancel` stops it as a `notifications/cancelled` stops a call.
//!
//! Tasks are kept in memory, each for its time to live from its creation (a call still running
//! then is stopped), and at most [`McpServerBuilder::max_tasks`](super::McpServerBuilder::max_tasks)
//! of them: a new one pushes out the oldest that has finished, and is refused when none has.
//! Or, for a server built with `durable_tasks`, as Restate workflows (`durable.rs`): [`Store`]
//! is where they are kept.

use std::collections::{HashMap, VecDeque};
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, CreateTaskResult, DetailedTask, ErrorCode, ErrorData,
    GetTaskResult, JsonObject, Task, TaskPayload, TaskStatus,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::current_timestamp;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::McpServer;
use super::call::CallTool;
use super::result::unknown_task;

/// How long a task is kept, from its creation, unless the builder says otherwise.
pub(super) const DEFAULT_TTL: Duration = Duration::from_secs(60 * 60);

/// How many tasks are kept at most, unless the builder says otherwise.
pub(super) const DEFAULT_MAX: usize = 1024;

/// How often a client is asked to poll a task.
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The tasks of one server, shared by all its connections: a client may follow a task on
/// another connection than the one that made it.
pub(crate) struct Tasks {
    kept: Mutex<Kept>,
    ttl: Duration,
    max: usize,
}

/// The tasks, by id, and their ids in the order they were made.
#[derive(Default)]
struct Kept {
    by_id: HashMap<String, Entry>,
    order: VecDeque<String>,
}

struct Entry {
    task: Task,
    state: State,
}

enum State {
    /// The call runs; cancelling the token stops it.
    Working(CancellationToken),
    /// The call ended: its answer.
    Done(TaskPayload),
}

impl Tasks {
    pub(super) fn new(ttl: Duration, max: usize) -> Self {
        Self {
            kept: Mutex::new(Kept::default()),
            ttl,
            max: max.max(1),
        }
    }

    /// The time to live, as tasks say it.
    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)
    }

    fn lock(&self) -> MutexGuard<'_, Kept> {
        // A panic while the lock was held left the map as it was between two statements: the
        // entries are still whole.
        self.kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps `entry`, pushing out the oldest finished task when the server holds its maximum;
    /// `false` when every task it holds is still running.
    fn insert(&self, id: String, entry: Entry) -> bool {
        let mut kept = self.lock();
        if kept.by_id.len() >= self.max {
            let Kept { by_id, order } = &mut *kept;
            let finished = order.iter().position(
                |id| matches!(by_id.get(id), Some(e) if matches!(e.state, State::Done(_))),
            );
            let Some(position) = finished else {
                return false;
            };
            if let Some(old) = order.remove(position) {
                by_id.remove(&old);
            }
        }
        kept.order.push_back(id.clone());
        kept.by_id.insert(id, entry);
        true
    }

    /// Records the answer of the task `id`, if it is still kept.
    fn settle(&self, id: &str, payload: TaskPayload) {
        let mut kept = self.lock();
        if let Some(entry) = kept.by_id.get_mut(id) {
            entry.task.status = payload.status();
            entry.task.last_updated_at = current_timestamp();
            entry.state = State::Done(payload);
        }
    }

    /// Forgets the task `id`, whose time is up.
    fn remove(&self, id: &str) {
        let mut kept = self.lock();
        if kept.by_id.remove(id).is_some() {
            kept.order.retain(|kept| kept != id);
        }
    }

    /// `tasks/get`: the task's state, with the call's answer once it has one.
    pub(super) fn get(&self, id: &str) -> Result<GetTaskResult, ErrorData> {
        let kept = self.lock();
        let entry = kept.by_id.get(id).ok_or_else(unknown_task)?;
        let payload = match &entry.state {
            State::Working(_) => TaskPayload::Working,
            State::Done(payload) => payload.clone(),
        };
        Ok(GetTaskResult::new(DetailedTask::new(
            entry.task.clone(),
            payload,
        )))
    }

    /// `tasks/cancel`: stops the call, which then ends as `cancelled` (a task that has already
    /// ended keeps its answer).
    pub(super) fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        let kept = self.lock();
        match &kept.by_id.get(id).ok_or_else(unknown_task)?.state {
            State::Working(token) => token.cancel(),
            State::Done(_) => {}
        }
        Ok(())
    }

    /// `tasks/update`.
    pub(super) fn update(&self, id: &str) -> Result<(), ErrorData> {
        self.lock()
            .by_id
            .get(id)
            .map(|_| ())
            .ok_or_else(unknown_task)
    }
}

/// Where a server keeps its tasks.
pub(crate) enum Store {
    /// In memory, for their time to live.
    Memory(Arc<Tasks>),
    /// As Restate workflows.
    #[cfg(all(feature = "restate", feature = "mcp-client"))]
    Durable(super::durable::DurableTasks),
}

impl Store {
    /// `tasks/get`, from a client of the 2026-07-28 protocol or later (`modern`) or an older
    /// one (only a durable store's answer depends on it).
    #[cfg_attr(
        not(all(feature = "restate", feature = "mcp-client")),
        allow(unused_variables)
    )]
    pub(super) async fn get(&self, id: &str, modern: bool) -> Result<GetTaskResult, ErrorData> {
        match self {
            Self::Memory(tasks) => tasks.get(id),
            #[cfg(all(feature = "restate", feature = "mcp-client"))]
            Self::Durable(tasks) => tasks.get(id, modern).await,
        }
    }

    /// `tasks/cancel`.
    pub(super) async fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        match self {
            Self::Memory(tasks) => tasks.cancel(id),
            #[cfg(all(feature = "restate", feature = "mcp-client"))]
            Self::Durable(tasks) => tasks.cancel(id).await,
        }
    }

    /// `tasks/update`: these tasks never ask the client for input, so there is nothing to
    /// answer; a task that is not kept is still an error.
    pub(super) async fn update(&self, id: &str) -> Result<(), ErrorData> {
        match self {
            Self::Memory(tasks) => tasks.update(id),
            #[cfg(all(feature = "restate", feature = "mcp-client"))]
            Self::Durable(tasks) => tasks.get(id, true).await.map(drop),
        }
    }
}

/// The tasks of `server`: rmcp sends `tasks/*` requests on only when the server declared the
/// extension, which it does when it has tasks.
pub(super) fn of(server: &McpServer) -> Result<&Store, ErrorData> {
    server.inner.tasks.as_ref().ok_or_else(|| {
        ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            "this server has no tasks",
            None,
        )
    })
}

/// Starts the call of `request` as a task of `store`, and answers with the task.
pub(super) async fn start(
    server: &McpServer,
    store: &Store,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CreateTaskResult, ErrorData> {
    match store {
        Store::Memory(tasks) => create(server, tasks, request, context),
        #[cfg(all(feature = "restate", feature = "mcp-client"))]
        Store::Durable(tasks) => tasks.create(request).await,
    }
}

/// Whether the call of `request` is answered with a task: its tool is a task tool, and the
/// client declared the tasks extension.
pub(super) fn wanted(
    server: &McpServer,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> bool {
    server
        .inner
        .tools
        .find(&request.name)
        .is_some_and(|(_, _, tool)| tool.definition().task)
        && context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks())
}

/// Starts the call of `request` as a task of `tasks`, and answers with the task. Refused when
/// the server holds its maximum of tasks and none has finished.
fn create(
    server: &McpServer,
    tasks: &Arc<Tasks>,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CreateTaskResult, ErrorData> {
    let id = uuid::Uuid::new_v4().to_string();
    let now = current_timestamp();
    let task = Task::new(id.clone(), TaskStatus::Working, now.clone(), now)
        .with_ttl_ms(tasks.ttl_ms())
        .with_poll_interval_ms(u64::try_from(POLL_INTERVAL.as_millis()).unwrap_or(u64::MAX));
    let token = CancellationToken::new();
    let entry = Entry {
        task: task.clone(),
        state: State::Working(token.clone()),
    };
    if !tasks.insert(id.clone(), entry) {
        return Err(ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            format!(
                "the server already runs its maximum of {} tasks; try again later",
                tasks.max
            ),
            None,
        ));
    }

    // The call outlives the request and its connection: it ends by itself, by `tasks/cancel`,
    // or when the task's time is up. The connection's log level still applies.
    let server = McpServer::with_session(&server.inner, server.session.for_task());
    // A result is sent as rmcp sends `tools/call`'s: without `resultType` to a client of a
    // protocol before 2026-07-28.
    let modern = super::session::modern(&context);
    let mut context = context;
    context.ct = token.clone();
    let arguments = Value::Object(request.arguments.unwrap_or_default());
    let tasks = Arc::clone(tasks);
    let ttl = tasks.ttl;
    tokio::spawn(async move {
        let expiry = tokio::time::sleep(ttl);
        let mut expiry = pin!(expiry);
        let call = CallTool::<CallToolResult>::new(&server, request.name, arguments, context);
        let mut call = pin!(call);
        let answered = tokio::select! {
            answered = &mut call => Some(answered),
            () = &mut expiry => None,
        };
        match answered {
            Some(answered) => {
                tasks.settle(&id, payload(answered, &token, modern));
                expiry.await;
            }
            // Stopped as a cancelled call is: the tool's token first.
            None => {
                token.cancel();
                let _ = call.await;
            }
        }
        tasks.remove(&id);
    });
    Ok(CreateTaskResult::new(task))
}

/// The task's answer for a call that ended with `answered`: the result the client would have
/// been sent for `tools/call` (a failure is a result with `isError`, written by the same
/// rules), `cancelled` for a call `token` stopped, or the protocol error.
fn payload(
    answered: Result<CallToolResult, ErrorData>,
    token: &CancellationToken,
    modern: bool,
) -> TaskPayload {
    match answered {
        Ok(mut result) => TaskPayload::Completed {
            result: {
                if !modern {
                    result.result_type = None;
                }
                object(serde_json::to_value(result))
            },
        },
        Err(_) if token.is_cancelled() => TaskPayload::Cancelled,
        Err(error) => TaskPayload::Failed {
            error: object(serde_json::to_value(error)),
        },
    }
}

fn object(value: Result<Value, serde_json::Error>) -> JsonObject {
    match value {
        Ok(Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(done: bool) -> Entry {
        let now = current_timestamp();
        Entry {
            task: Task::new("t", TaskStatus::Working, now.clone(), now),
            state: if done {
                State::Done(TaskPayload::Cancelled)
            } else {
                State::Working(CancellationToken::new())
            },
        }
    }

    #[test]
    fn a_full_store_pushes_out_the_oldest_finished_task() {
        let tasks = Tasks::new(DEFAULT_TTL, 2);
        assert!(tasks.insert("a".into(), entry(false)));
        assert!(tasks.insert("b".into(), entry(true)));
        // Full: `b` has finished, `a` runs.
        assert!(tasks.insert("c".into(), entry(false)));
        assert!(tasks.get("b").is_err());
        assert!(tasks.get("a").is_ok());
        // Full, and every task runs: refused.
        assert!(!tasks.insert("d".into(), entry(false)));
        tasks.settle("a", TaskPayload::Cancelled);
        assert!(tasks.insert("d".into(), entry(false)));
        assert!(tasks.get("a").is_err());
        assert_eq!(tasks.lock().order, ["c", "d"]);
    }

    #[test]
    fn cancel_stops_a_running_task_only() {
        let tasks = Tasks::new(DEFAULT_TTL, 4);
        let token = CancellationToken::new();
        let now = current_timestamp();
        let running = Entry {
            task: Task::new("r", TaskStatus::Working, now.clone(), now),
            state: State::Working(token.clone()),
        };
        assert!(tasks.insert("r".into(), running));
        tasks.cancel("r").unwrap();
        assert!(token.is_cancelled());
        assert!(tasks.cancel("nope").is_err());
        assert!(tasks.update("r").is_ok());
        tasks.remove("r");
        assert!(tasks.update("r").is_err());
    }
}
