//! An answer with more tool calls than anyone should run, from both providers: a stream of
//! 100,000 calls is refused at `max_tool_calls` (default 1024) and not read further, a whole
//! body over it is refused, and an agent stops reading a stream at its own
//! `max_calls_per_turn` (default 128), so that none of the calls runs.
//!
//! That reading a stream is linear in its calls is shown by the `stream_calls` bench.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use reticent::providers::__fuzz::read_openai_stream;
use reticent::providers::anthropic::Anthropic;
use reticent::providers::openai::OpenAi;
use reticent::{Agent, AgentError, AgentEvent, Model, model::ModelEvent};
use reticent_tests::provider::stream::{collect, request};
use reticent_tests::provider::{Reply, StreamEnd, TestServer, anthropic, openai};
use serde_json::{Value, json};

/// The calls of the streams that are too long.
const MANY: usize = 100_000;

/// The bytes the server writes at a time.
const PIECE: usize = 16 << 10;

/// How one provider's API spells an answer of `n` calls of `lookup_order`.
struct Calls<M> {
    model: fn(&TestServer) -> M,
    /// As a stream of events.
    stream: fn(usize) -> String,
    /// As one JSON body.
    whole: fn(usize) -> String,
    max_tool_calls: fn(M, usize) -> M,
}

const ARGUMENTS: &str = "{\"order_id\": \"ORD-1042\"}";

/// The number in a call's events that [`repeat`] replaces with the call's own.
const N: usize = 987_654_321;

/// `events` (of call [`N`]) for each of `n` calls, numbered 0, 1, 2, …: made once and copied,
/// as building 100,000 JSON values would take seconds in a debug build.
fn repeat(events: &str, n: usize) -> String {
    (0..n)
        .map(|i| events.replace(&N.to_string(), &i.to_string()))
        .collect()
}

fn openai_chunk(delta: Value, finish_reason: Option<&str>) -> String {
    let chunk = json!({"object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]});
    format!("data: {chunk}\n\n")
}

fn openai_calls() -> Calls<OpenAi> {
    Calls {
        model: openai,
        stream: |n| {
            let call = openai_chunk(
                json!({"tool_calls": [{"index": N, "id": format!("call_{N}"),
                    "type": "function", "function": {"name": "lookup_order", "arguments": ""}}]}),
                None,
            ) + &openai_chunk(
                json!({"tool_calls": [{"index": N, "function": {"arguments": ARGUMENTS}}]}),
                None,
            );
            repeat(&call, n) + &openai_chunk(json!({}), Some("tool_calls")) + "data: [DONE]\n\n"
        },
        whole: |n| {
            let calls: Vec<Value> = (0..n)
                .map(|i| {
                    json!({"id": format!("call_{i}"), "type": "function",
                        "function": {"name": "lookup_order", "arguments": ARGUMENTS}})
                })
                .collect();
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": null, "tool_calls": calls}}]})
            .to_string()
        },
        max_tool_calls: OpenAi::max_tool_calls,
    }
}

fn anthropic_event(data: Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

fn anthropic_calls() -> Calls<Anthropic> {
    Calls {
        model: anthropic,
        stream: |n| {
            let call = anthropic_event(json!({"type": "content_block_start", "index": N,
                "content_block": {"type": "tool_use", "id": format!("toolu_{N}"),
                                  "name": "lookup_order", "input": {}}}))
                + &anthropic_event(json!({"type": "content_block_delta", "index": N,
                    "delta": {"type": "input_json_delta", "partial_json": ARGUMENTS}}))
                + &anthropic_event(json!({"type": "content_block_stop", "index": N}));
            anthropic_event(json!({"type": "message_start",
                "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}))
                + &repeat(&call, n)
                + &anthropic_event(json!({"type": "message_delta",
                "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}))
                + &anthropic_event(json!({"type": "message_stop"}))
        },
        whole: |n| {
            let blocks: Vec<Value> = (0..n)
                .map(|i| {
                    json!({"type": "tool_use", "id": format!("toolu_{i}"),
                        "name": "lookup_order", "input": {"order_id": "ORD-1042"}})
                })
                .collect();
            json!({"type": "message", "role": "assistant", "content": blocks,
                "usage": {"input_tokens": 10, "output_tokens": 5}})
            .to_string()
        },
        max_tool_calls: Anthropic::max_tool_calls,
    }
}

/// The stream of `body`, written in pieces of [`PIECE`] bytes, and how many pieces it has.
fn stream_reply(body: String) -> (Reply, usize) {
    let pieces = body.len().div_ceil(PIECE);
    (Reply::events(body).in_pieces(PIECE, Duration::ZERO), pieces)
}

/// The server saw the client close the stream long before its end.
async fn closed_early(server: &TestServer, total: usize) {
    let ends = server.streams_ended(1).await;
    let [StreamEnd::ClientClosed { pieces }] = ends[..] else {
        panic!("the client read the whole stream: {ends:?}");
    };
    assert!(
        pieces < total / 2,
        "the server wrote {pieces} of {total} pieces"
    );
}

const TOO_MANY: &str = "the answer has more than 1024 tool calls; raise `max_tool_calls` if the \
                        provider's answers can have that many";

/// A stream of 100,000 calls ends with an error at the call past `max_tool_calls`, after
/// passing on the calls before it; it is not retried, and not read further.
async fn a_stream_is_refused_past_max_tool_calls<M: Model>(calls: Calls<M>) {
    let (reply, total) = stream_reply((calls.stream)(MANY));
    let server = TestServer::start(vec![reply]).await;
    let model = (calls.model)(&server);
    let (events, error) = collect(model.stream(&request())).await;
    let error = error.expect("the stream is refused");
    assert!(error.message().ends_with(TOO_MANY), "{error}");
    assert!(!error.is_retryable());
    let started = events
        .iter()
        .filter(|e| matches!(e, ModelEvent::ToolCallStarted { .. }))
        .count();
    assert_eq!(started, 1024);
    assert!(!events.iter().any(|e| matches!(e, ModelEvent::Completed(_))));
    closed_early(&server, total).await;
    assert_eq!(server.received().len(), 1);
}

/// A whole answer over `max_tool_calls` is refused by `complete`, and by `stream` when the
/// server answers it with one JSON body; `max_tool_calls` raises the limit.
async fn a_whole_answer_is_refused_past_max_tool_calls<M: Model>(calls: Calls<M>) {
    let body = (calls.whole)(1025);
    let server = TestServer::start(vec![
        Reply::json(body.clone()),
        Reply::json(body.clone()),
        Reply::json(body),
    ])
    .await;
    let model = (calls.model)(&server);
    let refused = "the answer has 1025 tool calls, more than 1024; raise `max_tool_calls` if the \
                   provider's answers can have that many";
    let error = model.complete(&request()).await.unwrap_err();
    assert_eq!(error.message(), refused);
    let (events, error) = collect(model.stream(&request())).await;
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(error.expect("the stream is refused").message(), refused);
    assert_eq!(server.received().len(), 2, "not retried");

    let raised = (calls.max_tool_calls)((calls.model)(&server), 1025);
    let response = raised.complete(&request()).await.unwrap();
    assert_eq!(response.tool_calls.len(), 1025);
}

/// Look up an order.
#[reticent::tool(read_only)]
fn lookup_order(order_id: String) -> String {
    LOOKUPS.fetch_add(1, Ordering::SeqCst);
    format!("{order_id}: 1 lamp")
}

/// Calls of `lookup_order`, in every test of this module.
static LOOKUPS: AtomicUsize = AtomicUsize::new(0);

/// An agent streaming the answer stops reading it at the call past `max_calls_per_turn`,
/// long before the provider's own limit, and runs none of its calls.
async fn an_agent_stops_reading_at_max_calls_per_turn<M: Model>(calls: Calls<M>) {
    let (reply, total) = stream_reply((calls.stream)(MANY));
    let server = TestServer::start(vec![reply]).await;
    let agent = Agent::builder((calls.model)(&server))
        .tool(LookupOrder)
        .build()
        .unwrap();
    let before = LOOKUPS.load(Ordering::SeqCst);
    let events: Vec<AgentEvent> = agent.run_stream("Look everything up").collect().await;
    let requested = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolCallRequested { .. }))
        .count();
    assert_eq!(requested, 128);
    let Some(AgentEvent::Finished(Err(AgentError::Model { error, partial }))) = events.last()
    else {
        panic!(
            "the run did not end with a model error: {:?}",
            events.last()
        );
    };
    assert_eq!(
        error.message(),
        "the model asked for more than 128 tool calls in one response, the most one turn may \
         run (`max_calls_per_turn`); none of them was run"
    );
    assert!(partial.tool_failures.is_empty());
    assert_eq!(partial.messages.len(), 1, "only the user's message");
    closed_early(&server, total).await;
    assert_eq!(LOOKUPS.load(Ordering::SeqCst), before, "a call ran");
}

#[tokio::test]
async fn openai_a_stream_is_refused_past_max_tool_calls() {
    a_stream_is_refused_past_max_tool_calls(openai_calls()).await;
}

#[tokio::test]
async fn anthropic_a_stream_is_refused_past_max_tool_calls() {
    a_stream_is_refused_past_max_tool_calls(anthropic_calls()).await;
}

#[tokio::test]
async fn openai_a_whole_answer_is_refused_past_max_tool_calls() {
    a_whole_answer_is_refused_past_max_tool_calls(openai_calls()).await;
}

#[tokio::test]
async fn anthropic_a_whole_answer_is_refused_past_max_tool_calls() {
    a_whole_answer_is_refused_past_max_tool_calls(anthropic_calls()).await;
}

#[tokio::test]
async fn openai_an_agent_stops_reading_at_max_calls_per_turn() {
    an_agent_stops_reading_at_max_calls_per_turn(openai_calls()).await;
}

#[tokio::test]
async fn anthropic_an_agent_stops_reading_at_max_calls_per_turn() {
    an_agent_stops_reading_at_max_calls_per_turn(anthropic_calls()).await;
}

/// Calls that never get a name never start, but count: the fragments of a new `index` past
/// `max_tool_calls` are refused too, rather than held.
#[test]
fn openai_calls_that_never_start_count_towards_max_tool_calls() {
    let body: String = (0..5)
        .map(|i| {
            openai_chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": "{}"}}]}),
                None,
            )
        })
        .collect();
    let events = read_openai_stream(body.as_bytes(), body.len(), 1 << 20, 1 << 20, 4);
    let [Err(error)] = &events[..] else {
        panic!("not refused: {events:?}");
    };
    assert_eq!(
        error.message(),
        "the answer has more than 4 tool calls; raise `max_tool_calls` if the provider's \
         answers can have that many"
    );
}
