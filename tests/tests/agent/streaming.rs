//! `run_stream` over each provider's server-sent events, on a loopback server that sends the
//! providers' documented event sequences: the model's text arrives as `TextDelta`s, in order,
//! then the tool round trip, then the final answer; a run cancelled mid-stream stops the HTTP
//! stream and keeps what was streamed; a stream cut mid-way is asked again as a turn, after
//! `TurnRestarted`, or with the retry off is a model error with the partial record.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures::StreamExt;
use reticent::providers::anthropic::Anthropic;
use reticent::providers::openai::OpenAi;
use reticent::{Agent, AgentError, AgentEvent, AgentResult, CancellationToken, Model, RunOptions};
use reticent_tests::provider::{Reply, StreamEnd, TestServer, fixture};

/// A secret in the charge's error: the caller gets it, no request to the model carries it.
const CANARY: &str = "CANARY-5e21c0";

#[derive(Debug, thiserror::Error)]
#[error("gateway refused: postgres://pay:{CANARY}@10.0.0.7/pay")]
struct GatewayError;

#[derive(Default)]
struct Shop {
    charges: AtomicU32,
}

#[reticent::tools]
impl Shop {
    /// Look up an order.
    #[tool(read_only)]
    async fn lookup_order(&self, order_id: String, note: String) -> String {
        format!("{order_id} ({note}): shipped")
    }

    /// Charge the card.
    #[tool]
    async fn charge_card(&self, amount_cents: u64) -> Result<String, GatewayError> {
        let _ = amount_cents;
        self.charges.fetch_add(1, Ordering::SeqCst);
        Err(GatewayError)
    }
}

/// The answer's text deltas, as the fixtures send them.
const ANSWER: [&str; 6] = [
    "Order",
    " ORD",
    "-1042 has",
    " shipped.",
    " The charge did not go through",
    ", so nothing was billed.",
];

struct Provider {
    name: &'static str,
    /// The events of the first turn, which calls the tools, as `describe` writes them.
    first_turn: &'static [&'static str],
    model: fn(&TestServer) -> Arc<dyn Model>,
    tool_calls: &'static str,
    text: &'static str,
}

fn providers() -> [Provider; 2] {
    [
        Provider {
            name: "openai",
            first_turn: &[
                "requested 1: lookup_order call_abc123",
                "requested 1: charge_card call_def456",
            ],
            model: |server| Arc::new(openai(server)),
            tool_calls: "openai/stream_tool_calls.sse",
            text: "openai/stream_text.sse",
        },
        Provider {
            name: "anthropic",
            first_turn: &[
                "text 1: I'll look up",
                "text 1:  the order and charge the card.",
                "requested 1: lookup_order toolu_01A09q90qw90lq917835lq9",
                "requested 1: charge_card toolu_01B3XkLm7Qp9Rz2VwYt8HnJc",
            ],
            model: |server| Arc::new(anthropic(server)),
            tool_calls: "anthropic/stream_tool_use.sse",
            text: "anthropic/stream_text.sse",
        },
    ]
}

fn openai(server: &TestServer) -> OpenAi {
    reticent_tests::provider::openai(server)
        .max_retries(2)
        .retry_delay(Duration::from_millis(10))
}

fn anthropic(server: &TestServer) -> Anthropic {
    reticent_tests::provider::anthropic(server)
        .max_retries(2)
        .retry_delay(Duration::from_millis(10))
}

fn agent(model: Arc<dyn Model>, shop: &Arc<Shop>) -> Agent {
    Agent::builder(model)
        .toolbox(Arc::clone(shop))
        .build()
        .unwrap()
}

/// A compact name for each event, for checking their order.
fn describe(event: &AgentEvent) -> String {
    match event {
        AgentEvent::TextDelta { turn, text } => format!("text {turn}: {text}"),
        AgentEvent::ToolCallRequested { turn, id, name, .. } => {
            format!("requested {turn}: {name} {id}")
        }
        AgentEvent::ModelResponded { turn, .. } => format!("model {turn}"),
        AgentEvent::ToolStarted { call } => format!("started {}", call.name),
        AgentEvent::ToolSucceeded { tool, .. } => format!("succeeded {tool}"),
        AgentEvent::ToolFailed(failure) => format!("failed {}", failure.tool),
        AgentEvent::Finished(Ok(_)) => "finished ok".into(),
        AgentEvent::Finished(Err(_)) => "finished err".into(),
        other => format!("{other:?}"),
    }
}

fn finished(events: &[AgentEvent]) -> &Result<AgentResult, AgentError> {
    match events.last() {
        Some(AgentEvent::Finished(result)) => result,
        other => panic!("the last event is not Finished: {other:?}"),
    }
}

#[tokio::test]
async fn text_streams_in_order_then_the_tool_round_trip_then_the_answer() {
    for provider in providers() {
        let server = TestServer::start(vec![
            Reply::events(fixture(provider.tool_calls)).in_pieces(7, Duration::ZERO),
            Reply::events(fixture(provider.text)).per_event(Duration::from_millis(5)),
        ])
        .await;
        let shop = Arc::new(Shop::default());
        let events: Vec<AgentEvent> = agent((provider.model)(&server), &shop)
            .run_stream("Where is ORD-1042? Then charge it.")
            .collect()
            .await;

        let mut expected: Vec<String> = provider
            .first_turn
            .iter()
            .map(|e| (*e).to_owned())
            .collect();
        expected.extend([
            "model 1".to_owned(),
            "started lookup_order".to_owned(),
            "started charge_card".to_owned(),
            "succeeded lookup_order".to_owned(),
            "failed charge_card".to_owned(),
        ]);
        expected.extend(ANSWER.iter().map(|delta| format!("text 2: {delta}")));
        expected.extend(["model 2".to_owned(), "finished ok".to_owned()]);
        let told: Vec<String> = events.iter().map(describe).collect();
        assert_eq!(told, expected, "{}", provider.name);

        let result = finished(&events).as_ref().unwrap();
        assert_eq!(result.output, ANSWER.concat(), "{}", provider.name);
        assert!(result.answered);
        // the arguments arrived in fragments, split inside characters; the call ran with them
        assert_eq!(
            result
                .messages
                .iter()
                .filter_map(|m| m.text())
                .find(|t| t.contains("shipped")),
            Some("ORD-1042 (Zürich 日本 🦀): shipped"),
            "{}",
            provider.name
        );
        assert_eq!(shop.charges.load(Ordering::SeqCst), 1);
        // The caller has the charge's whole error; the model was told its kind only.
        let failure = &result.tool_failures[0];
        assert!(failure.error_chain().contains(CANARY));
        assert_eq!(
            failure.shown_to_model,
            "Tool 'charge_card' failed with GatewayError"
        );
        for request in server.received() {
            assert!(!request.text().contains(CANARY), "{}", provider.name);
        }
        for event in &events[..events.len() - 1] {
            assert!(
                !format!("{event:?}").contains(CANARY)
                    || matches!(event, AgentEvent::ToolFailed(_))
            );
        }
    }
}

#[tokio::test]
async fn a_run_cancelled_mid_stream_stops_the_stream_and_keeps_what_was_streamed() {
    for provider in providers() {
        let server = TestServer::start(vec![
            Reply::events(fixture(provider.text)).per_event(Duration::from_millis(300)),
        ])
        .await;
        let shop = Arc::new(Shop::default());
        let token = CancellationToken::new();
        let mut events = agent((provider.model)(&server), &shop).run_stream_with(
            "Where is ORD-1042?",
            RunOptions::default().cancellation(token.clone()),
        );
        let mut streamed = String::new();
        let result = loop {
            match events.next().await.expect("the stream ends with Finished") {
                AgentEvent::TextDelta { text, .. } => {
                    streamed.push_str(&text);
                    // the first piece of text is enough: the user pressed stop
                    token.cancel();
                }
                AgentEvent::Finished(result) => break result,
                _ => {}
            }
        };
        assert!(events.next().await.is_none());

        let Err(AgentError::Cancelled { partial }) = result else {
            panic!("{}: expected Cancelled, got {result:?}", provider.name);
        };
        assert_eq!(streamed, "Order", "{}", provider.name);
        assert_eq!(partial.output, streamed);
        assert!(!partial.answered);
        // The unfinished turn is not in the transcript: the history stays valid.
        assert_eq!(partial.messages.len(), 1);

        // The server sees the connection closed long before the stream would have ended (it
        // has more than a dozen events left, 300 ms apart).
        let seen = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                if let Some(end) = server.streams().first().copied() {
                    break end;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the server saw the stream end");
        let StreamEnd::ClientClosed { pieces } = seen else {
            panic!(
                "{}: expected the client to close, got {seen:?}",
                provider.name
            );
        };
        assert!(
            pieces < 8,
            "{}: {pieces} pieces were written",
            provider.name
        );
    }
}

#[tokio::test]
async fn a_stream_cut_mid_way_is_asked_again_as_a_turn_after_turn_restarted() {
    for provider in providers() {
        let body = fixture(provider.text);
        // cut in the middle of the answer
        let cut = body.find(" shipped.").expect("the fixture");
        let server = TestServer::start(vec![
            Reply::events(fixture(provider.tool_calls)),
            Reply::events(body).cut_after(cut),
            Reply::events(fixture(provider.text)),
        ])
        .await;
        let shop = Arc::new(Shop::default());
        let events: Vec<AgentEvent> = agent((provider.model)(&server), &shop)
            .run_stream("Where is ORD-1042? Then charge it.")
            .collect()
            .await;

        let result = finished(&events)
            .as_ref()
            .expect("the retried turn completes");
        assert_eq!(result.output, ANSWER.concat(), "{}", provider.name);
        assert_eq!(server.received().len(), 3, "{}", provider.name);
        // The restart comes after what the broken attempt streamed and before the retried
        // turn's events; the turn's text is then streamed whole.
        let restart = events
            .iter()
            .position(|e| {
                matches!(
                    e,
                    AgentEvent::TurnRestarted {
                        turn: 2,
                        attempt: 2,
                        ..
                    }
                )
            })
            .unwrap_or_else(|| panic!("{}: no restart", provider.name));
        let text_of = |events: &[AgentEvent]| -> String {
            events
                .iter()
                .filter_map(|event| match event {
                    AgentEvent::TextDelta { turn: 2, text } => Some(text.as_str()),
                    _ => None,
                })
                .collect()
        };
        let before = text_of(&events[..restart]);
        assert!(
            before.starts_with("Order") && before != ANSWER.concat(),
            "{before:?}"
        );
        assert_eq!(
            text_of(&events[restart..]),
            ANSWER.concat(),
            "{}",
            provider.name
        );
        let AgentEvent::TurnRestarted { reason, .. } = &events[restart] else {
            unreachable!()
        };
        assert!(reason.message().contains("broke off"), "{reason}");
        assert!(reason.is_retryable());
        // One assistant message per turn, the usage of the attempts that completed, and the
        // charge made once.
        let assistant = result
            .messages
            .iter()
            .filter(|m| matches!(m, reticent::Message::Assistant { .. }))
            .count();
        assert_eq!((assistant, result.turns), (2, 2), "{}", provider.name);
        assert_eq!(result.trajectory.len(), 2);
        let clean = TestServer::start(vec![
            Reply::events(fixture(provider.tool_calls)),
            Reply::events(fixture(provider.text)),
        ])
        .await;
        let unbroken: Vec<AgentEvent> = agent((provider.model)(&clean), &Arc::new(Shop::default()))
            .run_stream("Where is ORD-1042? Then charge it.")
            .collect()
            .await;
        let unbroken = finished(&unbroken).as_ref().unwrap();
        assert_eq!(result.usage, unbroken.usage, "{}", provider.name);
        assert_eq!(shop.charges.load(Ordering::SeqCst), 1, "{}", provider.name);
    }
}

#[tokio::test]
async fn with_the_retry_off_a_stream_cut_mid_way_is_a_model_error_with_the_partial_record() {
    for provider in providers() {
        let body = fixture(provider.text);
        // cut in the middle of the answer
        let cut = body.find(" shipped.").expect("the fixture");
        let server = TestServer::start(vec![
            Reply::events(fixture(provider.tool_calls)),
            Reply::events(body).cut_after(cut),
            Reply::events(fixture(provider.text)),
        ])
        .await;
        let shop = Arc::new(Shop::default());
        let events: Vec<AgentEvent> = Agent::builder((provider.model)(&server))
            .toolbox(Arc::clone(&shop))
            .retry_broken_turns(false)
            .build()
            .unwrap()
            .run_stream("Where is ORD-1042? Then charge it.")
            .collect()
            .await;

        let Err(AgentError::Model { error, partial }) = finished(&events) else {
            panic!(
                "{}: expected a model error, got {:?}",
                provider.name,
                finished(&events)
            );
        };
        assert!(
            error.message().contains("broke off"),
            "{}: {error}",
            provider.name
        );
        // Worth retrying as a turn, which this agent does not do; the stream itself never
        // retries once the model had been heard from.
        assert!(error.is_retryable());
        assert_eq!(server.received().len(), 2, "{}", provider.name);
        // What was streamed of the answer before the cut is the partial output.
        let streamed: String = events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::TextDelta { turn: 2, text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert!(
            streamed.starts_with("Order"),
            "{}: {streamed:?}",
            provider.name
        );
        assert!(ANSWER.concat().starts_with(&streamed) && streamed != ANSWER.concat());
        assert_eq!(partial.output, streamed, "{}", provider.name);
        assert!(!partial.answered);
        // The first turn and its tool results are kept: a valid history to continue from.
        assert_eq!(partial.turns, 1);
        assert_eq!(partial.tool_failures.len(), 1);
        let results = partial
            .messages
            .iter()
            .filter(|m| matches!(m, reticent::Message::Tool(_)))
            .count();
        assert_eq!(results, 2, "{}", provider.name);
    }
}
