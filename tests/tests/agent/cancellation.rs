//! Cancellation: `RunOptions::default().cancellation(token)` ends the run promptly with
//! `AgentError::Cancelled`, also in the middle of a slow tool or a model call, and is never
//! recorded as a tool failure.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use reticent::{
    Agent, AgentBuilder, AgentError, AgentEvent, CancellationToken, Message, Model, ModelError,
    ModelRequest, ModelResponse, RunOptions, ScriptedModel, ToolCall, ToolContext, ToolFailureMode,
    ToolFailureOptions, Usage,
};
use serde_json::json;
use tokio::sync::Notify;

/// "Finished promptly": far below the 60 seconds the slow parts would take.
const PROMPTLY: Duration = Duration::from_secs(2);

/// A tool that takes a minute, says when it started, and records what it saw.
#[derive(Default)]
struct Warehouse {
    started: Notify,
    token: std::sync::Mutex<Option<CancellationToken>>,
    finished: AtomicBool,
    dropped: Arc<AtomicBool>,
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the inventory count was interrupted")]
struct Interrupted;

#[reticent::tools]
impl Warehouse {
    /// Count the whole inventory; takes a minute.
    #[tool]
    async fn count_inventory(&self, cx: &ToolContext) -> String {
        let _guard = SetOnDrop(Arc::clone(&self.dropped));
        *self.token.lock().unwrap() = Some(cx.cancellation().clone());
        self.started.notify_one();
        tokio::time::sleep(Duration::from_secs(60)).await;
        self.finished.store(true, Ordering::SeqCst);
        "4211 items".into()
    }

    /// Count one shelf; stops with an error when the call is cancelled.
    #[tool]
    async fn count_shelf(&self, cx: &ToolContext) -> Result<String, Interrupted> {
        self.started.notify_one();
        tokio::select! {
            () = cx.cancellation().cancelled() => Err(Interrupted),
            () = tokio::time::sleep(Duration::from_secs(60)) => Ok("12 items".into()),
        }
    }
}

/// An agent on a model that first answers `first` (a call of a warehouse tool), with the
/// settings `configure` adds, and a token that is cancelled once the tool has started.
fn cancelled_once_started(
    first: ModelResponse,
    configure: impl FnOnce(AgentBuilder) -> AgentBuilder,
) -> (ScriptedModel, Arc<Warehouse>, Agent, CancellationToken) {
    let model = ScriptedModel::new(vec![first, ModelResponse::text("never requested")]);
    let warehouse = Arc::new(Warehouse::default());
    let agent = configure(Agent::builder(model.clone()).toolbox(Arc::clone(&warehouse)))
        .build()
        .unwrap();
    let token = CancellationToken::new();
    let started = Arc::clone(&warehouse);
    let cancel = token.clone();
    tokio::spawn(async move {
        started.started.notified().await;
        cancel.cancel();
    });
    (model, warehouse, agent, token)
}

/// Runs `agent` on `input` with `token`, which something cancels; the run's error, which must
/// come promptly.
async fn run_until_cancelled(agent: &Agent, input: &str, token: CancellationToken) -> AgentError {
    let run = agent.run_with(input, RunOptions::default().cancellation(token));
    tokio::time::timeout(PROMPTLY, run)
        .await
        .expect("the run did not end promptly")
        .unwrap_err()
}

#[tokio::test]
async fn cancelling_mid_slow_tool_ends_the_run_promptly() {
    let (model, warehouse, agent, token) = cancelled_once_started(
        ModelResponse::tool_call("call_1", "count_inventory", json!({}))
            .with_usage(Usage::new(40, 8)),
        |agent| agent,
    );

    let error = run_until_cancelled(&agent, "Count everything", token).await;

    assert!(error.is_cancelled());
    assert_eq!(error.to_string(), "the run was cancelled");
    let AgentError::Cancelled { partial } = error else {
        panic!("expected Cancelled, got {error:?}");
    };
    // Never a tool failure.
    assert!(partial.tool_failures.is_empty());
    // What the run had: the model's call, no result for it, the usage so far.
    assert_eq!(partial.turns, 1);
    assert_eq!(partial.usage, Usage::new(40, 8));
    assert_eq!(
        partial.messages,
        vec![
            Message::user("Count everything"),
            Message::Assistant {
                text: None,
                tool_calls: vec![ToolCall::new("call_1", "count_inventory", json!({}))],
            },
        ]
    );
    assert_eq!(model.requests().len(), 1);
    // The tool was stopped, and its own token told it so.
    assert!(!warehouse.finished.load(Ordering::SeqCst));
    assert!(warehouse.dropped.load(Ordering::SeqCst));
    assert!(
        warehouse
            .token
            .lock()
            .unwrap()
            .as_ref()
            .unwrap()
            .is_cancelled()
    );
}

#[tokio::test]
async fn a_tool_that_fails_because_it_was_cancelled_is_not_a_tool_failure() {
    // Even where any failure would end the run.
    let (_, _, agent, token) = cancelled_once_started(
        ModelResponse::tool_call("call_1", "count_shelf", json!({})),
        |agent| agent.failure_mode(ToolFailureMode::Propagate),
    );

    let error = run_until_cancelled(&agent, "Count shelf 4", token).await;

    let AgentError::Cancelled { partial } = error else {
        panic!("expected Cancelled, got {error:?}");
    };
    assert!(partial.tool_failures.is_empty());
}

#[tokio::test]
async fn cancelling_while_a_tool_has_a_timeout_is_still_cancellation() {
    let (_, _, agent, token) = cancelled_once_started(
        ModelResponse::tool_call("call_1", "count_inventory", json!({})),
        |agent| {
            agent.failure_options(ToolFailureOptions::default().timeout(Duration::from_secs(30)))
        },
    );

    let error = run_until_cancelled(&agent, "Count everything", token).await;

    assert!(error.is_cancelled());
    assert!(error.partial().tool_failures.is_empty());
}

/// A model that takes a minute to answer and says when a request arrived.
#[derive(Clone, Default)]
struct SlowModel {
    called: Arc<Notify>,
}

impl Model for SlowModel {
    fn complete<'a>(
        &'a self,
        _request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            self.called.notify_one();
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(ModelResponse::text("too late"))
        })
    }
}

#[tokio::test]
async fn cancelling_mid_model_call_ends_the_run_promptly() {
    let model = SlowModel::default();
    let agent = Agent::builder(model.clone()).build().unwrap();
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        model.called.notified().await;
        cancel.cancel();
    });

    let error = run_until_cancelled(&agent, "Hello", token).await;

    let AgentError::Cancelled { partial } = error else {
        panic!("expected Cancelled, got {error:?}");
    };
    assert_eq!(partial.turns, 0);
    assert!(partial.trajectory.is_empty());
    assert_eq!(partial.messages, vec![Message::user("Hello")]);
    assert_eq!(partial.output, "");
}

#[tokio::test]
async fn a_run_cancelled_before_it_starts_never_calls_the_model() {
    let model = ScriptedModel::new(vec![ModelResponse::text("never requested")]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let token = CancellationToken::new();
    token.cancel();

    let error = agent
        .run_with("Hello", RunOptions::default().cancellation(token))
        .await
        .unwrap_err();

    assert!(error.is_cancelled());
    assert!(model.requests().is_empty());
    assert_eq!(error.into_partial().turns, 0);
}

#[tokio::test]
async fn cancelling_between_turns_keeps_the_finished_calls() {
    // The first tool call finishes; the model is then slow, and the run is cancelled there.
    let warehouse = Arc::new(Warehouse::default());
    let slow = SlowModel::default();
    let scripted = ScriptedModel::new(vec![ModelResponse::tool_call(
        "call_1",
        "count_shelf_fast",
        json!({}),
    )]);
    let model = FirstScriptedThenSlow {
        scripted: scripted.clone(),
        slow: slow.clone(),
    };

    /// Count one shelf, quickly.
    #[reticent::tool]
    fn count_shelf_fast() -> String {
        "12 items".into()
    }

    let agent = Agent::builder(model)
        .tool(CountShelfFast)
        .toolbox(Arc::clone(&warehouse))
        .build()
        .unwrap();
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        slow.called.notified().await;
        cancel.cancel();
    });

    let error = run_until_cancelled(&agent, "Count shelf 4", token).await;

    let partial = error.into_partial();
    assert_eq!(partial.turns, 1);
    assert_eq!(
        partial.messages.last(),
        Some(&Message::Tool(reticent::ToolResult {
            call_id: "call_1".into(),
            name: "count_shelf_fast".into(),
            content: "12 items".into(),
            is_error: false,
        }))
    );
    assert_eq!(scripted.requests().len(), 1);
}

/// Answers the first request from a script, then every other one slowly.
struct FirstScriptedThenSlow {
    scripted: ScriptedModel,
    slow: SlowModel,
}

impl Model for FirstScriptedThenSlow {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        if self.scripted.remaining() > 0 {
            self.scripted.complete(request)
        } else {
            self.slow.complete(request)
        }
    }
}

#[tokio::test]
async fn a_cancelled_stream_ends_with_cancelled_and_no_tool_failure() {
    let (_, _, agent, token) = cancelled_once_started(
        ModelResponse::tool_call("call_1", "count_shelf", json!({})),
        |agent| agent,
    );

    let events = agent.run_stream_with("Count shelf 4", RunOptions::default().cancellation(token));
    let events: Vec<AgentEvent> = tokio::time::timeout(PROMPTLY, events.collect())
        .await
        .expect("the stream did not end promptly");

    assert!(
        !events.iter().any(|e| matches!(
            e,
            AgentEvent::ToolFailed(_) | AgentEvent::ToolSucceeded { .. }
        )),
        "{events:#?}"
    );
    // The streamed parts of the turn come first; the turn itself is the
    // first event that is not one of them.
    assert!(matches!(
        events.iter().find(|e| !matches!(
            e,
            AgentEvent::TextDelta { .. } | AgentEvent::ToolCallRequested { .. }
        )),
        Some(AgentEvent::ModelResponded { turn: 1, .. })
    ));
    assert!(matches!(
        events.last(),
        Some(AgentEvent::Finished(Err(AgentError::Cancelled { .. })))
    ));
}

/// A tool that answers with the id and the name its context holds; `reads` is what it says
/// of itself through `Tool::reads_context`.
struct Introspect {
    definition: reticent::ToolDefinition,
    reads: bool,
}

impl Introspect {
    fn new(name: &str, reads: bool) -> Self {
        let schema = json!({"type": "object", "properties": {}});
        Self {
            definition: reticent::ToolDefinition::new(name, "Say who is calling.", schema),
            reads,
        }
    }
}

impl reticent::Tool for Introspect {
    fn definition(&self) -> &reticent::ToolDefinition {
        &self.definition
    }

    fn call(&self, _: serde_json::Value, cx: ToolContext) -> reticent::tool::ToolFuture<'_> {
        let seen = format!("{}/{}", cx.call_id(), cx.tool_name());
        reticent::tool::ToolFuture::ready(Ok(json!(seen)))
    }

    fn reads_context(&self) -> bool {
        self.reads
    }
}

#[tokio::test]
async fn a_tool_that_reads_no_context_is_called_with_an_empty_one() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "reads", json!({})),
            ToolCall::new("c2", "blind", json!({})),
        ]),
        ModelResponse::text("Done."),
    ]);
    let agent = Agent::builder(model)
        .tool(Introspect::new("reads", true))
        .tool(Introspect::new("blind", false))
        .build()
        .unwrap();
    let result = agent.run("Who is calling?").await.unwrap();
    let seen: Vec<&str> = reticent_tests::transcript::tool_results(&result.messages)
        .iter()
        .map(|r| r.content.as_str())
        .collect();
    assert_eq!(seen, ["c1/reads", "/"]);
}
