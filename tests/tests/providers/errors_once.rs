//! Errors say their message once: the `Display` of each error of the crate and the `Display`s
//! of its `source()` chain never repeat one another, so a caller that prints the chain
//! (`Error: the model call failed: model error (HTTP 404): Not Found`) reads each part once;
//! and every `ToolFailure::error_chain()` says each part once too.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use reticent::{
    Agent, AgentError, Message, Model, ModelRequest, ResumeError, ScriptedModel, ToolFailure,
};
use reticent::{ModelResponse, ToolFailureOptions};
use reticent_tests::provider::{Reply, TestServer, anthropic, openai};
use serde_json::json;

/// The messages of `error` and its sources, in order.
fn messages(error: &(dyn StdError + 'static)) -> Vec<String> {
    let mut messages = vec![error.to_string()];
    let mut source = error.source();
    while let Some(next) = source {
        messages.push(next.to_string());
        assert!(messages.len() < 32, "the chain of {error:?} is too deep");
        source = next.source();
    }
    messages
}

/// Fails if a part of `text` (split at `: `) comes twice.
fn assert_no_part_repeats(what: &str, text: &str) {
    let parts: Vec<&str> = text.split(": ").map(str::trim).collect();
    for (i, part) in parts.iter().enumerate() {
        assert!(
            part.is_empty() || !parts[..i].contains(part),
            "{what}: `{part}` is said twice in `{text}`"
        );
    }
}

/// Fails if an error of the chain says what one before it said, or a part repeats.
fn assert_says_once(what: &str, error: &(dyn StdError + 'static)) {
    let messages = messages(error);
    for (i, earlier) in messages.iter().enumerate() {
        for later in &messages[i + 1..] {
            assert!(
                !earlier.contains(later.as_str()),
                "{what}: `{later}` is said again by its source, after `{earlier}`"
            );
        }
    }
    assert_no_part_repeats(what, &messages.join(": "));
}

fn request() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::user("Where is order ORD-1042?")],
        ..ModelRequest::default()
    }
}

/// Every model error the providers make, from every kind of failure, and the agent's error
/// around it.
#[tokio::test]
async fn the_providers_errors_and_the_agents_say_each_message_once() {
    let not_found = || Reply::status(404, "");
    let invalid = || {
        Reply::status(
            400,
            json!({"error": {"type": "invalid_request_error", "message": "bad tools"}}).to_string(),
        )
    };
    let html = || Reply::json("<html>oops</html>");
    let overloaded = || {
        Reply::status(
            529,
            json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string(),
        )
    };
    let cases: Vec<(&str, Vec<Reply>)> = vec![
        ("an empty 404", vec![not_found()]),
        ("a 400 with the provider's message", vec![invalid()]),
        ("a body that is not JSON", vec![html()]),
        (
            "retries spent",
            vec![overloaded(), overloaded(), overloaded()],
        ),
    ];
    for (name, replies) in cases {
        for provider in ["openai", "anthropic"] {
            let model = |server: &TestServer| -> Arc<dyn Model> {
                match provider {
                    "openai" => Arc::new(openai(server)),
                    _ => Arc::new(anthropic(server)),
                }
            };
            let server = TestServer::start(replies.clone()).await;
            let error = model(&server).complete(&request()).await.expect_err(name);
            assert_says_once(&format!("{provider}, {name}"), &error);

            let server = TestServer::start(replies.clone()).await;
            let agent = Agent::builder(model(&server)).build().unwrap();
            let run = agent.run("Where is ORD-1042?").await.expect_err(name);
            assert!(matches!(run, AgentError::Model { .. }), "{run:?}");
            assert_says_once(&format!("{provider}, {name}, the run"), &run);
            let resumed = ResumeError::from(run);
            assert_says_once(&format!("{provider}, {name}, resumed"), &resumed);
        }
    }
}

#[tokio::test]
async fn transport_failures_and_broken_streams_say_each_message_once() {
    // Nothing listens there: the connection is refused.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        format!("http://127.0.0.1:{port}")
    };
    let refused = reticent::providers::openai::OpenAi::new("sk-test", "gpt-4o-mini")
        .base_url(format!("{closed}/v1"))
        .max_retries(0)
        .timeout(Duration::from_secs(5));
    let error = refused.complete(&request()).await.unwrap_err();
    assert!(error.message().starts_with("could not connect"), "{error}");
    assert!(
        error.source().is_some(),
        "the transport error is the source"
    );
    assert_says_once("connection refused", &error);

    // A stream cut after its first text.
    let chunk = |delta: serde_json::Value| {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
        )
    };
    let body =
        chunk(json!({"role": "assistant", "content": "Hel"})) + &chunk(json!({"content": "lo"}));
    let cut = body.len() - 4;
    let server = TestServer::start(vec![
        Reply::events(body)
            .per_event(Duration::from_millis(5))
            .cut_after(cut),
    ])
    .await;
    let model = openai(&server);
    let request = request();
    let mut stream = model.stream(&request);
    let mut error = None;
    while let Some(item) = stream.next().await {
        if let Err(e) = item {
            error = Some(e);
        }
    }
    let error = error.expect("the stream breaks off");
    assert!(error.message().contains("broke off"), "{error}");
    assert_says_once("a cut stream", &error);
}

#[derive(Debug, thiserror::Error)]
#[error("connection pool exhausted")]
struct PoolError;

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("no order {0}; order ids look like ORD-1042")]
    #[disclose(argument)]
    NotFound(String),
    #[error("database unavailable")]
    Database(#[source] PoolError),
}

/// A value that cannot be JSON: a map with non-string keys.
#[derive(Debug)]
struct NotJson;

impl serde::Serialize for NotJson {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(&[1, 2], &3)?;
        map.end()
    }
}

/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: String) -> Result<String, OrderError> {
    match order_id.as_str() {
        "ORD-0000" => Err(OrderError::Database(PoolError)),
        _ => Err(OrderError::NotFound(order_id)),
    }
}

/// Report on an order.
#[reticent::tool]
fn report() -> NotJson {
    NotJson
}

/// Wait.
#[reticent::tool(timeout = "10ms")]
async fn wait() -> String {
    tokio::time::sleep(Duration::from_secs(5)).await;
    "done".into()
}

#[tokio::test]
async fn every_tool_failures_error_chain_says_each_part_once() {
    let call = |id: &str, name: &str, args| ModelResponse::tool_call(id, name, args);
    let model = ScriptedModel::new(vec![
        call("c1", "lookup_order", json!({"order_id": "1042"})),
        call("c2", "lookup_order", json!({"order_id": "ORD-0000"})),
        call("c3", "wait", json!({})),
        call("c4", "lookup_order", json!({"order": 1})),
        call("c5", "no_such_tool", json!({})),
        // an output that cannot be JSON is fatal: the run ends with it
        call("c6", "report", json!({})),
    ]);
    let agent = Agent::builder(model)
        .tool(LookupOrder)
        .tool(Report)
        .tool(Wait)
        .max_consecutive_failures(10)
        .failure_options(ToolFailureOptions::default())
        .build()
        .unwrap();
    let error = agent.run("Look it up.").await.unwrap_err();
    assert!(matches!(error, AgentError::ToolFailed { .. }), "{error:?}");
    assert_says_once("the fatal failure", &error);
    let result = error.into_partial();
    let failures: &[ToolFailure] = &result.tool_failures;
    assert_eq!(failures.len(), 6, "{failures:#?}");
    for failure in failures {
        let what = format!("{} ({})", failure.call_id, failure.kind);
        assert_no_part_repeats(&what, &failure.error_chain());
    }
}
