//! Serving tools over MCP in a test: an rmcp client connected to a server over an in-memory
//! duplex that keeps every byte the client received (`reticent::testing`'s), a failure hook that collects, the MCP
//! Python SDK's virtual environment ([`python`]), a hostile server's answers
//! ([`hostile`]), and the official conformance suite's server and baseline ([`conformance`]). Spans are recorded with [`capture_spans`](crate::spans::capture_spans).

pub mod conformance;
pub mod example;
pub mod hostile;
pub mod oauth;
pub mod python;

use std::sync::{Arc, Mutex};

use reticent::ToolFailure;
use reticent::mcp::McpServer;
use reticent::mcp::rmcp::model::CallToolResult;

/// An rmcp client connected to a server, and everything it received on the wire: the kit's.
pub use reticent::testing::McpConnection as Connection;

/// Serves `server` on one end of an in-memory duplex and connects rmcp's client to the other.
pub async fn connect(server: McpServer) -> Connection {
    match Connection::connect(server).await {
        Ok(connection) => connection,
        Err(error) => panic!("{error}"),
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
/// (as JSON), every request the model was sent and the body each provider would send for it,
/// and what each failure showed it (`reticent::testing::LeakReport::of_run`).
pub fn assert_model_never_saw(
    canary: &str,
    result: &reticent::AgentResult,
    model: &reticent::ScriptedModel,
) {
    let report = reticent::testing::LeakReport::of_run(canary, result, model);
    let leaks = report.leaks();
    assert!(
        leaks.is_empty(),
        "the model could read {canary}:\n{}",
        leaks
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(report.model_channels().contains(&"trajectory"));
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

/// Runs `agent` on "go" over its event stream, within a minute: the events before the last,
/// and the run's result, which must come last.
pub async fn run_to_end(
    agent: &reticent::Agent,
) -> (Vec<reticent::AgentEvent>, reticent::AgentResult) {
    use futures::StreamExt as _;
    let mut events: Vec<reticent::AgentEvent> = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        agent.run_stream("go").collect(),
    )
    .await
    .expect("the run ends");
    match events.pop() {
        Some(reticent::AgentEvent::Finished(Ok(result))) => (events, result),
        other => panic!("expected the result last, got {other:?}"),
    }
}
