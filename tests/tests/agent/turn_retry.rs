//! A turn whose stream breaks off is retried by the loop, as a turn: `TurnRestarted` tells the
//! stream's reader to discard what it showed of the turn, the turn is asked again with the
//! model's own retry policy and budget, and the record keeps one assistant message per turn.
//! What is not worth retrying (a refusal, a `4xx`, a server that asks for too long a wait, a
//! spent budget) ends the run as before, with the partial result.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use reticent::{
    Agent, AgentError, AgentEvent, AgentResult, CancellationToken, Message, Model, ModelError,
    ModelRequest, ModelResponse, RunOptions, Usage,
    model::{ModelEvent, RetryPolicy},
};
use serde_json::json;

/// One answer of the model: streamed whole, or broken off after some events.
enum Attempt {
    Whole(ModelResponse),
    Broken(Vec<ModelEvent>, ModelError),
}

/// A model whose streams follow a script of attempts, and that counts them.
#[derive(Clone)]
struct Flaky {
    script: Arc<Mutex<VecDeque<Attempt>>>,
    streams: Arc<AtomicU32>,
    policy: Option<RetryPolicy>,
}

impl Flaky {
    fn new(script: Vec<Attempt>) -> Self {
        Self {
            script: Arc::new(Mutex::new(script.into())),
            streams: Arc::default(),
            policy: None,
        }
    }

    fn with_policy(mut self, policy: RetryPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    fn streams(&self) -> u32 {
        self.streams.load(Ordering::SeqCst)
    }
}

impl Model for Flaky {
    fn complete<'a>(
        &'a self,
        _request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        panic!("the runs of these tests stream")
    }

    fn stream<'a>(
        &'a self,
        _request: &'a ModelRequest,
    ) -> BoxStream<'a, Result<ModelEvent, ModelError>> {
        self.streams.fetch_add(1, Ordering::SeqCst);
        let attempt = self
            .script
            .lock()
            .unwrap()
            .pop_front()
            .expect("the script has an attempt for every stream");
        let items: Vec<Result<ModelEvent, ModelError>> = match attempt {
            Attempt::Whole(response) => {
                let mut items = Vec::new();
                if let Some(text) = &response.text {
                    items.push(Ok(ModelEvent::TextDelta(text.clone())));
                }
                items.push(Ok(ModelEvent::Completed(response)));
                items
            }
            Attempt::Broken(events, error) => {
                events.into_iter().map(Ok).chain([Err(error)]).collect()
            }
        };
        futures::stream::iter(items).boxed()
    }

    fn retry_policy(&self) -> Option<RetryPolicy> {
        self.policy
    }
}

/// A stream that broke off after "Hel", as a provider reports it: worth retrying.
fn broken() -> Attempt {
    Attempt::Broken(
        vec![ModelEvent::TextDelta("Hel".into())],
        ModelError::new("the stream broke off after 1 event: the connection broke").retryable(true),
    )
}

fn hello() -> Attempt {
    Attempt::Whole(ModelResponse::text("Hello!").with_usage(Usage::new(10, 3)))
}

/// A policy that retries at once, `n` times.
fn quick(n: u32) -> RetryPolicy {
    RetryPolicy::new(n, Duration::from_millis(1), Duration::from_secs(30))
}

async fn run(agent: &Agent) -> (Vec<AgentEvent>, Result<AgentResult, AgentError>) {
    let mut events: Vec<AgentEvent> = agent.run_stream("Say hello.").collect().await;
    let Some(AgentEvent::Finished(result)) = events.pop() else {
        panic!("the last event is `Finished`");
    };
    (events, result)
}

/// The events as short lines, for comparing their order.
fn lines(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .map(|event| match event {
            AgentEvent::TextDelta { turn, text } => format!("text {turn}: {text}"),
            AgentEvent::TurnRestarted { turn, attempt, .. } => {
                format!("restarted {turn}: attempt {attempt}")
            }
            AgentEvent::ModelResponded { turn, .. } => format!("responded {turn}"),
            AgentEvent::ToolCallRequested { turn, name, .. } => {
                format!("requested {turn}: {name}")
            }
            AgentEvent::ToolStarted { call } => format!("started {}", call.name),
            AgentEvent::ToolSucceeded { tool, .. } => format!("succeeded {tool}"),
            other => format!("{other:?}"),
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_broken_turn_is_restarted_and_the_stream_says_so_before_its_events() {
    let model = Flaky::new(vec![broken(), hello()]).with_policy(quick(2));
    let agent = Agent::builder(model.clone()).build().unwrap();
    let (events, result) = run(&agent).await;
    assert_eq!(
        lines(&events),
        [
            "text 1: Hel",
            "restarted 1: attempt 2",
            "text 1: Hello!",
            "responded 1"
        ]
    );
    let AgentEvent::TurnRestarted { reason, delay, .. } = &events[1] else {
        unreachable!()
    };
    assert!(reason.message().contains("broke off"), "{reason}");
    assert!(*delay <= Duration::from_millis(1), "{delay:?}");

    let result = result.expect("the retried turn completes the run");
    assert_eq!(model.streams(), 2);
    assert_eq!(result.output, "Hello!");
    // One assistant message, one trajectory turn and the usage of the attempt that completed.
    let assistant = result
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Assistant { .. }))
        .count();
    assert_eq!(assistant, 1);
    assert_eq!(result.turns, 1);
    assert_eq!(result.trajectory.len(), 1);
    assert_eq!(result.usage, Usage::new(10, 3));
}

#[tokio::test(start_paused = true)]
async fn a_turn_that_breaks_before_its_calls_run_runs_them_once() {
    #[derive(Default)]
    struct Counter(AtomicU32);
    #[reticent::tools]
    impl Counter {
        /// Count one.
        #[tool]
        fn count(&self) -> u32 {
            self.0.fetch_add(1, Ordering::SeqCst) + 1
        }
    }
    let started = ModelEvent::ToolCallStarted {
        index: 0,
        id: "call_1".into(),
        name: "count".into(),
    };
    let model = Flaky::new(vec![
        Attempt::Broken(
            vec![started],
            ModelError::new("the stream ended before the answer was complete").retryable(true),
        ),
        Attempt::Whole(ModelResponse::tool_call("call_1", "count", json!({}))),
        hello(),
    ])
    .with_policy(quick(2));
    let counter = Arc::new(Counter::default());
    let agent = Agent::builder(model.clone())
        .toolbox(Arc::clone(&counter))
        .build()
        .unwrap();
    let (events, result) = run(&agent).await;
    assert_eq!(
        lines(&events),
        [
            "requested 1: count",
            "restarted 1: attempt 2",
            "responded 1",
            "started count",
            "succeeded count",
            "text 2: Hello!",
            "responded 2"
        ]
    );
    result.unwrap();
    assert_eq!(counter.0.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn a_spent_budget_ends_the_run_with_the_error_and_the_partial_result() {
    let model = Flaky::new(vec![broken(), broken(), broken()]).with_policy(quick(2));
    let agent = Agent::builder(model.clone()).build().unwrap();
    let (events, result) = run(&agent).await;
    let restarts: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TurnRestarted { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .collect();
    assert_eq!(restarts, [2, 3]);
    assert_eq!(model.streams(), 3, "the first attempt and 2 retries");
    let Err(AgentError::Model { error, partial }) = result else {
        panic!("expected a model error, got {result:?}");
    };
    assert!(error.message().contains("broke off"), "{error}");
    // What the last attempt streamed is the partial output; no turn was recorded.
    assert_eq!(partial.output, "Hel");
    assert_eq!(partial.turns, 0);
}

#[tokio::test(start_paused = true)]
async fn the_attempts_the_model_made_count_against_the_budget() {
    // The provider already retried twice before the stream broke off: the budget is spent.
    let spent = Attempt::Broken(
        vec![ModelEvent::TextDelta("Hel".into())],
        ModelError::new("the stream broke off after 1 event: the connection broke")
            .retryable(true)
            .with_attempts(3),
    );
    let model = Flaky::new(vec![spent, hello()]).with_policy(quick(2));
    let agent = Agent::builder(model.clone()).build().unwrap();
    let (_, result) = run(&agent).await;
    assert!(
        matches!(result, Err(AgentError::Model { .. })),
        "{result:?}"
    );
    assert_eq!(model.streams(), 1);

    // One attempt spent of three: one restart is left.
    let one = Attempt::Broken(
        vec![ModelEvent::TextDelta("Hel".into())],
        ModelError::new("broke off")
            .retryable(true)
            .with_attempts(2),
    );
    let model = Flaky::new(vec![one, broken(), hello()]).with_policy(quick(2));
    let agent = Agent::builder(model.clone()).build().unwrap();
    let (_, result) = run(&agent).await;
    assert!(
        matches!(result, Err(AgentError::Model { .. })),
        "{result:?}"
    );
    assert_eq!(model.streams(), 2);
}

#[tokio::test(start_paused = true)]
async fn what_is_not_worth_retrying_is_not_retried() {
    let refusals = [
        // the provider says retrying cannot help (a limit, a 4xx)
        ModelError::new("the answer has more than 4 tool calls"),
        ModelError::new("invalid_request_error: bad").with_status(400),
        // a 4xx other than 408, 409 and 429 is never retried, whatever it says
        ModelError::new("not found")
            .with_status(404)
            .retryable(true),
        // the server asks for a longer wait than `max_retry_delay`
        ModelError::new("overloaded")
            .retryable(true)
            .with_retry_after(Duration::from_secs(60)),
    ];
    for error in refusals {
        let shown = error.to_string();
        let model = Flaky::new(vec![
            Attempt::Broken(vec![ModelEvent::TextDelta("Hel".into())], error),
            hello(),
        ])
        .with_policy(quick(2));
        let agent = Agent::builder(model.clone()).build().unwrap();
        let (events, result) = run(&agent).await;
        assert!(
            matches!(result, Err(AgentError::Model { .. })),
            "{shown}: {result:?}"
        );
        assert_eq!(model.streams(), 1, "{shown}");
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, AgentEvent::TurnRestarted { .. })),
            "{shown}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn retry_after_sets_the_wait() {
    let asked = Attempt::Broken(
        vec![ModelEvent::TextDelta("Hel".into())],
        ModelError::new("the stream sent an error: overloaded_error: Overloaded")
            .retryable(true)
            .with_retry_after(Duration::from_secs(7)),
    );
    let model = Flaky::new(vec![asked, hello()]).with_policy(quick(2));
    let agent = Agent::builder(model.clone()).build().unwrap();
    let started = tokio::time::Instant::now();
    let (events, result) = run(&agent).await;
    result.unwrap();
    let delay = events.iter().find_map(|e| match e {
        AgentEvent::TurnRestarted { delay, .. } => Some(*delay),
        _ => None,
    });
    assert_eq!(delay, Some(Duration::from_secs(7)));
    assert!(started.elapsed() >= Duration::from_secs(7));
}

#[tokio::test(start_paused = true)]
async fn the_retry_is_configured_on_the_agent_and_on_by_default() {
    // Off: the first break ends the run.
    let model = Flaky::new(vec![broken(), hello()]);
    let agent = Agent::builder(model.clone())
        .retry_broken_turns(false)
        .build()
        .unwrap();
    let (_, result) = run(&agent).await;
    assert!(matches!(result, Err(AgentError::Model { .. })));
    assert_eq!(model.streams(), 1);

    // On by default, with the model's policy; a model without one gets `RetryPolicy::default()`.
    let model = Flaky::new(vec![broken(), broken(), hello()]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    run(&agent).await.1.unwrap();
    assert_eq!(model.streams(), 3);

    // A model that never retries is not retried by the loop either.
    let model = Flaky::new(vec![broken(), hello()]).with_policy(RetryPolicy::never());
    let agent = Agent::builder(model.clone()).build().unwrap();
    assert!(run(&agent).await.1.is_err());
    assert_eq!(model.streams(), 1);

    // The agent's policy overrides the model's.
    let script = (0..5).map(|_| broken()).chain([hello()]).collect();
    let model = Flaky::new(script).with_policy(RetryPolicy::never());
    let agent = Agent::builder(model.clone())
        .turn_retry_policy(quick(5))
        .build()
        .unwrap();
    run(&agent).await.1.unwrap();
    assert_eq!(model.streams(), 6);
}

#[tokio::test(start_paused = true)]
async fn a_run_cancelled_while_it_waits_to_retry_is_cancelled() {
    let model = Flaky::new(vec![broken(), hello()]).with_policy(RetryPolicy::new(
        2,
        Duration::from_secs(3600),
        Duration::from_secs(7200),
    ));
    let agent = Agent::builder(model.clone()).build().unwrap();
    let token = CancellationToken::new();
    let mut events = agent.run_stream_with(
        "Say hello.",
        RunOptions::default().cancellation(token.clone()),
    );
    let mut seen = Vec::new();
    while let Some(event) = events.next().await {
        if matches!(event, AgentEvent::TurnRestarted { .. }) {
            token.cancel();
        }
        seen.push(event);
    }
    let Some(AgentEvent::Finished(Err(error))) = seen.pop() else {
        panic!("expected the run to end with an error");
    };
    assert!(error.is_cancelled(), "{error}");
    assert_eq!(model.streams(), 1);
}
