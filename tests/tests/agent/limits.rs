//! Repeated failures are terse and bounded: an identical failing call gets a short "failed
//! again" line, and after `max_consecutive_failures` failed calls in a row the model gets one
//! last turn without tools. `max_turns` ends a run the same way. A response that asks for more
//! calls than `max_calls_per_turn` is refused whole, none of its calls run.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::{self, BoxStream};
use reticent::{
    Agent, AgentBuilder, AgentError, AgentEvent, AgentResult, Decisions, Message, Model,
    ModelError, ModelRequest, ModelResponse, ScriptedModel, StopReason, ToolCall,
    ToolFailureOptions, model::ModelEvent,
};
use reticent_tests::transcript::{last_tool_result, offered, shown, tool_results};
use serde_json::json;

const TOOLS_DISABLED_AFTER_3: &str = "Tools are now disabled for this conversation after 3 tool \
     calls in a row failed. Do not call tools. Tell the user plainly which step failed and that \
     it could not be completed.";

const TURN_LIMIT: &str = "This conversation has reached its limit of turns and tools are now \
     disabled. Do not call tools. Tell the user what was done and what is still unfinished.";

#[derive(Debug, thiserror::Error)]
#[error("gateway returned 503 while charging {0} cents")]
struct GatewayError(u64);

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum PayError {
    #[error("gateway returned 503")]
    Gateway,
    #[error("card declined: insufficient funds")]
    Declined,
}

/// A payment service that counts its calls; `charge_card` always fails, `pay` fails first
/// with a gateway error and then with a declined card.
#[derive(Default)]
struct Payments {
    calls: AtomicUsize,
}

#[reticent::tools]
impl Payments {
    /// Charge the customer's card.
    #[tool]
    fn charge_card(&self, amount_cents: u64) -> Result<String, GatewayError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Err(GatewayError(amount_cents))
    }

    /// Pay an invoice.
    #[tool]
    fn pay(&self, invoice: String) -> Result<String, PayError> {
        let _ = invoice;
        if self.calls.fetch_add(1, Ordering::SeqCst) == 0 {
            Err(PayError::Gateway)
        } else {
            Err(PayError::Declined)
        }
    }

    /// Look up an order.
    #[tool(read_only)]
    fn lookup_order(&self, order_id: String) -> String {
        self.calls.fetch_add(1, Ordering::SeqCst);
        format!("{order_id}: 1 lamp")
    }
}

fn charge(id: &str, amount_cents: u64) -> ToolCall {
    ToolCall::new(id, "charge_card", json!({ "amount_cents": amount_cents }))
}

fn lookup(id: &str) -> ToolCall {
    ToolCall::new(id, "lookup_order", json!({"order_id": "ORD-1042"}))
}

fn one(call: ToolCall) -> ModelResponse {
    ModelResponse::tool_calls(vec![call])
}

/// Runs `prompt` on `script` with the payments toolbox and the settings `configure` adds.
async fn run(
    prompt: &str,
    script: Vec<ModelResponse>,
    configure: impl FnOnce(AgentBuilder) -> AgentBuilder,
) -> (ScriptedModel, Arc<Payments>, AgentResult) {
    let model = ScriptedModel::new(script);
    let payments = Arc::new(Payments::default());
    let agent = configure(Agent::builder(model.clone()).toolbox(Arc::clone(&payments)))
        .build()
        .unwrap();
    let result = agent.run(prompt).await.unwrap();
    (model, payments, result)
}

/// The defaults: nothing to add.
fn defaults(agent: AgentBuilder) -> AgentBuilder {
    agent
}

/// The request is the last turn: it offers no tools and ends with `note`.
fn assert_last_turn(request: &ModelRequest, note: &str) {
    assert!(request.tools.is_empty());
    assert_eq!(request.messages.last(), Some(&Message::user(note)));
}

// ---- what the model is shown for repeated calls ------------------------------------------------

const GATEWAY: &str = "Tool 'charge_card' failed with GatewayError";

const CHARGE_AGAIN_AS_C1: &str =
    "Tool 'charge_card' failed again the same way as call 'c1' with the same arguments";

/// A run, and what the model was shown for each call.
struct Repeats {
    /// What the case shows.
    name: &'static str,
    prompt: &'static str,
    script: Vec<ModelResponse>,
    options: ToolFailureOptions,
    /// Call id → the tool result's text, in order.
    shown: &'static [(&'static str, &'static str)],
    /// More checks of the model's requests and the run's result.
    then: fn(&ScriptedModel, &AgentResult),
}

fn repeats() -> Vec<Repeats> {
    vec![
        Repeats {
            name: "an identical failing call is reported tersely",
            prompt: "Charge $5",
            script: vec![
                one(charge("c1", 500)),
                one(charge("c2", 500)),
                ModelResponse::text("The card could not be charged."),
            ],
            options: ToolFailureOptions::default(),
            shown: &[("c1", GATEWAY), ("c2", CHARGE_AGAIN_AS_C1)],
            then: the_terse_line_reaches_the_model_and_the_caller_keeps_everything,
        },
        Repeats {
            name: "identical calls in one turn are collapsed too",
            prompt: "Charge $5 twice",
            script: vec![
                ModelResponse::tool_calls(vec![charge("c1", 500), charge("c2", 500)]),
                ModelResponse::text("no"),
            ],
            options: ToolFailureOptions::default(),
            shown: &[("c1", GATEWAY), ("c2", CHARGE_AGAIN_AS_C1)],
            then: |_, _| {},
        },
        Repeats {
            name: "a call with other arguments gets the full text",
            prompt: "Charge",
            script: vec![
                one(charge("c1", 500)),
                one(charge("c2", 400)),
                ModelResponse::text("no"),
            ],
            options: ToolFailureOptions::default(),
            shown: &[("c1", GATEWAY), ("c2", GATEWAY)],
            then: |_, _| {},
        },
        Repeats {
            name: "the same call failing differently gets the full text",
            prompt: "Pay INV-7",
            script: vec![
                one(ToolCall::new("c1", "pay", json!({"invoice": "INV-7"}))),
                one(ToolCall::new("c2", "pay", json!({"invoice": "INV-7"}))),
                one(ToolCall::new("c3", "pay", json!({"invoice": "INV-7"}))),
                ModelResponse::text("no"),
            ],
            options: ToolFailureOptions::default(),
            shown: &[
                ("c1", "Tool 'pay' failed with PayError::Gateway"),
                ("c2", "Tool 'pay' failed with PayError::Declined"),
                (
                    "c3",
                    "Tool 'pay' failed again the same way as call 'c2' with the same arguments",
                ),
            ],
            then: |_, _| {},
        },
        Repeats {
            name: "collapsing can be turned off",
            prompt: "Charge",
            script: vec![
                one(charge("c1", 500)),
                one(charge("c2", 500)),
                ModelResponse::text("no"),
            ],
            options: ToolFailureOptions::default().collapse_repeats(false),
            shown: &[("c1", GATEWAY), ("c2", GATEWAY)],
            then: |_, _| {},
        },
    ]
}

/// What the model received is the terse line; the caller's record is complete for both calls.
fn the_terse_line_reaches_the_model_and_the_caller_keeps_everything(
    model: &ScriptedModel,
    result: &AgentResult,
) {
    assert_eq!(
        last_tool_result(&model.requests()[2]).content,
        CHARGE_AGAIN_AS_C1
    );
    let second = &result.tool_failures[1];
    assert_eq!(second.call_id, "c2");
    assert_eq!(second.kind, "GatewayError");
    assert_eq!(second.shown_to_model, CHARGE_AGAIN_AS_C1);
    assert_eq!(
        second.error.to_string(),
        "gateway returned 503 while charging 500 cents"
    );
}

#[tokio::test]
async fn a_repeated_failing_call_is_collapsed_only_when_it_repeats_exactly() {
    for case in repeats() {
        let options = case.options;
        let (model, _, result) = run(case.prompt, case.script, |agent| {
            agent.failure_options(options)
        })
        .await;
        assert_eq!(shown(&result.messages), case.shown, "{}", case.name);
        (case.then)(&model, &result);
    }
}

#[tokio::test]
async fn the_same_arguments_in_another_key_order_are_the_same_call() {
    let script = vec![
        one(ToolCall::new(
            "c1",
            "lookup_order",
            json!({"order_id": "ORD-1", "extra": true}),
        )),
        one(ToolCall::new(
            "c2",
            "lookup_order",
            json!({"extra": true, "order_id": "ORD-1"}),
        )),
        ModelResponse::text("no"),
    ];
    let (_, _, result) = run("Look up", script, defaults).await;

    let shown = shown(&result.messages);
    assert!(
        shown[0]
            .1
            .starts_with("Invalid arguments for tool 'lookup_order'"),
        "{shown:?}"
    );
    assert_eq!(
        shown[1].1,
        "Tool 'lookup_order' failed again the same way as call 'c1' with the same arguments"
    );
}

// ---- the failure limit and the turn limit ------------------------------------------------------

#[tokio::test]
async fn three_failed_calls_in_a_row_leave_one_last_turn_without_tools() {
    let script = vec![
        one(charge("c1", 500)),
        one(charge("c2", 400)),
        one(charge("c3", 300)),
        ModelResponse::text("The payment step failed; your card was not charged."),
        ModelResponse::text("never requested"),
    ];
    let (model, payments, result) = run("Charge", script, defaults).await;

    assert_eq!(result.stop_reason, StopReason::FailureLimit);
    assert_eq!(
        result.output,
        "The payment step failed; your card was not charged."
    );
    assert_eq!(result.turns, 4);
    assert_eq!(result.tool_failures.len(), 3);
    assert_eq!(payments.calls.load(Ordering::SeqCst), 3);

    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    for request in &requests[..3] {
        assert_eq!(offered(request), ["charge_card", "pay", "lookup_order"]);
    }
    // The last request offers no tools and ends with the note.
    assert_last_turn(&requests[3], TOOLS_DISABLED_AFTER_3);
    // The transcript holds the note too, and the final answer.
    let n = result.messages.len();
    assert_eq!(
        result.messages[n - 2],
        Message::user(TOOLS_DISABLED_AFTER_3)
    );
    assert_eq!(
        result.messages[n - 1].text(),
        Some("The payment step failed; your card was not charged.")
    );
}

#[tokio::test]
async fn failed_calls_of_one_turn_count_towards_the_limit() {
    let script = vec![
        ModelResponse::tool_calls(vec![
            charge("c1", 500),
            charge("c2", 400),
            charge("c3", 300),
        ]),
        ModelResponse::text("failed"),
    ];
    let (model, _, result) = run("Charge", script, defaults).await;

    assert_eq!(result.stop_reason, StopReason::FailureLimit);
    assert_last_turn(&model.requests()[1], TOOLS_DISABLED_AFTER_3);
}

#[tokio::test]
async fn a_success_resets_the_count() {
    let script = vec![
        one(charge("c1", 500)),
        one(charge("c2", 400)),
        one(lookup("c3")),
        one(charge("c4", 300)),
        one(charge("c5", 200)),
        ModelResponse::text("Charging keeps failing."),
    ];
    let (model, _, result) = run("Charge", script, defaults).await;

    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(result.output, "Charging keeps failing.");
    assert_eq!(result.tool_failures.len(), 4);
    assert!(model.requests().iter().all(|r| r.tools.len() == 3));
}

#[tokio::test]
async fn max_consecutive_failures_sets_the_limit() {
    let script = vec![one(charge("c1", 500)), ModelResponse::text("It failed.")];
    let (model, _, result) = run("Charge", script, |agent| agent.max_consecutive_failures(1)).await;

    assert_eq!(result.stop_reason, StopReason::FailureLimit);
    assert_last_turn(
        &model.requests()[1],
        "Tools are now disabled for this conversation after 1 tool calls in a row failed. \
         Do not call tools. Tell the user plainly which step failed and that it could not \
         be completed.",
    );
}

#[tokio::test]
async fn tool_calls_in_the_last_turn_are_not_run() {
    let script = vec![
        one(charge("c1", 500)),
        one(charge("c2", 400)),
        one(charge("c3", 300)),
        // The model ignores the note.
        one(lookup("c4")).with_text("Let me look it up."),
    ];
    let (_, payments, result) = run("Charge", script, defaults).await;

    assert_eq!(result.stop_reason, StopReason::FailureLimit);
    assert_eq!(result.output, "Let me look it up.");
    assert!(result.answered);
    assert_eq!(payments.calls.load(Ordering::SeqCst), 3);
    // The call of the last turn is not run, but answered: every call has its result.
    let results = tool_results(&result.messages);
    assert_eq!(results.len(), 4);
    assert_eq!(
        (results[3].call_id.as_str(), results[3].is_error),
        ("c4", true)
    );
    assert_eq!(
        results[3].content,
        "Tool 'lookup_order' was not run: tools are disabled for the rest of this conversation"
    );
    let last = result.tool_failures.last().unwrap();
    assert_eq!(
        (last.call_id.as_str(), last.kind.as_str()),
        ("c4", "tools_disabled")
    );
}

#[tokio::test]
async fn max_turns_leaves_one_last_turn_without_tools() {
    let script = vec![
        one(lookup("c1")),
        one(lookup("c2")),
        ModelResponse::text("I found the order but ran out of turns."),
        ModelResponse::text("never requested"),
    ];
    let (model, _, result) = run("Find it", script, |agent| agent.max_turns(3)).await;

    assert_eq!(result.stop_reason, StopReason::TurnLimit);
    assert_eq!(result.turns, 3);
    assert_eq!(result.output, "I found the order but ran out of turns.");
    assert!(result.tool_failures.is_empty());
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].tools.len(), 3);
    assert_last_turn(&requests[2], TURN_LIMIT);
}

#[tokio::test]
async fn the_failure_limit_comes_before_the_turn_limit() {
    let script = vec![
        one(charge("c1", 500)),
        one(charge("c2", 400)),
        ModelResponse::text("failed"),
    ];
    let (model, _, result) = run("Charge", script, |agent| {
        agent.max_consecutive_failures(2).max_turns(3)
    })
    .await;

    assert_eq!(result.stop_reason, StopReason::FailureLimit);
    assert!(
        model.requests()[2]
            .messages
            .last()
            .and_then(Message::text)
            .is_some_and(|t| t.starts_with("Tools are now disabled"))
    );
}

#[tokio::test]
async fn the_default_turn_limit_is_sixteen() {
    let script = (1..=20).map(|i| one(lookup(&format!("c{i}")))).collect();
    let (model, _, result) = run("Loop", script, defaults).await;

    assert_eq!(result.stop_reason, StopReason::TurnLimit);
    assert_eq!(result.turns, 16);
    let requests = model.requests();
    assert_eq!(requests.len(), 16);
    assert!(requests[..15].iter().all(|r| !r.tools.is_empty()));
    assert!(requests[15].tools.is_empty());
}

#[tokio::test]
async fn zero_limits_are_refused() {
    let error = Agent::builder(ScriptedModel::default())
        .max_turns(0)
        .build()
        .unwrap_err();
    assert_eq!(error.to_string(), "`max_turns` must be at least 1");

    let error = Agent::builder(ScriptedModel::default())
        .max_consecutive_failures(0)
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`max_consecutive_failures` must be at least 1"
    );

    let error = Agent::builder(ScriptedModel::default())
        .max_calls_per_turn(0)
        .build()
        .unwrap_err();
    assert_eq!(error.to_string(), "`max_calls_per_turn` must be at least 1");
}

// ---- the calls of one response -----------------------------------------------------------------

/// `n` calls of `lookup_order`, `c0`, `c1`, …
fn lookups(n: usize) -> Vec<ToolCall> {
    (0..n).map(|i| lookup(&format!("c{i}"))).collect()
}

/// The model error that ended `run`, with what the run had.
fn model_error(run: Result<AgentResult, AgentError>) -> (ModelError, AgentResult) {
    match run {
        Err(AgentError::Model { error, partial }) => (error, *partial),
        other => panic!("the run did not end with a model error: {other:?}"),
    }
}

/// What a run ended by a refused response has: the run before that response, nothing of it.
fn nothing_of_the_response(partial: &AgentResult, payments: &Payments) {
    assert_eq!(payments.calls.load(Ordering::SeqCst), 0, "a call ran");
    assert!(partial.tool_failures.is_empty());
    assert!(partial.effects.is_empty());
    assert!(partial.pending.is_empty());
    assert_eq!(partial.messages, [Message::user("Look everything up")]);
    assert_eq!(partial.turns, 0);
    assert!(partial.state.is_some(), "the run can go on from before it");
}

#[tokio::test]
async fn a_response_with_20000_calls_is_refused_and_none_of_them_runs() {
    // One response asked for 20,000 calls: the tool ran 20,000 times in one turn.
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(lookups(20_000)),
        ModelResponse::text("never requested"),
    ]);
    let payments = Arc::new(Payments::default());
    let agent = Agent::builder(model.clone())
        .toolbox(Arc::clone(&payments))
        .build()
        .unwrap();
    let (error, partial) = model_error(agent.run("Look everything up").await);

    assert_eq!(
        error.message(),
        "the model asked for 20000 tool calls in one response, more than the 128 one turn may \
         run (`max_calls_per_turn`); none of them was run"
    );
    assert!(!error.is_retryable());
    nothing_of_the_response(&partial, &payments);
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn the_default_limit_is_128_calls() {
    let script = vec![
        ModelResponse::tool_calls(lookups(128)),
        ModelResponse::text("Found them."),
    ];
    let (_, payments, result) = run("Look everything up", script, defaults).await;
    assert_eq!(result.output, "Found them.");
    assert_eq!(payments.calls.load(Ordering::SeqCst), 128);

    let model = ScriptedModel::new(vec![ModelResponse::tool_calls(lookups(129))]);
    let payments = Arc::new(Payments::default());
    let agent = Agent::builder(model)
        .toolbox(Arc::clone(&payments))
        .build()
        .unwrap();
    let (error, partial) = model_error(agent.run("Look everything up").await);
    assert!(
        error
            .message()
            .starts_with("the model asked for 129 tool calls"),
        "{error}"
    );
    nothing_of_the_response(&partial, &payments);
}

#[tokio::test]
async fn max_calls_per_turn_is_checked_before_approvals_and_the_run_goes_on_after_it() {
    // Over the limit: refused before a person is asked about the call that needs approval.
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![lookup("c0"), charge("c1", 500), lookup("c2")]),
        ModelResponse::tool_calls(vec![lookup("c3"), lookup("c4")]),
        ModelResponse::text("Found it."),
    ]);
    let payments = Arc::new(Payments::default());
    let agent = Agent::builder(model.clone())
        .toolbox(Arc::clone(&payments))
        .require_approval("charge_card")
        .max_calls_per_turn(2)
        .build()
        .unwrap();
    let (error, partial) = model_error(agent.run("Look everything up").await);
    assert_eq!(
        error.message(),
        "the model asked for 3 tool calls in one response, more than the 2 one turn may run \
         (`max_calls_per_turn`); none of them was run"
    );
    nothing_of_the_response(&partial, &payments);

    // As after any failed model call, the run goes on from its state: the model is asked
    // again, and a response within the limit runs.
    let state = partial.state.unwrap();
    let result = agent.resume(state, Decisions::new()).await.unwrap();
    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(result.output, "Found it.");
    assert_eq!(payments.calls.load(Ordering::SeqCst), 2);
    assert_eq!(model.requests().len(), 3);
}

/// A model whose answer streams `calls` calls of `lookup_order`, each made as it is read
/// (counted in `read`), then `Completed` with all of them.
struct ManyCalls {
    calls: usize,
    read: Arc<AtomicUsize>,
}

impl Model for ManyCalls {
    fn complete<'a>(
        &'a self,
        _request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async { Err(ModelError::new("this model only streams")) })
    }

    fn stream<'a>(
        &'a self,
        _request: &'a ModelRequest,
    ) -> BoxStream<'a, Result<ModelEvent, ModelError>> {
        let read = Arc::clone(&self.read);
        let calls = (0..self.calls).flat_map(move |index| {
            read.fetch_add(1, Ordering::SeqCst);
            [
                ModelEvent::ToolCallStarted {
                    index,
                    id: format!("c{index}"),
                    name: "lookup_order".into(),
                },
                ModelEvent::ToolCallDelta {
                    index,
                    arguments: "{\"order_id\": \"ORD-1042\"}".into(),
                },
            ]
        });
        let n = self.calls;
        let completed =
            stream::once(
                async move { ModelEvent::Completed(ModelResponse::tool_calls(lookups(n))) },
            );
        stream::iter(calls).chain(completed).map(Ok).boxed()
    }
}

#[tokio::test]
async fn a_streamed_response_is_not_read_past_the_limit() {
    let read = Arc::new(AtomicUsize::new(0));
    let model = ManyCalls {
        calls: 10_000,
        read: Arc::clone(&read),
    };
    let payments = Arc::new(Payments::default());
    let agent = Agent::builder(model)
        .toolbox(Arc::clone(&payments))
        .build()
        .unwrap();
    let events: Vec<AgentEvent> = agent.run_stream("Look everything up").collect().await;

    // the call past the limit was the last one read
    assert_eq!(read.load(Ordering::SeqCst), 129);
    let requested: Vec<usize> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolCallRequested { index, .. } => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(requested, (0..128).collect::<Vec<_>>());
    assert!(
        !events.iter().any(|e| matches!(
            e,
            AgentEvent::ModelResponded { .. } | AgentEvent::ToolStarted { .. }
        )),
        "{events:?}"
    );
    let Some(AgentEvent::Finished(result)) = events.into_iter().last() else {
        panic!("the stream does not end with Finished");
    };
    let (error, partial) = model_error(result);
    assert_eq!(
        error.message(),
        "the model asked for more than 128 tool calls in one response, the most one turn may \
         run (`max_calls_per_turn`); none of them was run"
    );
    nothing_of_the_response(&partial, &payments);
}
