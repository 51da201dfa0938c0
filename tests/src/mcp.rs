//! Serving tools over MCP in a test: an rmcp client connected to a server over an in-memory
//! duplex that keeps every byte the client received, a failure hook that collects, the MCP
//! Python SDK's virtual environment ([`python`]), a hostile server's answers
//! ([`hostile`]), and the official conformance suite's server and baseline ([`conformance`]). Spans are recorded with [`capture_spans`](crate::spans::capture_spans).

pub mod conformance;
pub mod example;
pub mod hostile;
pub mod oauth;
pub mod python;

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use reticent::ToolFailure;
use reticent::mcp::McpServer;
use reticent::mcp::rmcp::ServiceExt;
use reticent::mcp::rmcp::model::CallToolResult;
use reticent::mcp::rmcp::service::{RoleClient, RoleServer, RunningService};
use tokio::io::{AsyncRead, ReadBuf};

/// A reader that keeps a copy of everything read through it.
struct Tap<R> {
    inner: R,
    seen: Arc<Mutex<Vec<u8>>>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Tap<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = buf.filled()[before..].to_vec();
        self.seen.lock().unwrap().extend_from_slice(&read);
        poll
    }
}

/// An rmcp client connected to a server, and everything it received on the wire.
#[allow(missing_debug_implementations)] // rmcp's running services are not `Debug`
pub struct Connection {
    /// The client, ready to list and call tools.
    pub client: RunningService<RoleClient, ()>,
    received: Arc<Mutex<Vec<u8>>>,
    /// Dropping the server's side closes the connection.
    _server: RunningService<RoleServer, McpServer>,
}

impl Connection {
    /// Every byte the server sent the client so far, as text.
    pub fn received(&self) -> String {
        String::from_utf8(self.received.lock().unwrap().clone()).expect("the wire is UTF-8")
    }
}

/// Serves `server` on one end of an in-memory duplex and connects rmcp's client to the other.
pub async fn connect(server: McpServer) -> Connection {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(client_end);
    let received = Arc::new(Mutex::new(Vec::new()));
    let tap = Tap {
        inner: read,
        seen: Arc::clone(&received),
    };
    let (server, client) = tokio::join!(server.serve(server_end), ().serve((tap, write)));
    Connection {
        client: client.expect("the client completes the handshake"),
        received,
        _server: server.expect("the server completes the handshake"),
    }
}

/// The text of a result's only content block.
pub fn text(result: &CallToolResult) -> &str {
    assert_eq!(result.content.len(), 1, "one content block: {result:?}");
    match result.content[0].as_text() {
        Some(text) => &text.text,
        None => panic!("expected text content, got {result:?}"),
    }
}

/// Failures a server reported through `on_failure`.
#[derive(Clone, Debug, Default)]
pub struct Failures(Arc<Mutex<Vec<ToolFailure>>>);

impl Failures {
    /// A hook for [`McpServerBuilder::on_failure`](reticent::mcp::McpServerBuilder::on_failure).
    pub fn hook(&self) -> impl Fn(&ToolFailure) + Send + Sync + 'static {
        let failures = Arc::clone(&self.0);
        move |failure| failures.lock().unwrap().push(failure.clone())
    }

    /// Every failure reported so far, in order.
    pub fn all(&self) -> Vec<ToolFailure> {
        self.0.lock().unwrap().clone()
    }

    /// The only failure reported.
    pub fn one(&self) -> ToolFailure {
        let all = self.all();
        assert_eq!(all.len(), 1, "expected one failure: {all:#?}");
        all.into_iter().next().unwrap()
    }
}

/// Fails if `canary` is anywhere the model could have seen it: the transcript, the trajectory
/// (as JSON), every request the model was sent, and what each failure showed it.
pub fn assert_model_never_saw(
    canary: &str,
    result: &reticent::AgentResult,
    model: &reticent::ScriptedModel,
) {
    let messages = format!("{:?}", result.messages);
    assert!(
        !messages.contains(canary),
        "the transcript has {canary}: {messages}"
    );
    let trajectory = serde_json::to_string(&result.trajectory).expect("a trajectory is JSON");
    assert!(
        !trajectory.contains(canary),
        "the trajectory has {canary}: {trajectory}"
    );
    let requests = format!("{:?}", model.requests());
    assert!(
        !requests.contains(canary),
        "a model request has {canary}: {requests}"
    );
    for failure in &result.tool_failures {
        assert!(
            !failure.shown_to_model.contains(canary),
            "the model was shown {canary}: {failure:#?}"
        );
    }
}

/// Whether the process `pid` has ended: it is gone, or a zombie (exited, not yet reaped).
/// Reads `/proc`, so only on Linux; check that a live process reads as running first.
pub fn process_ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // `PID (COMM) STATE ...`; COMM can hold spaces and parentheses.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

/// Waits up to `limit` for the process `pid` to end; whether it did.
pub async fn wait_until_ended(pid: u32, limit: std::time::Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while !process_ended(pid) {
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    true
}

/// The tool named `name` among `tools`.
pub fn find_tool(tools: &[Arc<dyn reticent::Tool>], name: &str) -> Arc<dyn reticent::Tool> {
    tools
        .iter()
        .find(|t| t.definition().name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
        .clone()
}

/// Calls the tool named `name` outside any agent.
pub async fn call_tool(
    tools: &[Arc<dyn reticent::Tool>],
    name: &str,
    arguments: serde_json::Value,
) -> Result<serde_json::Value, reticent::ToolError> {
    find_tool(tools, name)
        .call(arguments, reticent::ToolContext::default())
        .await
}

/// Runs an agent on a `ScriptedModel` with `responses` and `tools`, built as `configure`
/// says; the run's result and the model, which records its requests.
pub async fn run_agent(
    responses: Vec<reticent::ModelResponse>,
    tools: Vec<Arc<dyn reticent::Tool>>,
    configure: impl FnOnce(reticent::AgentBuilder) -> reticent::AgentBuilder,
) -> (reticent::AgentResult, reticent::ScriptedModel) {
    let model = reticent::ScriptedModel::new(responses);
    let agent = configure(reticent::Agent::builder(model.clone()).tools(tools))
        .build()
        .expect("the agent builds");
    let result = agent.run("go").await.expect("the run completes");
    (result, model)
}
