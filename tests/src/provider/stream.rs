//! Streaming: collecting a model's stream, checking the contract of `Model::stream` on what
//! it yielded, and the scenarios every streaming provider must pass, written once against a
//! [`Wire`] that says how the provider's API spells a stream.

use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use reticent::{Message, Model, ModelError, ModelRequest, ModelResponse, Usage, model::ModelEvent};
use serde_json::Value;

use super::{Received, Reply, StreamEnd, TestServer, fixture};

/// A request with no tools.
pub fn request() -> ModelRequest {
    ModelRequest {
        system: None,
        messages: vec![Message::user("Where is order ORD-1042?")],
        tools: Vec::new(),
    }
}

/// Everything a stream yielded: its events and the error that ended it, if one did. Checks
/// that nothing follows an error, and that the ended stream stays ended.
pub async fn collect(
    mut stream: BoxStream<'_, Result<ModelEvent, ModelError>>,
) -> (Vec<ModelEvent>, Option<ModelError>) {
    let mut events = Vec::new();
    let mut error = None;
    while let Some(item) = stream.next().await {
        assert!(error.is_none(), "an item after the error: {item:?}");
        match item {
            Ok(event) => events.push(event),
            Err(e) => error = Some(e),
        }
    }
    assert!(
        stream.next().await.is_none(),
        "the stream yields after its end"
    );
    (events, error)
}

/// Collects a stream that must succeed, checks the contract on its events, and returns them
/// with the final response.
pub async fn streamed(
    stream: BoxStream<'_, Result<ModelEvent, ModelError>>,
) -> (Vec<ModelEvent>, ModelResponse) {
    let (events, error) = collect(stream).await;
    if let Some(error) = error {
        panic!("the stream failed after {events:?}: {error}");
    }
    let response = check_contract(&events).clone();
    (events, response)
}

/// Checks what `Model::stream` promises of a stream that succeeded, and returns its
/// `Completed` response: `Completed` comes last and once; its text is the text deltas
/// concatenated; calls start once each, numbered 0, 1, 2, … in order, before any of their
/// deltas; each call's arguments are its deltas concatenated, read as `complete` reads them.
pub fn check_contract(events: &[ModelEvent]) -> &ModelResponse {
    let Some((ModelEvent::Completed(response), before)) = events.split_last() else {
        panic!("the last event is not Completed: {events:?}");
    };
    let mut text = String::new();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for event in before {
        match event {
            ModelEvent::TextDelta(delta) => {
                assert!(!delta.is_empty(), "an empty text delta");
                text.push_str(delta);
            }
            ModelEvent::ToolCallStarted { index, id, name } => {
                assert_eq!(*index, calls.len(), "calls start in order: {events:?}");
                calls.push((id.clone(), name.clone(), String::new()));
            }
            ModelEvent::ToolCallDelta { index, arguments } => {
                let call = calls
                    .get_mut(*index)
                    .unwrap_or_else(|| panic!("a delta of call {index} before it started"));
                call.2.push_str(arguments);
            }
            ModelEvent::Completed(_) => panic!("Completed before the end: {events:?}"),
            other => panic!("an event this test does not know: {other:?}"),
        }
    }
    assert_eq!(response.text.clone().unwrap_or_default(), text);
    assert_eq!(response.tool_calls.len(), calls.len());
    for (call, (id, name, arguments)) in response.tool_calls.iter().zip(&calls) {
        assert_eq!(&call.id, id);
        assert_eq!(&call.name, name);
        let expected = if arguments.trim().is_empty() {
            serde_json::json!({})
        } else {
            serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.clone()))
        };
        assert_eq!(call.arguments, expected, "the arguments of call {id}");
    }
    response
}

/// The text deltas among `events`.
pub fn text_deltas(events: &[ModelEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The text deltas of both providers' `stream_text.sse` fixtures.
pub const FIXTURE_TEXT: [&str; 6] = [
    "Order",
    " ORD",
    "-1042 has",
    " shipped.",
    " The charge did not go through",
    ", so nothing was billed.",
];

/// Streams the `{provider}/stream_text.sse` fixture, one event a piece, then completes the
/// same request: the text deltas come in order, and `Completed` holds the text and `usage`.
/// Returns the streamed request and the body of the completed one.
pub async fn the_text_fixture_streams<M: Model>(
    model: fn(&TestServer) -> M,
    provider: &str,
    usage: Usage,
) -> (Received, Value) {
    let server = TestServer::start(vec![
        Reply::events(fixture(&format!("{provider}/stream_text.sse")))
            .per_event(Duration::from_millis(2)),
        Reply::json(fixture(&format!("{provider}/response_text.json"))),
    ])
    .await;
    let model = model(&server);
    let (events, response) = streamed(model.stream(&request())).await;
    assert_eq!(text_deltas(&events), FIXTURE_TEXT);
    assert_eq!(
        response,
        ModelResponse::text(FIXTURE_TEXT.concat()).with_usage(usage)
    );
    model.complete(&request()).await.unwrap();
    let received = server.received();
    assert_eq!(received[0].header("accept"), Some("text/event-stream"));
    (received[0].clone(), received[1].json())
}

/// The reader of a provider's event stream, from `reticent::providers::__fuzz`.
pub type ReadStream = fn(&[u8], usize, usize, usize, usize) -> Vec<Result<ModelEvent, ModelError>>;

/// Streams the fixture `path`, whose tool call arguments are split inside JSON tokens and
/// inside non-ASCII text, in pieces of 13 bytes and of 1 byte: the first events are `first`
/// (fragments passed on as the model produced them), `Completed` is `expected`. And `read`
/// yields the same events whatever size the pieces have.
pub async fn split_arguments_are_assembled<M: Model>(
    model: fn(&TestServer) -> M,
    path: &str,
    read: ReadStream,
    first: &[ModelEvent],
    expected: &ModelResponse,
) {
    let body = fixture(path);
    let server = TestServer::start(vec![
        Reply::events(body.clone()).in_pieces(13, Duration::from_millis(1)),
        Reply::events(body.clone()).in_pieces(1, Duration::ZERO),
    ])
    .await;
    for _ in 0..2 {
        let (events, response) = streamed(model(&server).stream(&request())).await;
        assert_eq!(events[..first.len()], *first);
        assert_eq!(&response, expected);
    }
    let read = |piece| -> Vec<ModelEvent> {
        read(body.as_bytes(), piece, 1 << 20, 1 << 20, 16)
            .into_iter()
            .map(Result::unwrap)
            .collect()
    };
    let whole = read(body.len());
    assert_eq!(check_contract(&whole), expected);
    for piece in 1..80 {
        assert_eq!(read(piece), whole, "pieces of {piece} bytes");
    }
}

/// Streams `body`, which spells two calls, `call_a` to `lookup_order` and `call_b` to
/// `charge_card`, whose fragments interleave: the events keep their order, each delta names
/// its call, and `Completed` has both calls whole, in the order they started.
pub async fn interleaved_calls_are_assembled<M: Model>(
    model: fn(&TestServer) -> M,
    body: String,
    usage: Usage,
) {
    let server = TestServer::start(vec![Reply::events(body)]).await;
    let (events, response) = streamed(model(&server).stream(&request())).await;
    let started = |index, id: &str, name: &str| ModelEvent::ToolCallStarted {
        index,
        id: id.into(),
        name: name.into(),
    };
    let delta = |index, arguments: &str| ModelEvent::ToolCallDelta {
        index,
        arguments: arguments.into(),
    };
    assert_eq!(
        events[..events.len() - 1],
        [
            started(0, "call_a", "lookup_order"),
            delta(0, "{\"order_id\": "),
            started(1, "call_b", "charge_card"),
            delta(1, "{\"amount_"),
            delta(0, "\"ORD-1042\""),
            delta(1, "cents\": 42"),
            delta(1, "00}"),
            delta(0, "}"),
        ]
    );
    assert_eq!(
        response.tool_calls,
        [
            reticent::ToolCall::new(
                "call_a",
                "lookup_order",
                serde_json::json!({"order_id": "ORD-1042"})
            ),
            reticent::ToolCall::new(
                "call_b",
                "charge_card",
                serde_json::json!({"amount_cents": 4200})
            ),
        ]
    );
    assert_eq!(response.usage, usage);
}

/// A server that answers the streaming request with one JSON body (the `path` fixture) is
/// read as `complete` reads it, and the response told as `events` events and `Completed`.
pub async fn a_json_answer_is_read_whole<M: Model>(
    model: fn(&TestServer) -> M,
    path: &str,
    events: usize,
) {
    let server =
        TestServer::start(vec![Reply::json(fixture(path)), Reply::json(fixture(path))]).await;
    let model = model(&server);
    let (told, response) = streamed(model.stream(&request())).await;
    assert_eq!(response, model.complete(&request()).await.unwrap());
    assert_eq!(told.len(), events + 1, "{told:?}");
}

/// How one provider's API spells a streamed answer, for the shared scenarios below.
#[allow(missing_debug_implementations)] // function pointers only
pub struct Wire<M> {
    /// The model, talking to `server`, retrying quickly.
    pub model: fn(&TestServer) -> M,
    /// The events that open an answer, before its first text.
    pub start: fn() -> String,
    /// One event carrying this text delta.
    pub text: fn(&str) -> String,
    /// The events that end an answer, which used 10 tokens in and 5 out (with what `start`
    /// said).
    pub end: fn() -> String,
    /// An error event of this type with this message.
    pub error: fn(&str, &str) -> String,
    /// An error type the provider sends for a passing failure (overload, server error).
    pub passing_error: &'static str,
    /// The body of a `401` answer with this message.
    pub unauthorized: fn(&str) -> String,
    /// The API key the model sends.
    pub key: &'static str,
    /// The model with this `max_event_bytes`.
    pub max_event_bytes: fn(M, usize) -> M,
    /// The model with this `max_response_bytes`.
    pub max_response_bytes: fn(M, usize) -> M,
}

impl<M: Model> Wire<M> {
    /// A whole answer whose text is `deltas`, which used 10 tokens in and 5 out.
    pub fn answer(&self, deltas: &[&str]) -> String {
        self.partial(deltas) + &(self.end)()
    }

    /// The start of an answer with `deltas`, without its end.
    pub fn partial(&self, deltas: &[&str]) -> String {
        let mut body = (self.start)();
        for delta in deltas {
            body.push_str(&(self.text)(delta));
        }
        body
    }
}

const DELTAS: [&str; 4] = ["Order", " ORD-1042", " has", " shipped."];

/// A secret in a provider's error message: the caller gets it, no text delta carries it.
const CANARY: &str = "CANARY-7f3e91";

/// An error event before anything was passed on is retried like the status it stands for,
/// and then returned as the error `complete` would return: the provider's message reaches
/// the caller, and never becomes text of the answer.
pub async fn an_error_event_first_is_retried<M: Model>(wire: &Wire<M>) {
    let failing = || {
        let message = format!("the upstream is overloaded ({CANARY})");
        Reply::events((wire.start)() + &(wire.error)(wire.passing_error, &message))
    };
    let server = TestServer::start(vec![failing(), failing(), failing()]).await;
    let model = (wire.model)(&server);
    let (events, error) = collect(model.stream(&request())).await;
    assert_eq!(events, Vec::new());
    let error = error.expect("the stream fails");
    assert_eq!(server.received().len(), 3, "{error}");
    assert!(error.is_retryable(), "{error}");
    assert_eq!(error.status(), None);
    assert!(
        error.message().starts_with(&format!(
            "the stream sent an error: {}: the upstream is overloaded ({CANARY})",
            wire.passing_error
        )),
        "{error}"
    );
    assert!(
        error.message().ends_with("(gave up after 3 attempts)"),
        "{error}"
    );

    // a passing failure, then the answer
    let server = TestServer::start(vec![failing(), Reply::events(wire.answer(&DELTAS))]).await;
    let model = (wire.model)(&server);
    let (events, response) = streamed(model.stream(&request())).await;
    assert_eq!(text_deltas(&events), DELTAS);
    assert!(!format!("{events:?}").contains(CANARY));
    assert_eq!(
        response.text.as_deref(),
        Some("Order ORD-1042 has shipped.")
    );
}

/// An error event after text ends the stream with an error that says it broke off: not
/// retried by the stream, the text before it passed on, no `Completed`; retryable, for the
/// agent loop to ask the turn again.
pub async fn an_error_event_midway_breaks_the_stream<M: Model>(wire: &Wire<M>) {
    let body = wire.partial(&DELTAS[..2]) + &(wire.error)(wire.passing_error, CANARY);
    // one event per chunk, so that the text is passed on before the error is read (events
    // read in one piece with the error would be dropped and the request retried)
    let broken = Reply::events(body).per_event(Duration::ZERO);
    let server = TestServer::start(vec![broken, Reply::events(wire.answer(&DELTAS))]).await;
    let model = (wire.model)(&server);
    let (events, error) = collect(model.stream(&request())).await;
    let error = error.expect("the stream fails");
    assert_eq!(text_deltas(&events), &DELTAS[..2]);
    assert_eq!(events.len(), 2, "no Completed: {events:?}");
    assert_eq!(
        error.message(),
        format!(
            "the stream broke off after 2 events: the stream sent an error: {}: {CANARY}",
            wire.passing_error
        )
    );
    assert!(error.is_retryable());
    assert_eq!(server.received().len(), 1);
}

/// A connection cut in the middle of the stream, after some text was passed on: an error
/// that says the stream broke off, not retried by the stream (retryable, for the agent loop
/// to ask the turn again).
pub async fn a_stream_cut_midway_is_not_retried<M: Model>(wire: &Wire<M>) {
    let body = wire.answer(&DELTAS);
    // in the middle of the third text event
    let third = body.find(&(wire.text)(DELTAS[2])).expect("the third delta");
    let cut = Reply::events(body.clone())
        .per_event(Duration::from_millis(5))
        .cut_after(third + 10);
    let server = TestServer::start(vec![cut, Reply::events(body)]).await;
    let model = (wire.model)(&server);
    let (events, error) = collect(model.stream(&request())).await;
    let error = error.expect("the stream fails");
    assert_eq!(text_deltas(&events), &DELTAS[..2]);
    assert!(
        error
            .message()
            .starts_with("the stream broke off after 2 events: the connection broke"),
        "{error}"
    );
    assert!(error.is_retryable());
    assert_eq!(error.status(), None);
    assert!(std::error::Error::source(&error).is_some());
    assert_eq!(server.received().len(), 1);
    assert!(matches!(server.streams()[..], [StreamEnd::Cut { .. }]));
}

/// A stream that ends cleanly without the API's last event, after text: broken off too.
pub async fn a_stream_that_ends_early_is_broken<M: Model>(wire: &Wire<M>) {
    let server = TestServer::start(vec![
        Reply::events(wire.partial(&DELTAS)),
        Reply::events(wire.answer(&DELTAS)),
    ])
    .await;
    let model = (wire.model)(&server);
    let (events, error) = collect(model.stream(&request())).await;
    let error = error.expect("the stream fails");
    assert_eq!(text_deltas(&events), DELTAS);
    assert_eq!(
        error.message(),
        "the stream broke off after 4 events: the stream ended before the answer was complete"
    );
    assert!(error.is_retryable());
    assert_eq!(server.received().len(), 1);
}

/// Failures before anything was passed on are retried: a connection closed without an
/// answer, a `200` whose body breaks before its first byte, a `503`, and an error event read
/// in the same piece as text, which was not passed on yet.
pub async fn a_failure_before_the_first_byte_is_retried<M: Model>(wire: &Wire<M>) {
    let body = wire.answer(&DELTAS);
    let text_then_error =
        wire.partial(&DELTAS[..2]) + &(wire.error)(wire.passing_error, "overloaded");
    let servers = [
        vec![Reply::Close, Reply::events(body.clone()).cut_after(0)],
        vec![
            Reply::status(503, "upstream connect error"),
            Reply::events(text_then_error),
        ],
    ];
    for failures in servers {
        let server = TestServer::start(
            failures
                .into_iter()
                .chain([Reply::events(body.clone())])
                .collect(),
        )
        .await;
        let model = (wire.model)(&server);
        let (events, response) = streamed(model.stream(&request())).await;
        assert_eq!(text_deltas(&events), DELTAS);
        assert_eq!(response.usage, Usage::new(10, 5));
        assert_eq!(server.received().len(), 3);
    }
}

/// Dropping the stream after its first delta closes the connection: the server, sending
/// slowly, sees the client close it long before it sent everything.
pub async fn dropping_the_stream_closes_the_connection<M: Model>(wire: &Wire<M>) {
    let deltas: Vec<String> = (0..100).map(|i| format!("word{i} ")).collect();
    let deltas: Vec<&str> = deltas.iter().map(String::as_str).collect();
    let body = wire.answer(&deltas);
    let slow = Reply::events(body).per_event(Duration::from_millis(100));
    let Reply::Stream { pieces, .. } = &slow else {
        unreachable!()
    };
    let total = pieces.len();
    let server = TestServer::start(vec![slow]).await;
    let model = (wire.model)(&server);
    let request = request();
    let mut stream = model.stream(&request);
    let first = loop {
        match stream.next().await {
            Some(Ok(ModelEvent::TextDelta(text))) => break text,
            Some(Ok(_)) => {}
            other => panic!("expected a text delta, got {other:?}"),
        }
    };
    assert_eq!(first, "word0 ");
    drop(stream);
    let ends = server.streams_ended(1).await;
    let [StreamEnd::ClientClosed { pieces }] = ends[..] else {
        panic!("the server did not see the client close the stream: {ends:?}");
    };
    // the first delta is in the first few pieces; the server stopped within a few more
    assert!(pieces < 10, "the server sent {pieces} of {total} pieces");
}

/// An event over `max_event_bytes` is refused, not retried.
pub async fn an_event_over_the_limit_is_refused<M: Model>(wire: &Wire<M>) {
    let big = "x".repeat(4096);
    let server = TestServer::start(vec![
        Reply::events(wire.answer(&[&big])),
        Reply::events(wire.answer(&DELTAS)),
    ])
    .await;
    let model = (wire.max_event_bytes)((wire.model)(&server), 1024);
    let (events, error) = collect(model.stream(&request())).await;
    let error = error.expect("the stream fails");
    assert!(text_deltas(&events).is_empty());
    assert_eq!(
        error.message(),
        "a stream event is larger than 1024 bytes; raise `max_event_bytes` if the provider's \
         events can be that large"
    );
    assert!(!error.is_retryable());
    assert_eq!(server.received().len(), 1);
}

/// A stream over `max_response_bytes` is refused when it gets there, not retried.
pub async fn a_stream_over_the_limit_is_refused<M: Model>(wire: &Wire<M>) {
    let deltas: Vec<String> = (0..200).map(|i| format!("word{i} ")).collect();
    let deltas: Vec<&str> = deltas.iter().map(String::as_str).collect();
    let server = TestServer::start(vec![
        Reply::events(wire.answer(&deltas)).per_event(Duration::from_millis(1)),
        Reply::events(wire.answer(&DELTAS)),
    ])
    .await;
    let model = (wire.max_response_bytes)((wire.model)(&server), 8192);
    let (events, error) = collect(model.stream(&request())).await;
    let error = error.expect("the stream fails");
    let shown = text_deltas(&events).len();
    assert!(shown > 0 && shown < deltas.len(), "{shown} deltas");
    assert!(
        error.message().starts_with(&format!(
            "the stream broke off after {shown} events: the stream is larger than 8192 bytes"
        )),
        "{error}"
    );
    assert!(!error.is_retryable());
    assert_eq!(server.received().len(), 1);
}

/// A key the provider echoes back, in a `401` or in an error event, is not in the error.
pub async fn the_api_key_is_never_in_stream_errors<M: Model>(wire: &Wire<M>) {
    let message = format!("invalid API key {}", wire.key);
    let server = TestServer::start(vec![
        Reply::status(401, (wire.unauthorized)(&message)),
        Reply::events((wire.start)() + &(wire.error)("authentication_error", &message)),
    ])
    .await;
    for status in [Some(401), None] {
        let (events, error) = collect((wire.model)(&server).stream(&request())).await;
        assert!(events.is_empty());
        let error = error.expect("the stream fails");
        assert_eq!(error.status(), status);
        assert!(!error.is_retryable());
        for text in [error.to_string(), format!("{error:?}")] {
            assert!(!text.contains(wire.key), "{text}");
        }
        assert!(
            error.message().contains("invalid API key [redacted]"),
            "{error}"
        );
    }
    assert_eq!(server.received().len(), 2);
}

/// The scenarios above, each a test, for the provider of the [`Wire`] `$wire` builds.
#[macro_export]
macro_rules! stream_scenarios {
    ($wire:expr) => {
        $crate::stream_scenario_tests!(
            $wire,
            an_error_event_first_is_retried,
            an_error_event_midway_breaks_the_stream,
            a_stream_cut_midway_is_not_retried,
            a_stream_that_ends_early_is_broken,
            a_failure_before_the_first_byte_is_retried,
            dropping_the_stream_closes_the_connection,
            an_event_over_the_limit_is_refused,
            a_stream_over_the_limit_is_refused,
            the_api_key_is_never_in_stream_errors
        );
    };
}

/// One test per scenario named.
#[macro_export]
macro_rules! stream_scenario_tests {
    ($wire:expr, $($scenario:ident),*) => {
        $(
            #[tokio::test]
            async fn $scenario() {
                $crate::provider::stream::$scenario(&$wire).await;
            }
        )*
    };
}
