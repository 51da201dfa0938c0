//! `McpServer::serve_http` answers a stateful call without a 40 ms stall. A stateful
//! session's answer is an event stream the server writes in small pieces; without
//! `TCP_NODELAY` on the accepted connection, Nagle's algorithm holds a piece until the
//! client's delayed acknowledgement, and each call took 44 ms over loopback where it takes a
//! fraction of a millisecond.
//!
//! The one timed assertion of the suite, and not a speed benchmark (those are ratios, in
//! `benches/`): a bound of 20 ms, a median of five calls, sits far above a call's cost even
//! in a debug build on a loaded machine, and far below the stall it guards against, which
//! delayed acknowledgements make 40 ms at least on Linux.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reticent::CancellationToken;
use reticent::mcp::McpServer;
use reticent::mcp::rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// Add two numbers.
#[reticent::tool(read_only, idempotent)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// A client of one session, on one kept-alive connection.
struct Session {
    http: reqwest::Client,
    url: String,
    id: Option<String>,
}

impl Session {
    /// POSTs `message`; the status and the body, read to its end.
    async fn post(&mut self, message: &Value) -> (u16, String) {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(message.to_string());
        if let Some(id) = &self.id {
            request = request
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", "2025-11-25");
        }
        let exchange = async {
            let response = request.send().await.expect("the server answers");
            let status = response.status().as_u16();
            if let Some(id) = response.headers().get("mcp-session-id") {
                self.id = Some(id.to_str().unwrap().to_owned());
            }
            (status, response.text().await.expect("the body is read"))
        };
        tokio::time::timeout(Duration::from_secs(10), exchange)
            .await
            .expect("the exchange ends")
    }
}

#[tokio::test]
async fn a_stateful_call_over_serve_http_does_not_wait_for_a_delayed_ack() {
    let server = McpServer::builder().tool(Add).build().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    let config = StreamableHttpServerConfig::default().with_cancellation_token(shutdown.clone());
    tokio::spawn(server.serve_http(listener, config));
    let _stop = shutdown.drop_guard();

    // One connection, kept alive from call to call.
    let http = plain_http().pool_max_idle_per_host(1).build().unwrap();
    let mut session = Session {
        http,
        url,
        id: None,
    };
    let (status, body) = session
        .post(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "latency", "version": "1"}}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(session.id.is_some(), "the session is stateful: {body}");
    let (status, body) = session
        .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(status, 202, "{body}");

    let mut elapsed = Vec::new();
    for id in 1..=5 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "add", "arguments": {"a": id, "b": 1}}});
        let start = Instant::now();
        let (status, body) = session.post(&call).await;
        elapsed.push(start.elapsed());
        assert_eq!(status, 200, "{body}");
        assert!(body.contains(&format!(r#""text":"{}""#, id + 1)), "{body}");
    }
    elapsed.sort();
    let median = elapsed[elapsed.len() / 2];
    assert!(
        median < Duration::from_millis(20),
        "a stateful call took {median:?} (all: {elapsed:?}); a stall of 40 ms or more is \
         Nagle's algorithm waiting for a delayed ACK: is TCP_NODELAY set?"
    );
}

/// A client of plain HTTP: reqwest wants a TLS setup to build one, so it gets one that trusts
/// nobody.
pub(crate) fn plain_http() -> reqwest::ClientBuilder {
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(rustls::RootCertStore::empty())
    .with_no_client_auth();
    reqwest::Client::builder().tls_backend_preconfigured(tls)
}
