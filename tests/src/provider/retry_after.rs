//! `retry-after` values no `Duration` can hold, against any provider. Reading them once
//! panicked, on any status, out of `Model::complete` and `Agent::run`.

use reticent::{Agent, AgentError, Model};

use super::{Reply, TestServer};

/// The header values, each too large for a `Duration`.
pub const ABSURD_WAITS: [(&str, &str); 3] = [
    ("retry-after", "1e20"),
    ("retry-after-ms", "1e30"),
    ("retry-after", "18446744073709551616"),
];

/// On a successful answer the header is ignored: the provider and an agent read the answer.
pub async fn absurd_on_success<M: Model>(
    model: impl Fn(&TestServer) -> M,
    answer: impl Fn() -> Reply,
) {
    for (name, value) in ABSURD_WAITS {
        let reply = || answer().header(name, value);
        let server = TestServer::start(vec![reply(), reply()]).await;
        let response = model(&server).complete(&request()).await.unwrap();
        let text = response.text.expect("the answer has text");

        let agent = Agent::builder(model(&server)).build().unwrap();
        let result = agent.run("Where is order ORD-1042?").await.unwrap();
        assert_eq!(result.output, text, "{name}: {value}");
        assert_eq!(server.received().len(), 2, "{name}: {value}");
    }
}

/// On a `429` the wait counts as longer than any `max_retry_delay`: the provider's error
/// (which starts with `message`) comes back at once, from the provider and out of an agent.
pub async fn absurd_on_429<M: Model>(
    model: impl Fn(&TestServer) -> M,
    limited: impl Fn() -> Reply,
    message: &str,
) {
    for (name, value) in ABSURD_WAITS {
        let reply = || limited().header(name, value);
        // a retry would get the server's 500 for "no reply left"
        let server = TestServer::start(vec![reply(), reply()]).await;
        let error = model(&server).complete(&request()).await.unwrap_err();
        assert_eq!(error.status(), Some(429), "{name}: {value}");
        assert!(error.is_retryable(), "{name}: {value}");
        assert!(error.message().contains(message), "{error}");
        assert!(!error.message().contains("attempts"), "{error}");
        assert_eq!(server.received().len(), 1, "{name}: {value}");

        let agent = Agent::builder(model(&server)).build().unwrap();
        let error = agent.run("Where is order ORD-1042?").await.unwrap_err();
        let AgentError::Model { error, .. } = error else {
            panic!("expected a model error, got {error:?}");
        };
        assert_eq!(error.status(), Some(429), "{name}: {value}");
        assert_eq!(server.received().len(), 2, "{name}: {value}");
    }
}

fn request() -> reticent::ModelRequest {
    reticent::ModelRequest {
        system: None,
        messages: vec![reticent::Message::user("Where is order ORD-1042?")],
        tools: Vec::new(),
    }
}
