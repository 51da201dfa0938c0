//! A `tools/call`'s idempotency key over MCP: a client that sends its own key in
//! `_meta.idempotencyKey` gives the call the same key however often it sends it, and
//! `McpClient` sends the calling context's key, so a call an agent makes through it keeps its
//! key on the server too.

use reticent::mcp::rmcp::model::{ClientRequest, CustomRequest, ServerResult};
use reticent::mcp::rmcp::service::ServiceError;
use reticent::mcp::rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use reticent::mcp::{McpClient, McpServer};
use reticent::{CancellationToken, ToolContext};
use reticent_tests::mcp::{Failures, connect, find_tool};
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// Say which key the call has.
#[reticent::tool(destructive)]
fn book(
    /// The seat.
    seat: String,
    cx: &ToolContext,
) -> String {
    format!("{seat} {}", cx.idempotency_key())
}

fn server() -> McpServer {
    McpServer::builder()
        .name("bookings")
        .tool(Book)
        .on_failure(Failures::default().hook())
        .build()
        .unwrap()
}

/// `tools/call` of `book` with `meta` as its `_meta`: the key the tool saw, or the error.
async fn book_with(
    connection: &reticent_tests::mcp::Connection,
    meta: Option<Value>,
) -> Result<String, ServiceError> {
    let mut params = json!({"name": "book", "arguments": {"seat": "12A"}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    let request = ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(params)));
    let result = match connection.client.send_request(request).await? {
        ServerResult::CustomResult(result) => result.0,
        other => serde_json::to_value(other).unwrap(),
    };
    assert_eq!(result["isError"], false, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    Ok(text.strip_prefix("12A ").unwrap().to_owned())
}

#[tokio::test]
async fn a_request_sent_again_with_the_clients_key_keeps_the_calls_key() {
    let connection = connect(server()).await;
    let key = |k: &str| Some(json!({ "idempotencyKey": k }));

    let first = book_with(&connection, key("order-7-seat")).await.unwrap();
    let again = book_with(&connection, key("order-7-seat")).await.unwrap();
    assert_eq!(first, again);
    assert_eq!(first.len(), 36, "{first}");
    // Not the client's key as it is: another server's tool, or another tool, gets another.
    assert_ne!(first, "order-7-seat");
    assert_ne!(
        first,
        book_with(&connection, key("order-8-seat")).await.unwrap()
    );

    // Without a key, each request is a call of its own.
    let a = book_with(&connection, None).await.unwrap();
    let b = book_with(&connection, Some(json!({"other": 1})))
        .await
        .unwrap();
    assert_ne!(a, b);
    assert_ne!(a, first);

    // A key the client counts on and the server cannot use is refused, not ignored.
    for bad in [
        json!(""),
        json!("two words"),
        json!(7),
        json!("k".repeat(256)),
    ] {
        let error = book_with(&connection, Some(json!({ "idempotencyKey": bad })))
            .await
            .unwrap_err();
        let ServiceError::McpError(error) = error else {
            panic!("expected a JSON-RPC error, got {error:?}")
        };
        assert!(error.message.contains("idempotencyKey"), "{error:?}");
    }
}

#[tokio::test]
async fn mcp_client_sends_the_calling_contexts_key() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    let config = StreamableHttpServerConfig::default().with_cancellation_token(shutdown.clone());
    tokio::spawn(server().serve_http(listener, config));
    let _stop = shutdown.drop_guard();

    let client = McpClient::builder().http(&url).await.unwrap();
    let tools = client.tools().await.unwrap();
    let book = find_tool(&tools, "book");
    let call = |key: &str| {
        let cx = ToolContext::new("call_1", "book").with_idempotency_key(key.to_owned());
        book.call(json!({"seat": "12A"}), cx)
    };
    let first = call("run-1-call-1").await.unwrap();
    let again = call("run-1-call-1").await.unwrap();
    let other = call("run-1-call-2").await.unwrap();
    assert_eq!(first, again);
    assert_ne!(first, other);
}
