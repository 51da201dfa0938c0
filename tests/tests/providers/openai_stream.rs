//! `OpenAi::stream` over real HTTP, against a scripted server on loopback that streams
//! server-sent events in pieces and can cut them: text and tool-call deltas, fragments split
//! anywhere, parallel calls, errors in the stream, retries before the first event and never
//! after, cancellation, limits, and the usage at the end.

use std::sync::Arc;
use std::time::Duration;

use reticent::providers::__fuzz::read_openai_stream;
use reticent::providers::openai::OpenAi;
use reticent::{Model, ModelResponse, ToolCall, Usage, model::ModelEvent};
use reticent_tests::provider::stream::{self, FIXTURE_TEXT, Wire, request, streamed, text_deltas};
use reticent_tests::provider::{OPENAI_KEY as KEY, Reply, TestServer, fixture, openai as model};
use serde_json::{Value, json};

/// One chunk of a streamed chat completion, as an event.
fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1741570283,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
        "usage": null
    });
    format!("data: {chunk}\n\n")
}

fn usage_chunk(usage: Usage) -> String {
    let chunk = json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1741570283,
        "model": "gpt-4o-mini", "choices": [],
        "usage": {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
                  "total_tokens": usage.total()}
    });
    format!("data: {chunk}\n\n")
}

fn wire() -> Wire<OpenAi> {
    Wire {
        model,
        start: || {
            chunk(
                json!({"role": "assistant", "content": "", "refusal": null}),
                None,
            )
        },
        text: |text| chunk(json!({"content": text}), None),
        end: || {
            chunk(json!({}), Some("stop")) + &usage_chunk(Usage::new(10, 5)) + "data: [DONE]\n\n"
        },
        error: |kind, message| {
            let error =
                json!({"error": {"message": message, "type": kind, "param": null, "code": null}});
            format!("data: {error}\n\n")
        },
        passing_error: "server_error",
        unauthorized: |message| {
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null,
                             "code": "invalid_api_key"}})
            .to_string()
        },
        key: KEY,
        max_event_bytes: OpenAi::max_event_bytes,
        max_response_bytes: OpenAi::max_response_bytes,
    }
}

#[tokio::test]
async fn text_deltas_in_order_then_completed_with_the_usage_at_the_end() {
    let (streamed, completed) =
        stream::the_text_fixture_streams(model, "openai", Usage::new(1117, 46)).await;
    // the request `complete` sends, asking for a stream with the usage at the end
    assert_eq!(streamed.path, "/v1/chat/completions");
    assert_eq!(
        streamed.header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    let mut body = streamed.json();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    let fields = body.as_object_mut().unwrap();
    fields.remove("stream");
    fields.remove("stream_options");
    assert_eq!(body, completed);
}

#[tokio::test]
async fn arguments_split_inside_json_tokens_and_utf8_characters_are_assembled() {
    let first = [
        ModelEvent::ToolCallStarted {
            index: 0,
            id: "call_abc123".into(),
            name: "lookup_order".into(),
        },
        ModelEvent::ToolCallDelta {
            index: 0,
            arguments: "{\"ord".into(),
        },
        ModelEvent::ToolCallDelta {
            index: 0,
            arguments: "er_id\": \"OR".into(),
        },
    ];
    let expected = ModelResponse::tool_calls(vec![
        ToolCall::new(
            "call_abc123",
            "lookup_order",
            json!({"order_id": "ORD-1042", "note": "Zürich 日本 🦀"}),
        ),
        ToolCall::new("call_def456", "charge_card", json!({"amount_cents": 4200})),
    ])
    .with_usage(Usage::new(82, 17));
    stream::split_arguments_are_assembled(
        model,
        "openai/stream_tool_calls.sse",
        read_openai_stream,
        &first,
        &expected,
    )
    .await;
}

#[tokio::test]
async fn two_parallel_tool_calls_interleaved_by_index() {
    let call = |index: u64, id: &str, name: &str| {
        json!({"index": index, "id": id, "type": "function",
               "function": {"name": name, "arguments": ""}})
    };
    let args =
        |index: u64, arguments: &str| json!({"index": index, "function": {"arguments": arguments}});
    let calls = |calls: Value| chunk(json!({ "tool_calls": calls }), None);
    let body = [
        chunk(
            json!({"role": "assistant", "content": null,
                   "tool_calls": [call(0, "call_a", "lookup_order")]}),
            None,
        ),
        calls(json!([args(0, "{\"order_id\": ")])),
        calls(json!([call(1, "call_b", "charge_card")])),
        calls(json!([args(1, "{\"amount_")])),
        // one chunk with fragments of both calls
        calls(json!([args(0, "\"ORD-1042\""), args(1, "cents\": 42")])),
        calls(json!([args(1, "00}")])),
        calls(json!([args(0, "}")])),
        chunk(json!({}), Some("tool_calls")),
        usage_chunk(Usage::new(40, 30)),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    stream::interleaved_calls_are_assembled(model, body, Usage::new(40, 30)).await;
}

#[tokio::test]
async fn arguments_that_are_not_json_arrive_as_the_raw_text() {
    let body = [
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "add", "arguments": "{\"a\": 2, "}}]}),
            None,
        ),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"b\":"}}]}), None),
        chunk(json!({}), Some("tool_calls")),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    let server = TestServer::start(vec![Reply::events(body)]).await;
    let (_, response) = streamed(model(&server).stream(&request())).await;
    assert_eq!(
        response.tool_calls,
        [ToolCall::new("call_1", "add", json!("{\"a\": 2, \"b\":"))]
    );
}

#[tokio::test]
async fn refusal_deltas_are_text() {
    let body = [
        chunk(
            json!({"role": "assistant", "content": null, "refusal": ""}),
            None,
        ),
        chunk(json!({"refusal": "I can't help"}), None),
        chunk(json!({"refusal": " with that."}), None),
        chunk(json!({}), Some("stop")),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    let server = TestServer::start(vec![Reply::events(body)]).await;
    let (events, response) = streamed(model(&server).stream(&request())).await;
    assert_eq!(text_deltas(&events), ["I can't help", " with that."]);
    assert_eq!(response.text.as_deref(), Some("I can't help with that."));
}

#[tokio::test]
async fn a_stream_closed_after_its_finish_reason_and_usage_without_done_is_complete() {
    // some compatible servers send no `[DONE]`
    let body =
        wire().partial(&["Hi"]) + &chunk(json!({}), Some("stop")) + &usage_chunk(Usage::new(10, 5));
    let server = TestServer::start(vec![Reply::events(body)]).await;
    let (_, response) = streamed(model(&server).stream(&request())).await;
    assert_eq!(
        response,
        ModelResponse::text("Hi").with_usage(Usage::new(10, 5))
    );
}

#[tokio::test]
async fn a_stream_closed_between_its_finish_reason_and_its_usage_was_cut_short() {
    // the usage asked for with `include_usage` comes after the finish reason: without it, the
    // answer's accounting is lost
    let body = wire().partial(&["Hi"]) + &chunk(json!({}), Some("stop"));
    let server = TestServer::start(vec![
        Reply::events(body).per_event(Duration::ZERO),
        Reply::events(wire().answer(&["Hi"])),
    ])
    .await;
    let (events, error) = stream::collect(model(&server).stream(&request())).await;
    let error = error.expect("the stream is broken");
    assert_eq!(text_deltas(&events), ["Hi"]);
    assert!(
        error
            .message()
            .ends_with("the stream ended before the answer was complete"),
        "{error}"
    );
    assert!(error.is_retryable());
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_server_that_does_not_stream_is_read_whole() {
    // two calls, each a start and a delta
    stream::a_json_answer_is_read_whole(model, "openai/response_tool_calls.json", 4).await;
}

#[tokio::test]
async fn shared_and_boxed_models_stream_from_the_provider() {
    let body = fixture("openai/stream_text.sse");
    let server = TestServer::start(vec![Reply::events(body.clone()), Reply::events(body)]).await;
    let shared: Arc<dyn Model> = Arc::new(model(&server));
    let boxed: Box<dyn Model> = Box::new(model(&server));
    for model in [&shared as &dyn Model, &boxed] {
        let (events, response) = streamed(model.stream(&request())).await;
        assert_eq!(text_deltas(&events).len(), 6);
        assert_eq!(response.text, Some(FIXTURE_TEXT.concat()));
    }
    for request in server.received() {
        assert_eq!(request.json()["stream"], true);
    }
}

reticent_tests::stream_scenarios!(wire());
