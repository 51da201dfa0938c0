//! [`McpServerBuilder`]: the tools, the disclosure and time limits, who approves the calls of a
//! tool that needs a person's approval (the client's user, asked by the server, or the client
//! trusted to ask), the server's identity and the failure hooks.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::session::Session;
use super::{FailureHook, Inner, McpServer, definition, polling, task};
use crate::error::ToolFailure;
use crate::tool::{BuildError, Tool, ToolSet, Toolbox};

/// Builds an [`McpServer`]. Start with [`McpServer::builder`].
#[must_use = "call `.build()` to get a server"]
pub struct McpServerBuilder {
    tools: Vec<Arc<dyn Tool>>,
    timeout: Option<Duration>,
    include_error_message: bool,
    trust_client_approval: bool,
    approval_wait: Option<Duration>,
    name: String,
    version: String,
    instructions: Option<String>,
    on_failure: Vec<FailureHook>,
    max_output: Option<usize>,
    task_ttl: Duration,
    max_tasks: usize,
    polling: Option<polling::Polling>,
    /// Restate's ingress, for durable tasks.
    #[cfg(all(feature = "restate", feature = "mcp-client"))]
    durable_tasks: Option<String>,
}

impl McpServerBuilder {
    pub(crate) fn new() -> Self {
        Self {
            tools: Vec::new(),
            timeout: None,
            include_error_message: false,
            trust_client_approval: false,
            approval_wait: None,
            name: "reticent".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
            on_failure: Vec::new(),
            max_output: None,
            task_ttl: task::DEFAULT_TTL,
            max_tasks: task::DEFAULT_MAX,
            polling: None,
            #[cfg(all(feature = "restate", feature = "mcp-client"))]
            durable_tasks: None,
        }
    }

    /// Serves a tool, such as the struct `#[tool]` generates.
    pub fn tool(mut self, tool: impl Tool) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Serves a shared tool.
    pub fn tool_arc(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Serves every tool of a toolbox, such as a type with a `#[tools]` impl block.
    pub fn toolbox<T: Toolbox>(mut self, toolbox: Arc<T>) -> Self {
        self.tools.extend(toolbox.tools());
        self
    }

    /// Cuts each successful result's text to an output budget of `bytes`, as an agent cuts
    /// what its model is shown: the text's start and its end, with a notice between them of
    /// how much was left out. A tool's own budget (`#[tool(max_output = ..)]`) replaces
    /// `bytes` for that tool. Default: results are sent whole, since the client is the
    /// caller, and its own agent bounds what its model is shown.
    ///
    /// A result cut this way is sent without its `structuredContent` (a cut JSON value is
    /// not one): a client that requires structured content for a tool with an output schema
    /// refuses it. The `on_failure` hooks are not told: the call succeeded.
    pub fn max_output(mut self, bytes: usize) -> Self {
        self.max_output = Some(bytes);
        self
    }

    /// How long any one call may run; a tool's own `#[tool(timeout = ..)]` applies when it is
    /// shorter. Default: no limit beyond the tool's own.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Shows the client the failure's message after its kind
    /// (`Tool 'NAME' failed with Type: MESSAGE`). Off by default: messages carry connection
    /// strings, paths and data. Argument errors are always shown in full.
    pub fn include_error_message(mut self, include: bool) -> Self {
        self.include_error_message = include;
        self
    }

    /// Serves tools that need a person's approval before each call (`#[tool(needs_approval)]`,
    /// [`Tool::needs_approval`]), trusting the client to ask its user before it sends each
    /// call, as MCP asks of hosts. Off by default, and then [`build`](Self::build) refuses
    /// such a tool ([`BuildError::NeedsApproval`]) unless the server asks the client's user
    /// itself ([`elicit_approval`](Self::elicit_approval)): otherwise the server answers
    /// `tools/call` at once and has no one to ask, so serving it would run every call unasked.
    ///
    /// Say `true` only for clients you know confirm each call with a person. With
    /// `elicit_approval` too, a client that can be asked is asked, and only one that cannot
    /// is trusted. To stop for approval on your own side, run the tool in an
    /// [`Agent`](crate::Agent), which stops with
    /// [`StopReason::AwaitingApproval`](crate::StopReason::AwaitingApproval).
    pub fn trust_client_approval(mut self, trust: bool) -> Self {
        self.trust_client_approval = trust;
        self
    }

    /// Serves tools that need a person's approval before each call, asking the client's user
    /// to approve each call before it runs (MCP elicitation), and waiting up to `wait` for the
    /// answer.
    ///
    /// The user is shown the tool, the arguments and their digest
    /// ([`CallDigest`](crate::agent::CallDigest): SHA-256 of the tool and its arguments in
    /// canonical JSON), in a form whose one field, `digest`, holds it. The call runs only when
    /// the client accepts with that digest. A decline, a dismissal, an answer that names
    /// another digest or none, no answer within `wait`, or a failed request refuses it: it is
    /// not run, the client's model is told `Tool 'NAME' was not approved`, and the
    /// [`on_failure`](Self::on_failure) hooks get an
    /// [`ApprovalRefused`](crate::mcp::ApprovalRefused) that says why (kind `not_approved`).
    ///
    /// A client that cannot be asked — it declared no form elicitation, or speaks protocol
    /// 2026-07-28 or later, which allows the server no requests of its own — has its calls of
    /// such tools refused, unless [`trust_client_approval`](Self::trust_client_approval) says
    /// it asks its user itself.
    pub fn elicit_approval(mut self, wait: Duration) -> Self {
        self.approval_wait = Some(wait);
        self
    }

    /// The server's name in the `initialize` result. Default `reticent`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The server's version in the `initialize` result. Default: reticent's version.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Instructions for the client's model on how to use these tools, sent in the
    /// `initialize` result.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Calls `hook` with every failed call, with its full error, on the server side.
    ///
    /// `failure.shown_to_model` is exactly what the client was sent. Calls to an unknown tool
    /// are reported too (kind `unknown_tool`); cancelled calls are not failures and are not
    /// reported. Hooks run on the call's task, so keep them quick (send to a channel for
    /// anything slow); a hook that panics is logged and does not affect the reply. Every hook
    /// added is called, in the order added.
    pub fn on_failure(mut self, hook: impl Fn(&ToolFailure) + Send + Sync + 'static) -> Self {
        self.on_failure.push(Arc::new(hook));
        self
    }

    /// How long a task of a `#[tool(task)]` tool is kept, from its creation: a call still
    /// running then is stopped (its tool's token cancelled), and the task is forgotten, its
    /// answer with it. Default one hour.
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.task_ttl = ttl;
        self
    }

    /// How many tasks the server keeps at most. A new task pushes out the oldest that has
    /// finished; when every task kept is still running, the call is refused with a protocol
    /// error. Default 1024.
    pub fn max_tasks(mut self, max: usize) -> Self {
        self.max_tasks = max;
        self
    }

    /// Closes each request's event stream over streamable HTTP once it has been open for
    /// `open_for`, telling the client to come back after `retry`; the client resumes it with a
    /// GET that names the last event it read (`Last-Event-ID`), and gets the rest: progress,
    /// the tool's questions, the result (SSE polling, SEP-1699). A call runs on while its
    /// client is away; what it sends meanwhile is kept for the client. Default: a stream stays
    /// open until its answer.
    ///
    /// Turn it on behind proxies and load balancers that cut a response that has been open
    /// or quiet too long: pick an `open_for` below their limit, and a call of any length gets
    /// its answer. Clients that cannot resume (SEP-1699 is of protocol 2025-11-25) lose the
    /// answer of a call longer than `open_for`; rmcp's client, and so
    /// [`McpClient`](crate::mcp::McpClient), resumes.
    ///
    /// For the stateful sessions of [`http_service`](McpServer::http_service) and
    /// [`serve_http`](McpServer::serve_http) (`legacy_session_mode`, rmcp's default); off in
    /// a stateless configuration, and stdio is never cut. A client of protocol 2026-07-28,
    /// which rmcp serves statelessly, may resume its streams, which are not closed; a call
    /// whose stream such a client drops runs on to its end or its time limit.
    ///
    /// What a client may resume is kept in memory and bounded: the latest 256 events of each
    /// of at most 1024 streams, 64 MiB of events (as JSON) in all, the streams least recently
    /// used going first, and a finished stream for a minute after it was last read. An
    /// event's id names its stream by a random key, so no client can read another's. Each
    /// event is measured as it is kept, which costs about what writing it to the wire does.
    pub fn sse_polling(mut self, open_for: Duration, retry: Duration) -> Self {
        self.polling = Some(polling::Polling { open_for, retry });
        self
    }

    /// Keeps the tasks of `#[tool(task)]` tools as Restate workflows rather than in memory
    /// (features `restate` and `mcp-client`): a task survives a restart of the server, and is
    /// followed from any of its replicas. `ingress` is Restate's ingress URL
    /// (`http://127.0.0.1:8080`); bind [`TaskWorkflow`](crate::mcp::TaskWorkflow) for this
    /// server on the endpoint of a service registered with that Restate. Tasks then say
    /// [`task_ttl`](Self::task_ttl) as their time to live; Restate keeps a finished workflow
    /// for its own retention (a day by default), which should be as long. `max_tasks` does
    /// not apply.
    #[cfg(all(feature = "restate", feature = "mcp-client"))]
    pub fn durable_tasks(mut self, ingress: impl Into<String>) -> Self {
        self.durable_tasks = Some(ingress.into());
        self
    }

    /// Checks the tools (valid, unique names and object schemas, for the parameters and for
    /// any output; no tool that needs approval unless the server asks the client's user or
    /// trusts the client to) and builds the server.
    pub fn build(self) -> Result<McpServer, BuildError> {
        let tools = ToolSet::new(self.tools)?;
        if !self.trust_client_approval
            && self.approval_wait.is_none()
            && let Some(tool) = tools.iter().find(|tool| tool.needs_approval())
        {
            return Err(BuildError::NeedsApproval {
                name: tool.definition().name.clone(),
            });
        }
        if let Some(tool) = tools
            .iter()
            .find(|tool| !definition::output_is_object(&***tool))
        {
            return Err(BuildError::InvalidOutputSchema {
                name: tool.definition().name.clone(),
            });
        }
        let listed = tools
            .iter()
            .map(|tool| definition::to_mcp(&**tool))
            .collect();
        let outputs = tools
            .iter()
            .map(|tool| definition::output(&**tool))
            .collect();
        let memory =
            || task::Store::Memory(Arc::new(task::Tasks::new(self.task_ttl, self.max_tasks)));
        #[cfg(all(feature = "restate", feature = "mcp-client"))]
        let store = || match self.durable_tasks.clone() {
            Some(ingress) => {
                task::Store::Durable(super::durable::DurableTasks::new(ingress, self.task_ttl))
            }
            None => memory(),
        };
        #[cfg(not(all(feature = "restate", feature = "mcp-client")))]
        let store = memory;
        let tasks = tools.iter().any(|tool| tool.definition().task).then(store);
        let inner = Arc::new(Inner {
            tools,
            listed,
            outputs,
            timeout: self.timeout,
            include_error_message: self.include_error_message,
            name: self.name,
            version: self.version,
            instructions: self.instructions,
            on_failure: self.on_failure,
            approval_wait: self.approval_wait,
            trust_client_approval: self.trust_client_approval,
            max_output: self.max_output,
            tasks,
            polling: self.polling,
        });
        Ok(McpServer::with_session(&inner, Session::default()))
    }
}

impl fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerBuilder")
            .field(
                "tools",
                &self
                    .tools
                    .iter()
                    .map(|t| t.definition().name.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("timeout", &self.timeout)
            .field("include_error_message", &self.include_error_message)
            .field("trust_client_approval", &self.trust_client_approval)
            .field("approval_wait", &self.approval_wait)
            .field("name", &self.name)
            .field("version", &self.version)
            .field("instructions", &self.instructions)
            .field("on_failure", &self.on_failure.len())
            .field("max_output", &self.max_output)
            .field("task_ttl", &self.task_ttl)
            .field("max_tasks", &self.max_tasks)
            .field("polling", &self.polling)
            .finish()
    }
}
