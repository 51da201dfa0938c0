//! `McpServer::http_service`: rmcp's streamable HTTP transport, called as the tower service it
//! is, with the same results as over stdio.

use std::time::Duration;

use http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use reticent::mcp::rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService,
};
use reticent::mcp::{HttpSessions, McpServer};
use reticent_tests::mcp::Failures;
use serde_json::{Value, json};
use tower_service::Service;

const SECRET: &str = "amqp://billing:c4n4ry-9d1e@10.1.2.3/vhost";

#[derive(Debug, thiserror::Error)]
#[error("queue unreachable at {0}")]
struct QueueError(String);

/// Queue an invoice for sending.
#[reticent::tool(destructive, open_world)]
fn queue_invoice(
    /// The invoice id.
    invoice: String,
) -> Result<String, QueueError> {
    let _ = invoice;
    Err(QueueError(SECRET.into()))
}

/// Add two numbers.
#[reticent::tool(read_only, idempotent)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// A client of the tower service that keeps its session id.
struct Client {
    service: StreamableHttpService<McpServer, HttpSessions>,
    session: Option<String>,
    next_id: u64,
}

impl Client {
    /// POSTs one JSON-RPC message; returns the status and the JSON-RPC messages in the body.
    async fn post(&mut self, message: Value) -> (StatusCode, Vec<Value>) {
        let mut request = Request::builder()
            .method(Method::POST)
            .uri("http://localhost/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        let request = request.body(message.to_string()).unwrap();
        let response = self.service.call(request).await.unwrap();
        let status = response.status();
        if let Some(session) = response.headers().get("mcp-session-id") {
            self.session = Some(session.to_str().unwrap().to_owned());
        }
        let body = tokio::time::timeout(Duration::from_secs(10), response.into_body().collect())
            .await
            .expect("the response ends")
            .unwrap()
            .to_bytes();
        let body = String::from_utf8(body.to_vec()).unwrap();
        (status, messages(&body))
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let (status, messages) = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        assert_eq!(status, StatusCode::OK, "{messages:?}");
        messages
            .into_iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no reply to request {id}"))
    }
}

/// The JSON-RPC messages of a body that is either JSON or server-sent events.
fn messages(body: &str) -> Vec<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return vec![value];
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

#[tokio::test]
async fn the_http_service_serves_tools_with_the_same_rules() {
    let failures = Failures::default();
    let server = McpServer::builder()
        .name("billing")
        .tool(Add)
        .tool(QueueInvoice)
        .on_failure(failures.hook())
        .build()
        .unwrap();
    let mut client = Client {
        service: server.http_service(StreamableHttpServerConfig::default()),
        session: None,
        next_id: 0,
    };

    let init = client
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}),
        )
        .await;
    assert_eq!(init["result"]["serverInfo"]["name"], "billing", "{init}");
    assert!(client.session.is_some(), "a session was opened");
    let (status, _) = client
        .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);

    let listed = client.request("tools/list", json!({})).await;
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(
        tools[0]["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false,
               "idempotentHint": true, "openWorldHint": false})
    );

    let sum = client
        .request(
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        )
        .await;
    assert_eq!(sum["result"]["isError"], false, "{sum}");
    assert_eq!(sum["result"]["content"][0]["text"], "5");

    let bad = client
        .request("tools/call", json!({"name": "add", "arguments": {"a": 2}}))
        .await;
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(
        bad["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Invalid arguments for tool 'add': "),
        "{bad}"
    );

    let failed = client
        .request(
            "tools/call",
            json!({"name": "queue_invoice", "arguments": {"invoice": "INV-7"}}),
        )
        .await;
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    assert_eq!(
        failed["result"]["content"],
        json!([{"type": "text", "text": "Tool 'queue_invoice' failed with QueueError"}])
    );
    assert!(!failed.to_string().contains("c4n4ry"), "{failed}");

    let unknown = client
        .request("tools/call", json!({"name": "nope", "arguments": {}}))
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    let all = failures.all();
    assert_eq!(all.len(), 3, "{all:#?}");
    let queue = all.iter().find(|f| f.tool == "queue_invoice").unwrap();
    assert!(queue.error.to_string().contains(SECRET));
}
