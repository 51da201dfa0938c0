//! The Anthropic Messages provider over real HTTP, against a scripted server on loopback: the
//! request JSON it sends, the responses it reads, retries, timeouts, errors, and an agent run
//! end to end.

use std::time::{Duration, Instant};

use reticent::{Agent, Message, Model, ModelRequest, SchemaDialect, ToolCall, ToolResult, Usage};
use reticent_tests::provider::{
    ANTHROPIC_KEY as KEY, Reply, TestServer, anthropic as model, fixture, fixture_json,
    order_tools, retry_after,
};
use serde_json::json;

fn request() -> ModelRequest {
    ModelRequest {
        system: None,
        messages: vec![Message::user("Where is order ORD-1042?")],
        tools: Vec::new(),
    }
}

fn overloaded() -> Reply {
    Reply::status(529, fixture("anthropic/error_overloaded.json"))
}

#[tokio::test]
async fn request_body_matches_the_messages_shape() {
    let server =
        TestServer::start(vec![Reply::json(fixture("anthropic/response_text.json"))]).await;
    let request = ModelRequest {
        system: Some("You are a support agent.".into()),
        messages: vec![
            Message::user("Where is order ORD-1042, and charge the balance."),
            Message::Assistant {
                text: Some("I'll look up the order and charge the card.".into()),
                tool_calls: vec![
                    ToolCall::new(
                        "toolu_01A09q90qw90lq917835lq9",
                        "lookup_order",
                        json!({"order_id": "ORD-1042"}),
                    ),
                    ToolCall::new(
                        "toolu_01B3XkLm7Qp9Rz2VwYt8HnJc",
                        "charge_card",
                        json!({"amount_cents": 4200}),
                    ),
                ],
            },
            Message::Tool(ToolResult {
                call_id: "toolu_01A09q90qw90lq917835lq9".into(),
                name: "lookup_order".into(),
                content: r#"{"id":"ORD-1042","status":"shipped"}"#.into(),
                is_error: false,
            }),
            Message::Tool(ToolResult {
                call_id: "toolu_01B3XkLm7Qp9Rz2VwYt8HnJc".into(),
                name: "charge_card".into(),
                content: "Tool 'charge_card' failed with GatewayError".into(),
                is_error: true,
            }),
        ],
        tools: order_tools().to_vec(),
    };
    let model = model(&server).max_tokens(1024);
    assert_eq!(model.schema_dialect(), SchemaDialect::Standard);
    model.complete(&request).await.unwrap();

    let received = server.received();
    assert_eq!(received.len(), 1);
    let sent = &received[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.json(),
        fixture_json("anthropic/request_tool_turn.json")
    );
}

#[tokio::test]
async fn reads_text_and_usage() {
    let server =
        TestServer::start(vec![Reply::json(fixture("anthropic/response_text.json"))]).await;
    let response = model(&server).complete(&request()).await.unwrap();
    assert_eq!(
        response.text.as_deref(),
        Some("Order ORD-1042 has shipped. The charge did not go through, so nothing was billed.")
    );
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.usage, Usage::new(2095, 503));
    let sent = server.received()[0].json();
    assert_eq!(sent["max_tokens"], 4096);
    assert!(sent.get("system").is_none());
    assert!(sent.get("tools").is_none());
    assert_eq!(
        sent["messages"],
        json!([{"role": "user", "content": "Where is order ORD-1042?"}])
    );
}

#[tokio::test]
async fn reads_tool_use_blocks_and_counts_cached_input() {
    let server = TestServer::start(vec![Reply::json(fixture(
        "anthropic/response_tool_use.json",
    ))])
    .await;
    let response = model(&server).complete(&request()).await.unwrap();
    // the thinking block is not part of the answer
    assert_eq!(
        response.text.as_deref(),
        Some("I'll look up the order and charge the card.")
    );
    assert_eq!(
        response.tool_calls,
        vec![
            ToolCall::new(
                "toolu_01A09q90qw90lq917835lq9",
                "lookup_order",
                json!({"order_id": "ORD-1042"})
            ),
            ToolCall::new(
                "toolu_01B3XkLm7Qp9Rz2VwYt8HnJc",
                "charge_card",
                json!({"amount_cents": 4200})
            ),
        ]
    );
    // input counts cached tokens too, which are also reported as cache reads and writes
    assert_eq!(
        response.usage,
        Usage::new(150 + 10 + 120, 87).with_cache(120, 10)
    );
}

/// Look up an order by id.
#[reticent::tool]
fn lookup_order(
    /// The order id, like "ORD-1042".
    order_id: String,
) -> Result<String, reticent::ArgumentError> {
    if order_id == "ORD-1042" {
        Ok("shipped".into())
    } else {
        Err(reticent::ArgumentError::new(format!(
            "no order {order_id}; order ids look like ORD-1042"
        )))
    }
}

#[tokio::test]
async fn an_agent_run_groups_tool_results_into_one_user_turn() {
    let calls = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "lookup_order", "input": {"order_id": "ORD-1042"}},
            {"type": "tool_use", "id": "toolu_2", "name": "lookup_order", "input": {"order_id": "42"}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 100, "output_tokens": 40}
    });
    let server = TestServer::start(vec![
        Reply::json(calls.to_string()),
        Reply::json(fixture("anthropic/response_text.json")),
    ])
    .await;
    let agent = Agent::builder(model(&server))
        .system("You are a support agent.")
        .tool(LookupOrder)
        .build()
        .unwrap();
    let result = agent.run("Where are ORD-1042 and 42?").await.unwrap();
    assert_eq!(result.usage, Usage::new(100 + 2095, 40 + 503));
    assert_eq!(result.tool_failures.len(), 1);

    let second = server.received()[1].json();
    assert_eq!(
        second["system"],
        json!([{"type": "text", "text": "You are a support agent.",
                "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        second["messages"],
        json!([
            {"role": "user", "content": "Where are ORD-1042 and 42?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "lookup_order", "input": {"order_id": "ORD-1042"}},
                {"type": "tool_use", "id": "toolu_2", "name": "lookup_order", "input": {"order_id": "42"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "shipped"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
                 "content": "Invalid arguments for tool 'lookup_order': no order 42; order ids look like ORD-1042"}
            ]}
        ])
    );
    assert_eq!(
        second["tools"][0]["input_schema"],
        reticent::Tool::definition(&LookupOrder).parameters
    );
}

#[tokio::test]
async fn a_note_after_tool_results_joins_their_user_turn() {
    let request = ModelRequest {
        system: None,
        messages: vec![
            Message::user("Go."),
            Message::Assistant {
                text: None,
                tool_calls: vec![ToolCall::new("toolu_1", "lookup_order", json!({}))],
            },
            Message::Tool(ToolResult {
                call_id: "toolu_1".into(),
                name: "lookup_order".into(),
                content: "Tool 'lookup_order' failed with DbError".into(),
                is_error: true,
            }),
            Message::user("Tools are disabled; tell the user what failed."),
        ],
        tools: Vec::new(),
    };
    let server =
        TestServer::start(vec![Reply::json(fixture("anthropic/response_text.json"))]).await;
    model(&server).complete(&request).await.unwrap();
    let sent = server.received()[0].json();
    assert_eq!(
        sent["messages"][2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true,
             "content": "Tool 'lookup_order' failed with DbError"},
            {"type": "text", "text": "Tools are disabled; tell the user what failed."}
        ]})
    );
    assert_eq!(sent["messages"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn retries_529_overloaded_then_succeeds() {
    let server = TestServer::start(vec![
        overloaded(),
        overloaded(),
        Reply::json(fixture("anthropic/response_text.json")),
    ])
    .await;
    let response = model(&server).complete(&request()).await.unwrap();
    assert!(response.text.is_some());
    assert_eq!(server.received().len(), 3);
}

#[tokio::test]
async fn retries_429_after_the_retry_after_delay() {
    let server = TestServer::start(vec![
        Reply::status(429, fixture("anthropic/error_rate_limit.json")).header("retry-after", "1"),
        Reply::json(fixture("anthropic/response_text.json")),
    ])
    .await;
    let start = Instant::now();
    model(&server).complete(&request()).await.unwrap();
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn an_absurd_retry_after_on_a_success_is_ignored() {
    retry_after::absurd_on_success(model, || {
        Reply::json(fixture("anthropic/response_text.json"))
    })
    .await;
}

#[tokio::test]
async fn an_absurd_retry_after_on_a_429_returns_the_error_at_once() {
    retry_after::absurd_on_429(
        model,
        || Reply::status(429, fixture("anthropic/error_rate_limit.json")),
        "rate_limit_error: This request would exceed",
    )
    .await;
}

#[tokio::test]
async fn overload_that_outlasts_the_retries_is_a_model_error_with_status_and_message() {
    let server = TestServer::start(vec![overloaded(), overloaded()]).await;
    let error = model(&server)
        .max_retries(1)
        .complete(&request())
        .await
        .unwrap_err();
    assert_eq!(server.received().len(), 2);
    assert_eq!(error.status(), Some(529));
    assert!(error.is_retryable());
    assert_eq!(
        error.message(),
        "overloaded_error: Overloaded (gave up after 2 attempts)"
    );
}

#[tokio::test]
async fn a_request_that_outlasts_the_timeout_fails() {
    let server = TestServer::start(vec![Reply::Hang]).await;
    let start = Instant::now();
    let error = model(&server)
        .timeout(Duration::from_millis(200))
        .max_retries(0)
        .complete(&request())
        .await
        .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(error.message(), "no response within 200ms");
}

#[tokio::test]
async fn the_api_key_is_never_in_debug_output_or_errors() {
    let body = json!({"type": "error", "error": {
        "type": "authentication_error", "message": format!("invalid x-api-key {KEY}")
    }});
    let server = TestServer::start(vec![Reply::status(401, body.to_string())]).await;
    let model = model(&server);
    let debug = format!("{model:?}");
    assert!(!debug.contains(KEY), "{debug}");
    let error = model.complete(&request()).await.unwrap_err();
    assert_eq!(error.status(), Some(401));
    assert!(!error.is_retryable());
    assert_eq!(
        error.message(),
        "authentication_error: invalid x-api-key [redacted]"
    );
    assert!(!format!("{error:?}").contains(KEY));
}

#[tokio::test]
async fn caching_is_on_by_default_and_can_be_turned_off() {
    let server = TestServer::start(vec![
        Reply::json(fixture("anthropic/response_text.json")),
        Reply::json(fixture("anthropic/response_text.json")),
    ])
    .await;
    let request = ModelRequest {
        system: Some("You are a support agent.".into()),
        tools: order_tools().to_vec(),
        ..request()
    };
    model(&server).complete(&request).await.unwrap();
    model(&server)
        .cache(false)
        .complete(&request)
        .await
        .unwrap();
    let cached = server.received()[0].json();
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(cached["system"][0]["cache_control"], ephemeral);
    assert!(cached["tools"][0].get("cache_control").is_none());
    assert_eq!(cached["tools"][1]["cache_control"], ephemeral);
    let plain = server.received()[1].json();
    assert_eq!(plain["system"], "You are a support agent.");
    assert!(!plain.to_string().contains("cache_control"));
}

#[tokio::test]
async fn strict_is_sent_on_tools_whose_schema_qualifies() {
    let server = TestServer::start(vec![
        Reply::json(fixture("anthropic/response_text.json")),
        Reply::json(fixture("anthropic/response_text.json")),
    ])
    .await;
    let open = reticent::ToolDefinition::new(
        "note",
        "Keep a note.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
    );
    let mut tools = order_tools().to_vec();
    tools.push(open);
    let request = ModelRequest { tools, ..request() };
    model(&server)
        .strict(true)
        .complete(&request)
        .await
        .unwrap();
    model(&server).complete(&request).await.unwrap();
    let strict = server.received()[0].json();
    // closed and unconstrained: strict
    assert_eq!(strict["tools"][0]["strict"], true);
    // `minimum` is not for strict tool use; an object that is not closed neither
    assert!(strict["tools"][1].get("strict").is_none());
    assert!(strict["tools"][2].get("strict").is_none());
    // off by default
    assert!(!server.received()[1].body.contains("\"strict\""));
}
