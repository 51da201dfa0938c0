//! The OpenAI Responses provider over real HTTP: the request it sends (instructions, input
//! items, strict tools, nothing stored), responses that are incomplete or failed, and the
//! stream's error events.

use reticent::providers::openai_responses::OpenAiResponses;
use reticent::{Message, Model, ModelRequest, SchemaDialect, ToolCall, ToolResult};
use reticent_tests::conformance::openai_responses::build;
use reticent_tests::conformance::{Settings, collect, request};
use reticent_tests::provider::stream::Wire;
use reticent_tests::provider::{OPENAI_KEY, Reply, TestServer, order_tools};
use serde_json::{Value, json};

fn text_answer() -> String {
    json!({"id": "resp_1", "status": "completed", "output": [
        {"type": "message", "id": "msg_1", "role": "assistant",
         "content": [{"type": "output_text", "text": "ok"}]}]})
    .to_string()
}

#[tokio::test]
async fn request_body_matches_the_responses_shape() {
    let server =
        TestServer::start(vec![Reply::json(text_answer()), Reply::json(text_answer())]).await;
    let model = build(&server, Settings::default());
    assert_eq!(model.schema_dialect(), SchemaDialect::OpenAiStrict);
    let tools = order_tools()
        .iter()
        .map(|d| SchemaDialect::OpenAiStrict.convert_definition(d).unwrap())
        .collect();
    let request = ModelRequest {
        system: Some("You are a support agent.".into()),
        messages: vec![
            Message::user("Charge ORD-1042."),
            Message::Assistant {
                text: Some("Charging.".into()),
                tool_calls: vec![ToolCall::new(
                    "call_1",
                    "charge_card",
                    json!({"amount_cents": 4200}),
                )],
            },
            Message::Tool(ToolResult {
                call_id: "call_1".into(),
                name: "charge_card".into(),
                content: "Tool 'charge_card' failed with GatewayError".into(),
                is_error: true,
            }),
        ],
        tools,
    };
    model.complete(&request).await.unwrap();
    let body = server.received()[0].json();
    assert_eq!(server.received()[0].path, "/v1/responses");
    assert_eq!(body["model"], "o4-mini");
    assert_eq!(body["instructions"], "You are a support agent.");
    assert_eq!(body["store"], false);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(
        body["input"],
        json!([
            {"role": "user", "content": "Charge ORD-1042."},
            {"role": "assistant", "content": "Charging."},
            {"type": "function_call", "call_id": "call_1", "name": "charge_card",
             "arguments": "{\"amount_cents\":4200}"},
            {"type": "function_call_output", "call_id": "call_1",
             "output": "Tool 'charge_card' failed with GatewayError"}
        ])
    );
    let tool = &body["tools"][1];
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["name"], "charge_card");
    assert_eq!(tool["strict"], true);
    assert_eq!(tool["parameters"]["additionalProperties"], false);

    // not strict, stored: `strict: false` said out loud, reasoning by id (nothing to include)
    let model = OpenAiResponses::new("k", "o4-mini")
        .base_url(format!("{}/v1", server.url))
        .strict(false)
        .store(true);
    assert_eq!(model.schema_dialect(), SchemaDialect::Standard);
    model.complete(&request).await.unwrap();
    let body = server.received()[1].json();
    assert_eq!(body["tools"][0]["strict"], false);
    assert_eq!(body["store"], true);
    assert!(body.get("include").is_none());
}

#[tokio::test]
async fn incomplete_and_failed_responses_are_errors() {
    let incomplete = json!({"id": "resp_1", "status": "incomplete",
                            "incomplete_details": {"reason": "max_output_tokens"},
                            "output": []});
    let failed = json!({"id": "resp_1", "status": "failed",
                        "error": {"code": "server_error", "message": "the model failed"},
                        "output": []});
    let cases = [
        (
            incomplete.clone(),
            "the response is incomplete (max_output_tokens)",
        ),
        (failed.clone(), "the response failed: the model failed"),
    ];
    for (body, message) in cases {
        let kind = if body["status"] == "failed" {
            "response.failed"
        } else {
            "response.incomplete"
        };
        let event = json!({"type": kind, "response": body});
        let stream = format!("event: {kind}\ndata: {event}\n\n");
        let server =
            TestServer::start(vec![Reply::json(body.to_string()), Reply::events(stream)]).await;
        let model = build(&server, Settings::default());
        assert_eq!(
            model.complete(&request()).await.unwrap_err().message(),
            message
        );
        let (events, error) = collect(&model, &request()).await;
        assert!(events.is_empty());
        assert_eq!(error.unwrap().message(), message);
    }
}

#[tokio::test]
async fn an_error_event_is_the_providers_error() {
    let event = json!({"type": "error", "code": "server_error",
                       "message": "the upstream failed", "param": null});
    let stream = || Reply::events(format!("event: error\ndata: {event}\n\n"));
    let server = TestServer::start(vec![stream(), stream(), stream()]).await;
    let (events, error) = collect(&build(&server, Settings::default()), &request()).await;
    assert!(events.is_empty());
    let error = error.unwrap();
    assert!(
        error
            .message()
            .starts_with("the stream sent an error: server_error: the upstream failed"),
        "{error}"
    );
    // a server error is retried while nothing was passed on
    assert_eq!(server.received().len(), 3);
}

fn event(data: Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

fn wire() -> Wire<OpenAiResponses> {
    Wire {
        model: |server| build(server, Settings::default()),
        start: || event(json!({"type": "response.created", "response": {"id": "resp_1"}})),
        text: |text| {
            event(
                json!({"type": "response.output_text.delta", "item_id": "msg_1",
                         "output_index": 0, "content_index": 0, "delta": text}),
            )
        },
        end: || {
            event(json!({"type": "response.completed", "response": {
                "id": "resp_1", "status": "completed", "output": [],
                "usage": {"input_tokens": 10, "output_tokens": 5}}}))
        },
        error: |code, message| event(json!({"type": "error", "code": code, "message": message})),
        passing_error: "server_error",
        unauthorized: |message| {
            json!({"error": {"type": "invalid_request_error", "message": message}}).to_string()
        },
        key: OPENAI_KEY,
        max_event_bytes: OpenAiResponses::max_event_bytes,
        max_response_bytes: OpenAiResponses::max_response_bytes,
    }
}

reticent_tests::stream_scenarios!(wire());
