//! [`McpServer`]: tools served over MCP, with the same disclosure rules as the agent loop.
//!
//! | file | holds |
//! |---|---|
//! | `builder.rs` | [`McpServerBuilder`], [`BuildError`] |
//! | `handler.rs` | the `rmcp::ServerHandler`: `initialize`, `tools/list`, `tools/call`, logging |
//! | `call.rs` | one `tools/call`, run through the same entry point as the agent loop's calls |
//! | `ask.rs` | a tool asks the client: [`ToolContext::elicit`](crate::ToolContext::elicit), [`ToolContext::sample`](crate::ToolContext::sample) |
//! | `approval.rs` | a call a person must approve first, asked of the client's user; [`ApprovalRefused`] |
//! | `notify.rs` | watching a call: its progress and log lines passed on to the client |
//! | `result.rs` | the result a client is sent for a call that succeeded |
//! | `definition.rs` | a tool as `tools/list` describes it; the shape of its `structuredContent` |
//! | `session.rs` | what one connection keeps: the log level its client set, whether it is over |
//! | `polling.rs` | SSE polling over streamable HTTP: request streams closed and resumed; [`HttpSessions`] |
//! | `task.rs` | calls of `#[tool(task)]` tools answered with a task: `tasks/get`, `tasks/cancel` |
//! | `durable.rs` | those tasks as Restate workflows (`restate` and `mcp-client`): `TaskWorkflow` |
//! | `transport.rs` | serving: stdio, streamable HTTP, any rmcp transport; [`ServeError`] |

mod approval;
mod ask;
mod builder;
mod call;
mod definition;
#[cfg(all(feature = "restate", feature = "mcp-client"))]
mod durable;
mod handler;
mod notify;
mod polling;
mod result;
mod session;
mod task;
mod transport;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use approval::{ApprovalRefused, RefusalReason};
pub use ask::{AskError, Elicited};
pub use builder::McpServerBuilder;
#[cfg(all(feature = "restate", feature = "mcp-client"))]
pub use durable::TaskWorkflow;
pub use polling::HttpSessions;
pub use transport::ServeError;

use self::session::Session;
use crate::error::ToolFailure;
use crate::tool::ToolSet;

/// An MCP server for a set of tools. Cheap to clone; one server serves any number of
/// connections. Start with [`McpServer::builder`].
///
/// `McpServer` implements [`rmcp::ServerHandler`], so it also works with anything in rmcp that
/// takes a handler. A clone shares the tools and settings but not the connection's state (the
/// log level its client set): serve each connection with a clone of its own, as
/// [`serve`](Self::serve) and [`http_service`](Self::http_service) do.
pub struct McpServer {
    pub(crate) inner: Arc<Inner>,
    /// The state of the connection this value serves.
    pub(crate) session: Arc<Session>,
}

impl Clone for McpServer {
    /// The same server, for another connection.
    fn clone(&self) -> Self {
        Self::with_session(&self.inner, Session::default())
    }
}

/// A hook that receives every failed call.
pub(crate) type FailureHook = Arc<dyn Fn(&ToolFailure) + Send + Sync>;

pub(crate) struct Inner {
    pub(crate) tools: ToolSet,
    /// The tools as `tools/list` describes them, built once, in the tool set's order.
    pub(crate) listed: Vec<rmcp::model::Tool>,
    /// The `structuredContent` of each tool's results, in the tool set's order.
    pub(crate) outputs: Vec<Option<definition::Output>>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) include_error_message: bool,
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    pub(crate) on_failure: Vec<FailureHook>,
    /// How long the client's user is given to approve a call; `None`: nobody is asked.
    pub(crate) approval_wait: Option<Duration>,
    /// Whether a call that needs approval runs unasked when the client cannot ask its user.
    pub(crate) trust_client_approval: bool,
    /// The output budget of a tool that sets none, when results are cut at all.
    pub(crate) max_output: Option<usize>,
    /// The tasks of `#[tool(task)]` tools; `None` when no tool served is one.
    pub(crate) tasks: Option<task::Store>,
    /// How request streams over streamable HTTP are closed and resumed; `None`: never closed.
    pub(crate) polling: Option<polling::Polling>,
}

impl McpServer {
    /// Starts building a server.
    pub fn builder() -> McpServerBuilder {
        McpServerBuilder::new()
    }

    /// The server for a connection with this state.
    pub(crate) fn with_session(inner: &Arc<Inner>, session: Session) -> Self {
        Self {
            inner: Arc::clone(inner),
            session: Arc::new(session),
        }
    }

    /// The names of the tools served, in the order they were added.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.inner.tools.names()
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        f.debug_struct("McpServer")
            .field("name", &inner.name)
            .field("version", &inner.version)
            .field("tools", &self.tool_names().collect::<Vec<_>>())
            .field("timeout", &inner.timeout)
            .field("include_error_message", &inner.include_error_message)
            .field("on_failure", &inner.on_failure.len())
            .field("approval_wait", &inner.approval_wait)
            .field("trust_client_approval", &inner.trust_client_approval)
            .field("polling", &inner.polling)
            .finish_non_exhaustive()
    }
}
