//! The step executor: a run hands each model call and each tool call to it, a journal of what
//! it returned replays the run without calling the model or any tool again, what is journaled
//! is what the model saw (never a withheld message), and an executor can stop a run or report
//! a call interrupted in an earlier attempt.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use reticent::{
    Agent, AgentError, Decisions, Model, ModelError, ModelRequest, ModelResponse, RunOptions,
    ScriptedModel, StopReason, ToolCall,
    agent::{CallRecord, ModelStep, PendingReason, StepError, StepExecutor, ToolStep},
    failures::{EffectOutcome, ErrorNotKept},
};
use reticent_tests::shop::{
    CANARY, Shop, calls, charge, ledger, lookup, refund, results, ship, transfer,
};
use serde_json::json;

/// One journaled step, as JSON.
#[derive(Clone, Debug, PartialEq)]
enum Entry {
    Model(String),
    Tool(String),
    /// The calls about to start, by id.
    Start(String),
}

/// A journal: records each step's result, and replays recorded ones by position.
#[derive(Default)]
struct Journal {
    entries: Mutex<Vec<Entry>>,
    next: Mutex<usize>,
}

impl Journal {
    fn replaying(entries: Vec<Entry>) -> Self {
        Self {
            entries: Mutex::new(entries),
            next: Mutex::new(0),
        }
    }

    /// The recorded entry at the next position, if there is one.
    fn recorded(&self) -> Option<Entry> {
        let mut next = self.next.lock().unwrap();
        let entry = self.entries.lock().unwrap().get(*next).cloned();
        *next += 1;
        entry
    }

    fn record(&self, entry: Entry) {
        self.entries.lock().unwrap().push(entry);
    }
}

impl StepExecutor for Journal {
    fn model_call(&self, step: ModelStep) -> BoxFuture<'_, Result<ModelResponse, StepError>> {
        Box::pin(async move {
            if let Some(Entry::Model(json)) = self.recorded() {
                return Ok(serde_json::from_str(&json).unwrap());
            }
            let response = step.run().await.map_err(StepError::Model)?;
            self.record(Entry::Model(serde_json::to_string(&response).unwrap()));
            Ok(response)
        })
    }

    fn tool_call(&self, step: ToolStep) -> BoxFuture<'_, Result<CallRecord, StepError>> {
        Box::pin(async move {
            if let Some(Entry::Tool(json)) = self.recorded() {
                return Ok(serde_json::from_str(&json).unwrap());
            }
            let record = step.run().await;
            self.record(Entry::Tool(serde_json::to_string(&record).unwrap()));
            Ok(record)
        })
    }

    fn calls_starting<'a>(&'a self, calls: &'a [ToolCall]) -> BoxFuture<'a, Result<(), StepError>> {
        Box::pin(async move {
            let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
            match self.recorded() {
                Some(Entry::Start(recorded)) => assert_eq!(recorded, ids.join(",")),
                _ => self.record(Entry::Start(ids.join(","))),
            }
            Ok(())
        })
    }
}

/// A model that must not be called.
struct Unreachable;

impl Model for Unreachable {
    fn complete<'a>(
        &'a self,
        _request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        panic!("a replayed run called the model")
    }
}

fn script() -> Vec<ModelResponse> {
    vec![
        ModelResponse::tool_calls(vec![lookup("c1"), charge("c2")]),
        calls([refund("c3", 4_500)]),
        ModelResponse::text("The charge failed, so I refunded 45.00."),
    ]
}

#[tokio::test]
async fn a_journaled_run_replays_without_calling_the_model_or_any_tool_again() {
    let shop = Shop::new();
    let journal = Journal::default();
    let agent = Agent::builder(ScriptedModel::new(script()))
        .toolbox(Arc::clone(&shop))
        .build()
        .unwrap();
    let first = agent
        .run_on("Charge or refund", RunOptions::default(), &journal)
        .await
        .unwrap();
    assert_eq!(first.output, "The charge failed, so I refunded 45.00.");
    // Run live, the failure carries its full error.
    assert!(first.tool_failures[0].error_chain().contains(CANARY));

    let entries = journal.entries.lock().unwrap().clone();
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| match e {
            Entry::Model(_) => "model",
            Entry::Tool(_) => "tool",
            Entry::Start(_) => "start",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "model", "start", "tool", "tool", "model", "start", "tool", "model"
        ]
    );
    assert_eq!(entries[1], Entry::Start("c1,c2".into()));
    // What is journaled is what the model saw.
    for entry in &entries {
        let (Entry::Model(json) | Entry::Tool(json) | Entry::Start(json)) = entry;
        assert!(!json.contains(CANARY), "{json}");
    }
    assert!(
        matches!(&entries[3], Entry::Tool(json) if json.contains("Tool 'charge_card' failed with GatewayError"))
    );

    // A new process replays the journal: no model, no tool runs, the same run.
    let replay = Journal::replaying(entries);
    let agent = Agent::builder(Unreachable)
        .toolbox(Arc::clone(&shop))
        .build()
        .unwrap();
    let again = agent
        .run_on("Charge or refund", RunOptions::default(), &replay)
        .await
        .unwrap();
    assert_eq!(again.output, first.output);
    assert_eq!(again.messages, first.messages);
    assert_eq!(again.trajectory, first.trajectory);
    assert_eq!(again.effects, first.effects);
    assert_eq!(again.tool_stats, first.tool_stats);
    assert_eq!(Shop::count(&shop.lookups), 1);
    assert_eq!(Shop::count(&shop.charges), 1);
    assert_eq!(Shop::count(&shop.refunds), 1);
    // Replayed, the failure is as the model saw it; its full error stayed where it ran.
    let replayed = &again.tool_failures[0];
    assert_eq!(
        replayed.shown_to_model,
        first.tool_failures[0].shown_to_model
    );
    assert!(replayed.error.downcast_ref::<ErrorNotKept>().is_some());
    assert!(!replayed.error_chain().contains(CANARY));
}

/// Runs every step, except that a call of `transfer_funds` is reported interrupted by an
/// earlier attempt, as a durable executor does for a call it started and never saw finish.
struct InterruptsTransfers;

impl StepExecutor for InterruptsTransfers {
    fn model_call(&self, step: ModelStep) -> BoxFuture<'_, Result<ModelResponse, StepError>> {
        Box::pin(async move { step.run().await.map_err(StepError::Model) })
    }

    fn tool_call(&self, step: ToolStep) -> BoxFuture<'_, Result<CallRecord, StepError>> {
        Box::pin(async move {
            if step.call().name == "transfer_funds" {
                assert!(step.changes_world());
                return Ok(step.interrupted());
            }
            Ok(step.run().await)
        })
    }
}

#[tokio::test]
async fn a_call_interrupted_in_an_earlier_attempt_stops_the_run_for_the_caller_to_reconcile() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![ship("c1"), transfer("c2")]),
        ModelResponse::text("Shipped and paid."),
    ]);
    let agent = Agent::builder(model)
        .toolbox(Arc::clone(&shop))
        .build()
        .unwrap();
    let paused = agent
        .run_on("Ship and pay", RunOptions::default(), &InterruptsTransfers)
        .await
        .unwrap();
    assert_eq!(paused.stop_reason, StopReason::AwaitingApproval);
    assert_eq!(paused.pending.len(), 1);
    assert_eq!(paused.pending[0].call_id, "c2");
    assert_eq!(paused.pending[0].reason, PendingReason::Unknown);
    assert_eq!(
        ledger(&paused.effects),
        [
            ("ship_order", "c1", EffectOutcome::Applied),
            ("transfer_funds", "c2", EffectOutcome::Unknown),
        ]
    );
    // The model was told nothing of the turn yet.
    assert!(results(&paused.messages).is_empty());

    let done = agent
        .resume(
            paused.state.unwrap(),
            Decisions::new().applied(&paused.pending[0], json!("moved 700")),
        )
        .await
        .unwrap();
    assert_eq!(done.output, "Shipped and paid.");
    assert_eq!(Shop::count(&shop.shipments), 1);
    assert_eq!(Shop::count(&shop.transfers_started), 0);
    assert_eq!(
        results(&done.messages),
        [("c1", "shipped ORD-7", false), ("c2", "moved 700", false)]
    );
}

/// An executor whose steps are stopped: a cancelled durable invocation.
struct Stopped {
    model_error: bool,
}

impl StepExecutor for Stopped {
    fn model_call(&self, step: ModelStep) -> BoxFuture<'_, Result<ModelResponse, StepError>> {
        Box::pin(async move {
            if self.model_error {
                return Err(StepError::Model(ModelError::new("retries exhausted")));
            }
            step.run().await.map_err(StepError::Model)
        })
    }

    fn tool_call(&self, _step: ToolStep) -> BoxFuture<'_, Result<CallRecord, StepError>> {
        Box::pin(async { Err(StepError::Cancelled) })
    }
}

#[tokio::test]
async fn an_executor_that_stops_a_step_ends_the_run_and_keeps_its_state() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![calls([ship("c1")])]);
    let agent = Agent::builder(model)
        .toolbox(Arc::clone(&shop))
        .build()
        .unwrap();
    let error = agent
        .run_on(
            "Ship",
            RunOptions::default(),
            &Stopped { model_error: false },
        )
        .await
        .unwrap_err();
    assert!(error.is_cancelled());
    let partial = error.into_partial();
    assert_eq!(partial.pending[0].call_id, "c1");
    assert_eq!(partial.pending[0].reason, PendingReason::Unknown);

    let error = agent
        .run_on(
            "Ship",
            RunOptions::default(),
            &Stopped { model_error: true },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&error, AgentError::Model { error, .. } if error.to_string().contains("retries exhausted"))
    );
    assert!(error.partial().state.is_some());
}
