//! The OpenAI Chat Completions provider over real HTTP, against a scripted server on loopback:
//! the request JSON it sends, the responses it reads, retries, timeouts, errors, and an
//! agent run end to end.

use std::time::{Duration, Instant};

use reticent::providers::openai::OpenAi;
use reticent::{
    Agent, AgentError, Message, Model, ModelRequest, SchemaDialect, ToolCall, ToolResult, Usage,
};
use reticent_tests::provider::{
    OPENAI_KEY as KEY, Reply, TestServer, fixture, fixture_json, openai as model, openai_tool_call,
    order_tools, retry_after,
};
use serde_json::json;

fn request() -> ModelRequest {
    ModelRequest {
        system: Some("You are a support agent.".into()),
        messages: vec![Message::user("Where is order ORD-1042?")],
        tools: Vec::new(),
    }
}

fn rate_limited() -> Reply {
    Reply::status(429, fixture("openai/error_rate_limit.json"))
}

fn server_error() -> Reply {
    Reply::status(500, fixture("openai/error_server.json"))
}

#[tokio::test]
async fn request_body_matches_the_chat_completions_shape() {
    let server = TestServer::start(vec![Reply::json(fixture("openai/response_text.json"))]).await;
    let model = model(&server);
    // what the agent does when it is built: convert once, to the model's dialect
    let dialect = model.schema_dialect();
    assert_eq!(dialect, SchemaDialect::OpenAiStrict);
    let tools = order_tools()
        .iter()
        .map(|d| dialect.convert_definition(d).unwrap())
        .collect();
    let request = ModelRequest {
        system: Some("You are a support agent.".into()),
        messages: vec![
            Message::user("Where is order ORD-1042, and charge the balance."),
            Message::Assistant {
                text: None,
                tool_calls: vec![
                    ToolCall::new(
                        "call_abc123",
                        "lookup_order",
                        json!({"order_id": "ORD-1042", "with_items": null}),
                    ),
                    ToolCall::new("call_def456", "charge_card", json!({"amount_cents": 4200})),
                ],
            },
            Message::Tool(ToolResult {
                call_id: "call_abc123".into(),
                name: "lookup_order".into(),
                content: r#"{"id":"ORD-1042","status":"shipped"}"#.into(),
                is_error: false,
            }),
            Message::Tool(ToolResult {
                call_id: "call_def456".into(),
                name: "charge_card".into(),
                content: "Tool 'charge_card' failed with GatewayError".into(),
                is_error: true,
            }),
        ],
        tools,
    };
    model.complete(&request).await.unwrap();

    let received = server.received();
    assert_eq!(received.len(), 1);
    let sent = &received[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.json(), fixture_json("openai/request_tool_turn.json"));
}

#[tokio::test]
async fn reads_text_and_usage() {
    let server = TestServer::start(vec![Reply::json(fixture("openai/response_text.json"))]).await;
    let response = model(&server).complete(&request()).await.unwrap();
    assert_eq!(
        response.text.as_deref(),
        Some("Order ORD-1042 has shipped. The charge did not go through, so nothing was billed.")
    );
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.usage, Usage::new(1117, 46));
    // no tools offered: no `tools` key (the API refuses an empty array)
    assert!(server.received()[0].json().get("tools").is_none());
}

#[tokio::test]
async fn reads_tool_calls_with_their_arguments_parsed() {
    let server = TestServer::start(vec![Reply::json(fixture(
        "openai/response_tool_calls.json",
    ))])
    .await;
    let response = model(&server).complete(&request()).await.unwrap();
    assert_eq!(response.text, None);
    assert_eq!(
        response.tool_calls,
        vec![
            ToolCall::new(
                "call_abc123",
                "lookup_order",
                json!({"order_id": "ORD-1042", "with_items": null})
            ),
            ToolCall::new("call_def456", "charge_card", json!({"amount_cents": 4200})),
        ]
    );
    assert_eq!(response.usage, Usage::new(82, 17));
}

#[tokio::test]
async fn unparseable_arguments_arrive_as_the_raw_text() {
    let body = openai_tool_call("call_1", "add", r#"{"a": 2, "b":"#);
    let server = TestServer::start(vec![Reply::json(body)]).await;
    let response = model(&server).complete(&request()).await.unwrap();
    assert_eq!(
        response.tool_calls,
        vec![ToolCall::new("call_1", "add", json!("{\"a\": 2, \"b\":"))]
    );
}

/// Add two numbers.
#[reticent::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::test]
async fn invalid_json_arguments_reach_the_model_as_an_argument_error() {
    let broken = json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3"}}]
        }}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
    });
    let fixed = json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_2", "type": "function",
                            "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}]
        }}],
        "usage": {"prompt_tokens": 80, "completion_tokens": 10, "total_tokens": 90}
    });
    let done = json!({
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "2 + 3 = 5"}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}
    });
    let server = TestServer::start(vec![
        Reply::json(broken.to_string()),
        Reply::json(fixed.to_string()),
        Reply::json(done.to_string()),
    ])
    .await;
    let agent = Agent::builder(model(&server)).tool(Add).build().unwrap();
    let result = agent.run("What is 2 + 3?").await.unwrap();

    // no system prompt: the conversation starts with the user
    assert_eq!(result.output, "2 + 3 = 5");
    assert_eq!(result.usage, Usage::new(230, 25));
    assert_eq!(result.tool_failures.len(), 1);
    let failure = &result.tool_failures[0];
    assert_eq!(failure.call_id, "call_1");
    assert_eq!(failure.arguments, json!("{\"a\": 2, \"b\": 3"));
    assert!(
        failure
            .shown_to_model
            .starts_with("Invalid arguments for tool 'add':"),
        "{}",
        failure.shown_to_model
    );

    // the second request carries the model's own text back, and the argument error for it
    let second = server.received()[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(
        messages[1]["tool_calls"][0]["function"]["arguments"],
        "{\"a\": 2, \"b\": 3"
    );
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["tool_call_id"], "call_1");
    assert_eq!(messages[2]["content"], failure.shown_to_model.as_str());
    let third = server.received()[2].json();
    assert_eq!(third["messages"][4]["content"], "5");
}

#[tokio::test]
async fn agent_sends_strict_schemas_converted_once_at_build() {
    let server = TestServer::start(vec![Reply::json(fixture("openai/response_text.json"))]).await;
    let agent = Agent::builder(model(&server)).tool(Add).build().unwrap();
    // `i64`'s format is the type's: strict mode does not know it, and it is not described
    assert_eq!(
        agent.definitions()[0].parameters["properties"]["a"],
        json!({"type": "integer"})
    );
    agent.run("What is 2 + 3?").await.unwrap();
    let sent = server.received()[0].json();
    assert_eq!(sent["tools"][0]["function"]["strict"], true);
    assert_eq!(
        sent["tools"][0]["function"]["parameters"],
        agent.definitions()[0].parameters
    );
}

#[tokio::test]
async fn without_strict_mode_schemas_are_sent_as_generated() {
    let server = TestServer::start(vec![Reply::json(fixture("openai/response_text.json"))]).await;
    let agent = Agent::builder(model(&server).strict(false))
        .tool(Add)
        .build()
        .unwrap();
    agent.run("What is 2 + 3?").await.unwrap();
    let sent = server.received()[0].json();
    assert!(sent["tools"][0]["function"].get("strict").is_none());
    assert_eq!(
        sent["tools"][0]["function"]["parameters"],
        reticent::Tool::definition(&Add).parameters
    );
}

#[tokio::test]
async fn extra_params_are_top_level_fields() {
    let server = TestServer::start(vec![Reply::json(fixture("openai/response_text.json"))]).await;
    model(&server)
        .param("temperature", json!(0.2))
        .param("max_completion_tokens", json!(256))
        .complete(&request())
        .await
        .unwrap();
    let sent = server.received()[0].json();
    assert_eq!(sent["temperature"], 0.2);
    assert_eq!(sent["max_completion_tokens"], 256);
}

#[tokio::test]
async fn an_empty_key_sends_no_authorization_header() {
    let server = TestServer::start(vec![Reply::json(fixture("openai/response_text.json"))]).await;
    let local = OpenAi::new("", "llama3.2").base_url(format!("{}/v1/", server.url));
    local.complete(&request()).await.unwrap();
    let sent = &server.received()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), None);
}

#[tokio::test]
async fn retries_429_after_the_retry_after_delay() {
    let server = TestServer::start(vec![
        rate_limited().header("retry-after", "1"),
        Reply::json(fixture("openai/response_text.json")),
    ])
    .await;
    let start = Instant::now();
    let response = model(&server).complete(&request()).await.unwrap();
    assert!(response.text.is_some());
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "retried after {:?}, before the server's retry-after",
        start.elapsed()
    );
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn retry_after_ms_is_honored_too() {
    let server = TestServer::start(vec![
        rate_limited()
            .header("retry-after-ms", "300")
            .header("retry-after", "1"),
        Reply::json(fixture("openai/response_text.json")),
    ])
    .await;
    let start = Instant::now();
    model(&server).complete(&request()).await.unwrap();
    let elapsed = start.elapsed();
    assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(1), "{elapsed:?}");
}

#[tokio::test]
async fn retry_after_beyond_the_max_delay_returns_the_error_at_once() {
    let server = TestServer::start(vec![
        rate_limited().header("retry-after", "120"),
        Reply::json(fixture("openai/response_text.json")),
    ])
    .await;
    let start = Instant::now();
    let error = model(&server)
        .max_retry_delay(Duration::from_secs(5))
        .complete(&request())
        .await
        .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(error.status(), Some(429));
    assert!(error.is_retryable());
    assert!(error.message().contains("Rate limit reached"), "{error}");
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn an_absurd_retry_after_on_a_success_is_ignored() {
    retry_after::absurd_on_success(model, || Reply::json(fixture("openai/response_text.json")))
        .await;
}

#[tokio::test]
async fn an_absurd_retry_after_on_a_429_returns_the_error_at_once() {
    retry_after::absurd_on_429(model, rate_limited, "Rate limit reached").await;
}

#[tokio::test]
async fn retries_500_then_succeeds() {
    let server = TestServer::start(vec![
        server_error(),
        Reply::status(503, "upstream connect error"),
        Reply::json(fixture("openai/response_text.json")),
    ])
    .await;
    let response = model(&server).complete(&request()).await.unwrap();
    assert_eq!(response.usage, Usage::new(1117, 46));
    assert_eq!(server.received().len(), 3);
}

#[tokio::test]
async fn a_500_that_outlasts_the_retries_is_a_model_error_with_status_and_message() {
    let server = TestServer::start(vec![server_error(), server_error(), server_error()]).await;
    let error = model(&server)
        .max_retries(2)
        .complete(&request())
        .await
        .unwrap_err();
    assert_eq!(server.received().len(), 3);
    assert_eq!(error.status(), Some(500));
    assert!(error.is_retryable());
    assert_eq!(
        error.message(),
        "server_error: The server had an error while processing your request. Sorry about that! \
         (gave up after 3 attempts)"
    );
    assert!(error.to_string().contains("HTTP 500"), "{error}");
}

#[tokio::test]
async fn the_agent_returns_a_model_error_to_the_caller() {
    let server = TestServer::start(vec![server_error()]).await;
    let agent = Agent::builder(model(&server).max_retries(0))
        .tool(Add)
        .build()
        .unwrap();
    let error = agent.run("What is 2 + 3?").await.unwrap_err();
    let AgentError::Model { error, partial } = error else {
        panic!("expected a model error, got {error:?}");
    };
    assert_eq!(error.status(), Some(500));
    assert!(partial.tool_failures.is_empty());
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let body = json!({"error": {
        "message": "Invalid schema for function 'add': context=('properties', 'a'), 'format' is not permitted.",
        "type": "invalid_request_error", "param": "tools[0].function.parameters", "code": "invalid_function_parameters"
    }});
    let server = TestServer::start(vec![Reply::status(400, body.to_string())]).await;
    let error = model(&server).complete(&request()).await.unwrap_err();
    assert_eq!(server.received().len(), 1);
    assert_eq!(error.status(), Some(400));
    assert!(!error.is_retryable());
    assert!(
        error
            .message()
            .starts_with("invalid_request_error: Invalid schema")
    );
}

#[tokio::test]
async fn a_request_that_outlasts_the_timeout_fails() {
    let server = TestServer::start(vec![Reply::Hang, Reply::Hang]).await;
    let start = Instant::now();
    let error = model(&server)
        .timeout(Duration::from_millis(300))
        .max_retries(1)
        .complete(&request())
        .await
        .unwrap_err();
    let elapsed = start.elapsed();
    assert!(elapsed >= Duration::from_millis(600), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert_eq!(error.status(), None);
    assert!(error.is_retryable());
    assert_eq!(
        error.message(),
        "no response within 300ms (gave up after 2 attempts)"
    );
    assert!(std::error::Error::source(&error).is_some());
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn a_refused_connection_is_a_model_error() {
    // a port nobody listens on: bind, read the port, close
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let error = OpenAi::new(KEY, "gpt-4o-mini")
        .base_url(url)
        .max_retries(0)
        .complete(&request())
        .await
        .unwrap_err();
    assert_eq!(error.status(), None);
    assert!(error.message().starts_with("could not connect"), "{error}");
}

#[tokio::test]
async fn the_api_key_is_never_in_debug_output_or_errors() {
    let body = json!({"error": {
        "message": format!("Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com/account/api-keys."),
        "type": "invalid_request_error", "param": null, "code": "invalid_api_key"
    }});
    let server = TestServer::start(vec![Reply::status(401, body.to_string())]).await;
    let model = model(&server);
    let debug = format!("{model:?}");
    assert!(!debug.contains(KEY), "{debug}");
    assert!(debug.contains("Secret(..)"), "{debug}");

    let error = model.complete(&request()).await.unwrap_err();
    assert_eq!(error.status(), Some(401));
    for text in [error.to_string(), format!("{error:?}")] {
        assert!(!text.contains(KEY), "{text}");
    }
    assert!(
        error
            .message()
            .contains("Incorrect API key provided: [redacted].")
    );
}

#[tokio::test]
async fn a_response_without_choices_is_a_model_error() {
    let server = TestServer::start(vec![Reply::json(r#"{"choices": []}"#)]).await;
    let error = model(&server).complete(&request()).await.unwrap_err();
    assert_eq!(error.message(), "the chat completion has no choices");
    let server = TestServer::start(vec![Reply::json("<html>proxy</html>")]).await;
    let error = model(&server).complete(&request()).await.unwrap_err();
    assert!(
        error
            .message()
            .starts_with("could not read the chat completion")
    );
}
