//! `Anthropic::stream` over real HTTP, against a scripted server on loopback that streams
//! server-sent events in pieces and can cut them: the Messages API's event sequence, text and
//! `input_json_delta` fragments split anywhere, parallel calls, `error` events, retries
//! before the first event and never after, cancellation, limits, and the usage at the end.

use reticent::providers::__fuzz::read_anthropic_stream;
use reticent::providers::anthropic::Anthropic;
use reticent::{Model, ModelResponse, ToolCall, Usage, model::ModelEvent};
use reticent_tests::provider::stream::{self, Wire, collect, request, streamed};
use reticent_tests::provider::{ANTHROPIC_KEY as KEY, Reply, TestServer, anthropic as model};
use serde_json::{Value, json};

/// One event of a streamed message.
fn event(data: Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

fn message_start(input_tokens: u64) -> String {
    event(json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "content": [],
        "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1}
    }}))
}

fn block_start(index: u64, block: Value) -> String {
    event(json!({"type": "content_block_start", "index": index, "content_block": block}))
}

fn text_delta(index: u64, text: &str) -> String {
    event(json!({"type": "content_block_delta", "index": index,
                 "delta": {"type": "text_delta", "text": text}}))
}

fn input_delta(index: u64, partial_json: &str) -> String {
    event(json!({"type": "content_block_delta", "index": index,
                 "delta": {"type": "input_json_delta", "partial_json": partial_json}}))
}

fn message_end(stop_reason: &str, output_tokens: u64) -> String {
    event(json!({"type": "message_delta",
                 "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                 "usage": {"output_tokens": output_tokens}}))
        + &event(json!({"type": "message_stop"}))
}

fn wire() -> Wire<Anthropic> {
    Wire {
        model,
        start: || message_start(10) + &block_start(0, json!({"type": "text", "text": ""})),
        text: |text| text_delta(0, text),
        end: || {
            event(json!({"type": "content_block_stop", "index": 0})) + &message_end("end_turn", 5)
        },
        error: |kind, message| {
            event(json!({"type": "error", "error": {"type": kind, "message": message}}))
        },
        passing_error: "overloaded_error",
        unauthorized: |message| {
            json!({"type": "error", "error": {"type": "authentication_error", "message": message}})
                .to_string()
        },
        key: KEY,
        max_event_bytes: Anthropic::max_event_bytes,
        max_response_bytes: Anthropic::max_response_bytes,
    }
}

#[tokio::test]
async fn text_deltas_in_order_then_completed_with_the_usage_at_the_end() {
    let (streamed, completed) =
        stream::the_text_fixture_streams(model, "anthropic", Usage::new(2095, 503)).await;
    // the request `complete` sends, asking for a stream
    assert_eq!(streamed.path, "/v1/messages");
    assert_eq!(streamed.header("x-api-key"), Some(KEY));
    assert_eq!(streamed.header("anthropic-version"), Some("2023-06-01"));
    let mut body = streamed.json();
    assert_eq!(body["stream"], true);
    body.as_object_mut().unwrap().remove("stream");
    assert_eq!(body, completed);
}

#[tokio::test]
async fn arguments_split_inside_json_tokens_and_utf8_characters_are_assembled() {
    // the thinking block is not part of the answer
    let first = [
        ModelEvent::TextDelta("I'll look up".into()),
        ModelEvent::TextDelta(" the order and charge the card.".into()),
        ModelEvent::ToolCallStarted {
            index: 0,
            id: "toolu_01A09q90qw90lq917835lq9".into(),
            name: "lookup_order".into(),
        },
        ModelEvent::ToolCallDelta {
            index: 0,
            arguments: "{\"ord".into(),
        },
    ];
    let expected = ModelResponse::tool_calls(vec![
        ToolCall::new(
            "toolu_01A09q90qw90lq917835lq9",
            "lookup_order",
            json!({"order_id": "ORD-1042", "note": "Zürich 日本 🦀"}),
        ),
        ToolCall::new(
            "toolu_01B3XkLm7Qp9Rz2VwYt8HnJc",
            "charge_card",
            json!({"amount_cents": 4200}),
        ),
    ])
    .with_text("I'll look up the order and charge the card.")
    // input counts cached tokens too, which are also reported as cache reads and writes
    .with_usage(Usage::new(150 + 10 + 120, 87).with_cache(120, 10));
    stream::split_arguments_are_assembled(
        model,
        "anthropic/stream_tool_use.sse",
        read_anthropic_stream,
        &first,
        &expected,
    )
    .await;
}

#[tokio::test]
async fn two_parallel_tool_calls_interleaved_by_index() {
    let tool_use =
        |id: &str, name: &str| json!({"type": "tool_use", "id": id, "name": name, "input": {}});
    let body = [
        message_start(40),
        block_start(0, tool_use("call_a", "lookup_order")),
        input_delta(0, "{\"order_id\": "),
        block_start(1, tool_use("call_b", "charge_card")),
        input_delta(1, "{\"amount_"),
        input_delta(0, "\"ORD-1042\""),
        input_delta(1, "cents\": 42"),
        input_delta(1, "00}"),
        event(json!({"type": "content_block_stop", "index": 1})),
        input_delta(0, "}"),
        event(json!({"type": "content_block_stop", "index": 0})),
        message_end("tool_use", 30),
    ]
    .concat();
    stream::interleaved_calls_are_assembled(model, body, Usage::new(40, 30)).await;
}

#[tokio::test]
async fn a_tool_call_without_input_has_empty_arguments() {
    let body = [
        message_start(5),
        block_start(
            0,
            json!({"type": "tool_use", "id": "toolu_1", "name": "now", "input": {}}),
        ),
        input_delta(0, ""),
        event(json!({"type": "content_block_stop", "index": 0})),
        message_end("tool_use", 3),
    ]
    .concat();
    let server = TestServer::start(vec![Reply::events(body)]).await;
    let (_, response) = streamed(model(&server).stream(&request())).await;
    assert_eq!(
        response.tool_calls,
        [ToolCall::new("toolu_1", "now", json!({}))]
    );
}

#[tokio::test]
async fn input_for_a_block_that_is_not_a_tool_call_is_refused() {
    let body = [
        message_start(5),
        block_start(0, json!({"type": "text", "text": ""})),
        input_delta(0, "{}"),
        message_end("end_turn", 3),
    ]
    .concat();
    let server = TestServer::start(vec![Reply::events(body)]).await;
    let (events, error) = collect(model(&server).stream(&request())).await;
    assert!(events.is_empty());
    let error = error.unwrap();
    assert_eq!(
        error.message(),
        "the message stream sent tool input for content block 0, which is not a tool call"
    );
    assert!(!error.is_retryable());
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_server_that_does_not_stream_is_read_whole() {
    // the text, and two calls, each a start and a delta
    stream::a_json_answer_is_read_whole(model, "anthropic/response_tool_use.json", 5).await;
}

reticent_tests::stream_scenarios!(wire());
