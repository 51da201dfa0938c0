//! A call's idempotency key (`ToolContext::idempotency_key`) names that call wherever it runs
//! again — a run resumed from its saved state, a turn the loop asks again after its stream
//! broke off — and no other call.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use reticent::{
    Agent, AgentEvent, CancellationToken, Decisions, Model, ModelError, ModelRequest,
    ModelResponse, RunOptions, RunState, ScriptedModel, ToolCall, ToolContext,
    model::{ModelEvent, RetryPolicy},
};
use serde_json::json;
use tokio::sync::Notify;

/// A payments desk whose `pay` writes down the key of each call it starts, and waits for the
/// test when it is told to.
#[derive(Default)]
struct Desk {
    /// `(call id, key)` of each `pay` that started.
    keys: Mutex<Vec<(String, String)>>,
    started: Notify,
    hold: std::sync::atomic::AtomicBool,
    release: Notify,
}

#[reticent::tools]
impl Desk {
    /// Pay a supplier.
    #[tool(destructive)]
    async fn pay(&self, cents: u64, cx: &ToolContext) -> String {
        self.keys
            .lock()
            .unwrap()
            .push((cx.call_id().to_owned(), cx.idempotency_key().to_owned()));
        self.started.notify_one();
        if self.hold.load(std::sync::atomic::Ordering::SeqCst) {
            self.release.notified().await;
        }
        format!("paid {cents}")
    }
}

impl Desk {
    fn keys(&self) -> Vec<(String, String)> {
        self.keys.lock().unwrap().clone()
    }
}

fn pay(id: &str, cents: u64) -> ToolCall {
    ToolCall::new(id, "pay", json!({ "cents": cents }))
}

fn agent(model: impl Model, desk: &Arc<Desk>) -> Agent {
    Agent::builder(model)
        .toolbox(Arc::clone(desk))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_call_cut_off_and_resumed_from_its_saved_state_keeps_its_key() {
    let desk = Arc::new(Desk::default());
    desk.hold.store(true, std::sync::atomic::Ordering::SeqCst);
    let model = ScriptedModel::new(vec![ModelResponse::tool_calls(vec![pay("c1", 700)])]);
    let token = CancellationToken::new();
    let run = {
        let agent = agent(model, &desk);
        let token = token.clone();
        tokio::spawn(async move {
            agent
                .run_with("Pay", RunOptions::default().cancellation(token))
                .await
        })
    };
    desk.started.notified().await;
    token.cancel();
    let partial = run.await.unwrap().unwrap_err().into_partial();
    // Stored and read back, as another process would.
    let json = serde_json::to_string(&partial.state.expect("a cancelled run can go on")).unwrap();
    let state: RunState = serde_json::from_str(&json).unwrap();
    assert!(state.run_id().is_some_and(|id| id.len() == 32), "{json}");

    desk.hold.store(false, std::sync::atomic::Ordering::SeqCst);
    let decisions = Decisions::new().approve(&state.pending()[0]);
    let next = ScriptedModel::new(vec![ModelResponse::text("Paid.")]);
    let result = agent(next, &desk).resume(state, decisions).await.unwrap();
    assert_eq!(result.output, "Paid.");

    let keys = desk.keys();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert_eq!(keys[0], keys[1], "the call ran again under its own key");
    assert_eq!(keys[0].1.len(), 36, "a UUID: {}", keys[0].1);

    // Another run of the same call has another key.
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![pay("c1", 700)]),
        ModelResponse::text("Paid."),
    ]);
    agent(model, &desk).run("Pay").await.unwrap();
    assert_ne!(desk.keys()[2].1, keys[0].1);
}

#[tokio::test]
async fn calls_of_one_run_have_keys_of_their_own_and_a_named_run_gives_the_same_keys() {
    let desk = Arc::new(Desk::default());
    let script = || {
        ScriptedModel::new(vec![
            ModelResponse::tool_calls(vec![pay("c1", 1), pay("c2", 1)]),
            ModelResponse::tool_calls(vec![pay("c1", 1)]),
            ModelResponse::text("Paid."),
        ])
    };
    let named = || RunOptions::default().run_id("order-7");
    agent(script(), &desk)
        .run_with("Pay", named())
        .await
        .unwrap();
    let first: Vec<String> = desk.keys().into_iter().map(|(_, key)| key).collect();
    assert_eq!(first.len(), 3);
    // Two calls of one turn with the same arguments, and a call of a later turn under a
    // repeated id: three keys.
    assert_ne!(first[0], first[1]);
    assert_ne!(first[0], first[2]);
    assert_ne!(first[1], first[2]);

    agent(script(), &desk)
        .run_with("Pay", named())
        .await
        .unwrap();
    let again: Vec<String> = desk
        .keys()
        .into_iter()
        .skip(3)
        .map(|(_, key)| key)
        .collect();
    assert_eq!(
        again, first,
        "a run named alike gives its calls the same keys"
    );

    let other = RunOptions::default().run_id("order-8");
    agent(script(), &desk).run_with("Pay", other).await.unwrap();
    assert!(desk.keys()[6..].iter().all(|(_, key)| !first.contains(key)));
}

/// One stream: the events it sends, then the error it breaks off with, if it does.
type Attempt = (Vec<ModelEvent>, Option<ModelError>);

/// A model whose streams follow a script of attempts.
#[derive(Clone)]
struct Breaking {
    attempts: Arc<Mutex<VecDeque<Attempt>>>,
}

impl Model for Breaking {
    fn complete<'a>(
        &'a self,
        _request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        panic!("these runs stream")
    }

    fn stream<'a>(
        &'a self,
        _request: &'a ModelRequest,
    ) -> BoxStream<'a, Result<ModelEvent, ModelError>> {
        let (events, error) = self
            .attempts
            .lock()
            .unwrap()
            .pop_front()
            .expect("an attempt for every stream");
        futures::stream::iter(events.into_iter().map(Ok).chain(error.map(Err))).boxed()
    }

    fn retry_policy(&self) -> Option<RetryPolicy> {
        Some(RetryPolicy::new(
            2,
            Duration::from_millis(1),
            Duration::from_secs(1),
        ))
    }
}

fn whole(response: ModelResponse) -> Attempt {
    (vec![ModelEvent::Completed(response)], None)
}

#[tokio::test(start_paused = true)]
async fn a_call_of_a_turn_asked_again_has_the_key_it_has_when_the_turn_never_broke() {
    let desk = Arc::new(Desk::default());
    // The turn's stream announces a call, then breaks off; asked again, the model gives the
    // call another id, as providers do.
    let broken = (
        vec![ModelEvent::ToolCallStarted {
            index: 0,
            id: "call_a".into(),
            name: "pay".into(),
        }],
        Some(ModelError::new("the connection broke").retryable(true)),
    );
    let model = Breaking {
        attempts: Arc::new(Mutex::new(VecDeque::from([
            broken,
            whole(ModelResponse::tool_calls(vec![pay("call_b", 700)])),
            whole(ModelResponse::text("Paid.")),
        ]))),
    };
    let agent = agent(model, &desk);
    let events: Vec<AgentEvent> = agent
        .run_stream_with("Pay", RunOptions::default().run_id("run-1"))
        .collect()
        .await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::TurnRestarted { .. })),
        "the turn was asked again"
    );
    assert!(matches!(events.last(), Some(AgentEvent::Finished(Ok(_)))));

    // The same run, whose stream never broke.
    let model = Breaking {
        attempts: Arc::new(Mutex::new(VecDeque::from([
            whole(ModelResponse::tool_calls(vec![pay("call_c", 700)])),
            whole(ModelResponse::text("Paid.")),
        ]))),
    };
    let agent = self::agent(model, &desk);
    let _: Vec<AgentEvent> = agent
        .run_stream_with("Pay", RunOptions::default().run_id("run-1"))
        .collect()
        .await;

    let keys = desk.keys();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert_eq!(
        (keys[0].0.as_str(), keys[1].0.as_str()),
        ("call_b", "call_c")
    );
    assert_eq!(keys[0].1, keys[1].1);
}
