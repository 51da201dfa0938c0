//! The Gemini provider over real HTTP: the request it sends (functionDeclarations in the
//! Gemini dialect, functionResponse output and error, signatures and ids on the parts they
//! came with), parallel calls without ids, thought parts, and blocked prompts and finish
//! reasons that are not an answer.

use reticent::providers::gemini::Gemini;
use reticent::{
    Message, Model, ModelRequest, SchemaDialect, ToolCall, ToolDefinition, ToolResult, Usage,
};
use reticent_tests::conformance::gemini::{GEMINI_KEY, build};
use reticent_tests::conformance::{Settings, collect, request};
use reticent_tests::provider::stream::Wire;
use reticent_tests::provider::{Reply, TestServer, order_tools};
use serde_json::{Value, json};

fn answer(parts: Value, finish: &str) -> String {
    json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish}],
           "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 3,
                             "thoughtsTokenCount": 4}})
    .to_string()
}

#[tokio::test]
async fn request_body_matches_the_gemini_shape() {
    let server =
        TestServer::start(vec![Reply::json(answer(json!([{"text": "ok"}]), "STOP"))]).await;
    let model = build(&server, Settings::default());
    assert_eq!(model.schema_dialect(), SchemaDialect::Gemini);
    let mut tools: Vec<ToolDefinition> = order_tools()
        .iter()
        .map(|d| SchemaDialect::Gemini.convert_definition(d).unwrap())
        .collect();
    tools.push(ToolDefinition::new(
        "list_orders",
        "List the orders.",
        json!({"type": "object", "properties": {}}),
    ));
    let signed = ToolCall::new("fc-7", "lookup_order", json!({"order_id": "ORD-1042"}))
        .with_provider_data(json!({"gemini": {"thoughtSignature": "c2ln", "id": "fc-7"},
                                   "openai_responses": {"id": "not for gemini"}}));
    let request = ModelRequest {
        system: Some("You are a support agent.".into()),
        messages: vec![
            Message::user("Where is ORD-1042, and charge it."),
            Message::Assistant {
                text: Some("Looking.".into()),
                tool_calls: vec![
                    signed,
                    ToolCall::new("call_1", "charge_card", json!({"amount_cents": 4200})),
                ],
            },
            Message::Tool(ToolResult {
                call_id: "fc-7".into(),
                name: "lookup_order".into(),
                content: "shipped".into(),
                is_error: false,
            }),
            Message::Tool(ToolResult {
                call_id: "call_1".into(),
                name: "charge_card".into(),
                content: "Tool 'charge_card' failed with GatewayError".into(),
                is_error: true,
            }),
            Message::user("Thanks."),
        ],
        tools,
    };
    model.complete(&request).await.unwrap();
    let sent = &server.received()[0];
    assert_eq!(sent.path, "/v1beta/models/gemini-2.5-flash:generateContent");
    assert_eq!(sent.header("x-goog-api-key"), Some(GEMINI_KEY));
    assert_eq!(sent.header("authorization"), None);
    assert!(!sent.path.contains(GEMINI_KEY));
    let body = sent.json();
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "You are a support agent."}]})
    );
    assert_eq!(
        body["contents"],
        json!([
            {"role": "user", "parts": [{"text": "Where is ORD-1042, and charge it."}]},
            {"role": "model", "parts": [
                {"text": "Looking."},
                {"functionCall": {"id": "fc-7", "name": "lookup_order",
                                  "args": {"order_id": "ORD-1042"}},
                 "thoughtSignature": "c2ln"},
                {"functionCall": {"name": "charge_card", "args": {"amount_cents": 4200}}}
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "lookup_order", "id": "fc-7",
                                      "response": {"output": "shipped"}}},
                {"functionResponse": {"name": "charge_card",
                                      "response": {"error":
                                          "Tool 'charge_card' failed with GatewayError"}}},
                {"text": "Thanks."}
            ]}
        ])
    );
    let declarations = &body["tools"][0]["functionDeclarations"];
    assert_eq!(declarations[0]["name"], "lookup_order");
    assert!(
        declarations[0]["parameters"]
            .get("additionalProperties")
            .is_none()
    );
    // the API refuses an object without properties: the tool is declared without parameters
    assert_eq!(
        declarations[2],
        json!({"name": "list_orders", "description": "List the orders."})
    );
}

#[tokio::test]
async fn parallel_calls_without_ids_are_matched_by_order_and_thoughts_are_skipped() {
    let parts = json!([
        {"text": "Let me think about both orders.", "thought": true},
        {"functionCall": {"name": "lookup_order", "args": {"order_id": "ORD-1"}},
         "thoughtSignature": "c2lnLTE="},
        {"functionCall": {"name": "lookup_order", "args": {"order_id": "ORD-2"}}}
    ]);
    let server = TestServer::start(vec![Reply::json(answer(parts, "STOP"))]).await;
    let response = build(&server, Settings::default())
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(response.text, None);
    assert_eq!(response.usage, Usage::new(20, 3 + 4));
    let ids: Vec<&str> = response.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_0", "call_1"]);
    // the signature stays with the part it came on; no id was given, none is kept
    assert_eq!(
        response.tool_calls[0].provider_data,
        Some(json!({"gemini": {"thoughtSignature": "c2lnLTE="}}))
    );
    assert_eq!(response.tool_calls[1].provider_data, None);
}

#[tokio::test]
async fn blocked_prompts_and_finish_reasons_other_than_stop_are_errors() {
    let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"},
                         "usageMetadata": {"promptTokenCount": 9}})
    .to_string();
    let cases = [
        (blocked.clone(), "the prompt was blocked (SAFETY)"),
        (
            answer(json!([{"text": "The order"}]), "MAX_TOKENS"),
            "the answer was cut off at the token limit (finishReason MAX_TOKENS)",
        ),
        (
            answer(json!([]), "SAFETY"),
            "the answer was blocked for safety (finishReason SAFETY)",
        ),
        (
            answer(json!([]), "MALFORMED_FUNCTION_CALL"),
            "the model produced a function call the API could not read \
             (finishReason MALFORMED_FUNCTION_CALL)",
        ),
    ];
    for (body, message) in cases {
        let stream = format!("data: {body}\n\n");
        let server = TestServer::start(vec![Reply::json(body), Reply::events(stream)]).await;
        let model = build(&server, Settings::default());
        let error = model.complete(&request()).await.unwrap_err();
        assert_eq!(error.message(), message);
        assert!(!error.is_retryable());
        let (events, error) = collect(&model, &request()).await;
        assert!(events.is_empty(), "{events:?}");
        assert_eq!(error.unwrap().message(), message);
        assert_eq!(server.received().len(), 2, "not retried");
    }
}

#[tokio::test]
async fn a_stream_that_closes_before_a_finish_reason_is_broken() {
    let chunk = json!({"candidates": [{"content": {"role": "model",
                                                   "parts": [{"text": "Order"}]}}]});
    let body = format!("data: {chunk}\n\n");
    let server = TestServer::start(vec![Reply::events(body)]).await;
    let settings = Settings {
        max_retries: 0,
        ..Settings::default()
    };
    let (events, error) = collect(&build(&server, settings), &request()).await;
    assert_eq!(events.len(), 1);
    let error = error.expect("the stream is broken");
    assert!(
        error
            .message()
            .contains("ended before the answer was complete"),
        "{error}"
    );
}

#[tokio::test]
async fn from_env_reads_the_key_and_a_models_prefix_is_dropped() {
    let model = Gemini::new("k", "models/gemini-2.5-pro");
    assert_eq!(model.model(), "gemini-2.5-pro");
    assert!(!format!("{model:?}").contains("\"k\""));
    let error = reticent::providers::from_spec("gemini:gemini-2.5-flash", |_| None)
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "the environment variable `GEMINI_API_KEY` is not set"
    );
}

/// Bodies no server should send, read by both new providers' parsers, whole and streamed:
/// nothing panics, and an error says briefly what was wrong (never the 1 MiB it was given).
#[test]
fn hostile_bodies_are_refused_briefly() {
    use reticent::providers::__fuzz::{
        parse_gemini, parse_openai_responses, read_gemini_stream, read_openai_responses_stream,
    };
    let huge = "x".repeat(1 << 20);
    let bodies = [
        String::new(),
        "{".to_owned(),
        "[]".to_owned(),
        "null".to_owned(),
        json!({"candidates": "many"}).to_string(),
        json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": 7}}]}}]})
            .to_string(),
        json!({"candidates": [{"finishReason": huge, "finishMessage": huge}]}).to_string(),
        json!({"promptFeedback": {"blockReason": huge}}).to_string(),
        json!({"usageMetadata": {"promptTokenCount": -1}}).to_string(),
        json!({"candidates": [{"content": {"parts": [{"text": huge, "thoughtSignature": 3}]}}]})
            .to_string(),
        json!({"status": "incomplete", "incomplete_details": {"reason": huge}}).to_string(),
        json!({"status": "failed", "error": {"message": huge, "code": huge}}).to_string(),
        json!({"output": [{"type": "function_call", "name": 7}]}).to_string(),
        json!({"output": [{"type": "function_call", "call_id": "c"}]}).to_string(),
        json!({"output": "none", "usage": {"input_tokens": "many"}}).to_string(),
        json!({"error": {"message": huge}}).to_string(),
        format!("{{\"candidates\": [{{\"content\": {{\"parts\": [{{\"text\": \"{huge}"),
    ];
    let limit = |what: &str, message: &str| {
        assert!(
            message.len() < 2048,
            "{what}: the error is {} bytes long",
            message.len()
        );
    };
    for body in &bodies {
        for (name, parse) in [
            ("gemini", parse_gemini as fn(&[u8]) -> _),
            ("responses", parse_openai_responses),
        ] {
            if let Err(error) = parse(body.as_bytes()) {
                limit(name, error.message());
            }
        }
        let event = format!("data: {body}\n\n");
        for read in [read_gemini_stream, read_openai_responses_stream] {
            for item in read(event.as_bytes(), 7, 2 << 20, 4 << 20, 8) {
                if let Err(error) = item {
                    limit("a stream", error.message());
                }
            }
        }
    }
}

fn chunk(parts: Value, end: bool) -> String {
    let mut data = json!({"candidates": [{"content": {"role": "model", "parts": parts}}]});
    if end {
        data["candidates"][0]["finishReason"] = json!("STOP");
        data["usageMetadata"] = json!({"promptTokenCount": 10, "candidatesTokenCount": 5});
    }
    format!("data: {data}\n\n")
}

fn wire() -> Wire<Gemini> {
    Wire {
        model: |server| build(server, Settings::default()),
        start: String::new,
        text: |text| chunk(json!([{ "text": text }]), false),
        end: || chunk(json!([{"text": ""}]), true),
        error: |status, message| {
            let data = json!({"error": {"code": 503, "message": message, "status": status}});
            format!("data: {data}\n\n")
        },
        passing_error: "UNAVAILABLE",
        unauthorized: |message| {
            json!({"error": {"code": 401, "message": message, "status": "UNAUTHENTICATED"}})
                .to_string()
        },
        key: GEMINI_KEY,
        max_event_bytes: Gemini::max_event_bytes,
        max_response_bytes: Gemini::max_response_bytes,
    }
}

reticent_tests::stream_scenarios!(wire());
