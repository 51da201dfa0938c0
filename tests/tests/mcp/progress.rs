//! Over MCP, with rmcp's own client: a tool's progress as `notifications/progress` (only for a
//! request with a `progressToken`), its log lines as `notifications/message` (only at or above
//! the level the client asked for), events on the call's span, and structured output
//! (`outputSchema`, `structuredContent`).
// MCP logging is deprecated by the 2026-07-28 protocol (SEP-2577), and still in use.
#![allow(deprecated)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reticent::BuildError;
use reticent::mcp::McpServer;
use reticent::mcp::rmcp::model::{
    CallToolRequestParams, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, RequestMetaObject, SetLevelRequestParams,
};
use reticent::mcp::rmcp::service::{NotificationContext, RoleClient, RunningService};
use reticent::mcp::rmcp::{ClientHandler, ServiceExt};
use reticent::{
    Tool, ToolContext, ToolDefinition,
    tool::{LogLevel, ToolFuture},
};
use reticent_tests::mcp::text;
use reticent_tests::spans::capture_spans;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Counts to `n`, reporting each step, and logs a line at each level. (No output schema:
/// the opt-out.)
#[reticent::tool(output_schema = false)]
async fn count_to(n: u32, cx: &ToolContext) -> u32 {
    for i in 1..=n {
        cx.progress(f64::from(i), f64::from(n), format!("counted {i}").as_str());
        tokio::task::yield_now().await;
    }
    cx.log(LogLevel::Debug, "debug line");
    cx.log(LogLevel::Info, "info line");
    cx.log(LogLevel::Warning, "warning line");
    cx.log(LogLevel::Error, "error line");
    n
}

/// Summarize an order.
#[reticent::tool]
fn summary(order_id: String) -> Result<Value, reticent::ArgumentError> {
    if order_id == "ORD-1" {
        Ok(json!({"order_id": order_id, "items": 3}))
    } else {
        Err(reticent::ArgumentError::new("no such order"))
    }
}

/// Count the orders.
#[reticent::tool]
fn count_orders() -> u32 {
    3
}

/// Claims an object and returns a number.
#[reticent::tool]
fn liar() -> u32 {
    7
}

/// `tool` with an output schema and a title.
struct Structured<T> {
    tool: T,
    definition: ToolDefinition,
}

impl<T: Tool> Structured<T> {
    fn new(tool: T, schema: Value) -> Self {
        let definition = tool
            .definition()
            .clone()
            .with_title(format!("The {} tool", tool.definition().name))
            .with_output_schema(schema);
        Self { tool, definition }
    }
}

impl<T: Tool> Tool for Structured<T> {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, args: Value, cx: ToolContext) -> ToolFuture<'_> {
        self.tool.call(args, cx)
    }
}

fn object_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "items": {"type": "integer"}},
        "required": ["order_id", "items"],
    })
}

fn wrapped_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
        "x-reticent-wrap-result": true,
    })
}

fn server() -> McpServer {
    McpServer::builder()
        .tool(CountTo)
        .tool(Structured::new(Summary, object_schema()))
        .tool(Structured::new(CountOrders, wrapped_schema()))
        .tool(Structured::new(Liar, object_schema()))
        .build()
        .unwrap()
}

/// What the client was sent besides results.
#[derive(Clone, Default)]
struct Notes {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl ClientHandler for Notes {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params);
    }
}

impl Notes {
    fn progress(&self) -> Vec<(f64, Option<f64>, Option<String>)> {
        let progress = self.progress.lock().unwrap();
        progress
            .iter()
            .map(|p| (p.progress, p.total, p.message.clone()))
            .collect()
    }

    fn logs(&self) -> Vec<(String, Value)> {
        let logs = self.logs.lock().unwrap();
        logs.iter()
            .map(|l| {
                assert_eq!(
                    l.logger.as_deref(),
                    Some("count_to"),
                    "the logger is the tool"
                );
                let level = serde_json::to_value(l.level).unwrap();
                (level.as_str().unwrap().to_owned(), l.data.clone())
            })
            .collect()
    }
}

/// A client with `Notes` as its handler, connected to `server` over a duplex.
async fn connect(server: McpServer) -> (RunningService<RoleClient, Notes>, Notes, impl Drop) {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let notes = Notes::default();
    let (server, client) = tokio::join!(server.serve(server_end), notes.clone().serve(client_end));
    (client.unwrap(), notes, server.unwrap())
}

fn call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    CallToolRequestParams::new(name).with_arguments(arguments)
}

fn with_meta(mut params: CallToolRequestParams, meta: RequestMetaObject) -> CallToolRequestParams {
    params.meta = Some(meta);
    params
}

/// Speaks JSON-RPC to `server` by hand: the handshake, then one `tools/call` with `params`;
/// every message received after the handshake, up to the call's response.
async fn raw_call(server: McpServer, params: Value) -> Vec<Value> {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(server.serve(server_end));
    let (read, mut write) = tokio::io::split(client_end);
    let mut lines = BufReader::new(read).lines();
    let mut send = async |message: Value| {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }}),
    )
    .await;
    let reply: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(reply["id"], 1, "{reply}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})).await;
    let mut received = Vec::new();
    loop {
        let line = lines.next_line().await.unwrap().expect("the response");
        let message: Value = serde_json::from_str(&line).unwrap();
        let done = message["id"] == 2;
        received.push(message);
        if done {
            break;
        }
    }
    drop(serving);
    received
}

#[tokio::test]
async fn progress_goes_to_a_client_that_sent_a_progress_token() {
    let received = raw_call(
        server(),
        json!({"name": "count_to", "arguments": {"n": 3}, "_meta": {"progressToken": "tok-1"}}),
    )
    .await;
    // Every notification comes before the result.
    let (result, notes) = received.split_last().unwrap();
    assert_eq!(result["result"]["content"][0]["text"], "3", "{result}");
    assert_eq!(
        notes,
        (1..=3)
            .map(
                |i| json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                    "progressToken": "tok-1",
                    "progress": f64::from(i),
                    "total": 3.0,
                    "message": format!("counted {i}"),
                }})
            )
            .collect::<Vec<_>>()
    );

    // Without a token, none.
    let received = raw_call(server(), json!({"name": "count_to", "arguments": {"n": 3}})).await;
    assert_eq!(received.len(), 1, "only the result: {received:#?}");

    // rmcp's client sends a token with every request, and gets each report.
    let (client, notes, _server) = connect(server()).await;
    let result = client
        .call_tool(call("count_to", json!({"n": 2})))
        .await
        .unwrap();
    assert_eq!(text(&result), "2");
    assert_eq!(
        notes.progress(),
        [
            (1.0, Some(2.0), Some("counted 1".into())),
            (2.0, Some(2.0), Some("counted 2".into())),
        ]
    );
}

#[tokio::test]
async fn log_lines_go_to_a_client_that_asked_at_its_level() {
    let (client, notes, _server) = connect(server()).await;
    let info = client.peer().peer_info().expect("the server's info");
    assert!(info.capabilities.logging.is_some(), "logging is declared");

    // A client opts in: until it sets a level it gets no lines.
    client
        .call_tool(call("count_to", json!({"n": 1})))
        .await
        .unwrap();
    assert_eq!(notes.logs(), []);

    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .unwrap();
    client
        .call_tool(call("count_to", json!({"n": 1})))
        .await
        .unwrap();
    assert_eq!(
        notes.logs(),
        [
            ("warning".to_owned(), json!("warning line")),
            ("error".to_owned(), json!("error line")),
        ]
    );

    // A request's own level (the 2026-07-28 way) wins over the session's.
    notes.logs.lock().unwrap().clear();
    let mut meta = RequestMetaObject::default();
    meta.set_log_level(LoggingLevel::Debug);
    client
        .call_tool(with_meta(call("count_to", json!({"n": 1})), meta))
        .await
        .unwrap();
    let levels: Vec<String> = notes.logs().into_iter().map(|(level, _)| level).collect();
    assert_eq!(levels, ["debug", "info", "warning", "error"]);
}

#[tokio::test]
async fn progress_and_log_lines_are_events_on_the_calls_span() {
    let (spans, _guard) = capture_spans();
    let (client, _notes, _server) = connect(server()).await;
    // Nobody asked over MCP: the span alone watches.
    client
        .call_tool(call("count_to", json!({"n": 2})))
        .await
        .unwrap();
    let span = spans
        .named("execute_tool")
        .into_iter()
        .find(|s| s.field("gen_ai.tool.name") == Some("count_to"))
        .expect("the call's span");
    let events = spans.events_in(&span);
    let progress: Vec<_> = events
        .iter()
        .filter(|e| e.field("message") == Some("tool progress"))
        .map(|e| e.field("progress").unwrap().to_owned())
        .collect();
    assert_eq!(progress, ["1.0", "2.0"]);
    let lines: Vec<_> = events
        .iter()
        .filter(|e| e.field("tool.log") == Some("true"))
        .map(|e| e.field("message").unwrap().to_owned())
        .collect();
    assert_eq!(
        lines,
        ["debug line", "info line", "warning line", "error line"]
    );
}

#[tokio::test]
async fn tools_list_carries_output_schemas_and_titles() {
    let (client, _notes, _server) = connect(server()).await;
    let listed = client.list_all_tools().await.unwrap();
    let listed: Vec<Value> = listed
        .iter()
        .map(|tool| serde_json::to_value(tool).unwrap())
        .collect();
    let tool = |name: &str| {
        listed
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is listed"))
    };
    assert_eq!(tool("summary")["outputSchema"], object_schema());
    assert_eq!(tool("summary")["title"], "The summary tool");
    // The marker is reticent's own: the listed schema is what `structuredContent` holds.
    assert_eq!(
        tool("count_orders")["outputSchema"],
        json!({
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
        })
    );
    assert!(tool("count_to").get("outputSchema").is_none());
}

#[tokio::test]
async fn results_carry_structured_content_and_failures_do_not() {
    let (client, _notes, _server) = connect(server()).await;
    let result = client
        .call_tool(call("summary", json!({"order_id": "ORD-1"})))
        .await
        .unwrap();
    let expected = json!({"order_id": "ORD-1", "items": 3});
    assert_eq!(result.structured_content, Some(expected.clone()));
    assert_eq!(
        serde_json::from_str::<Value>(text(&result)).unwrap(),
        expected
    );

    let result = client
        .call_tool(call("count_orders", json!({})))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"result": 3})));
    assert_eq!(text(&result), "3");

    let result = client
        .call_tool(call("summary", json!({"order_id": "ORD-2"})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(result.structured_content, None);
    assert_eq!(
        text(&result),
        "Invalid arguments for tool 'summary': no such order"
    );

    // A tool whose output breaks its own schema: the text, and no structured content the
    // client would refuse.
    let result = client.call_tool(call("liar", json!({}))).await.unwrap();
    assert_ne!(result.is_error, Some(true));
    assert_eq!(result.structured_content, None);
    assert_eq!(text(&result), "7");
}

#[test]
fn an_output_schema_must_be_an_object_schema() {
    let error = McpServer::builder()
        .tool(Structured::new(CountOrders, json!({"type": "integer"})))
        .build()
        .unwrap_err();
    assert_eq!(
        error,
        BuildError::InvalidOutputSchema {
            name: "count_orders".into()
        }
    );
    assert!(
        error.to_string().contains("x-reticent-wrap-result"),
        "{error}"
    );
}

#[tokio::test]
async fn a_connection_whose_input_closes_stops_its_running_calls_at_once() {
    static SAW_CANCELLATION: AtomicBool = AtomicBool::new(false);
    /// Waits for its token.
    #[reticent::tool]
    async fn wait(cx: &ToolContext) -> &'static str {
        cx.cancellation().cancelled().await;
        SAW_CANCELLATION.store(true, Ordering::SeqCst);
        "cancelled"
    }
    let server = McpServer::builder().tool(Wait).build().unwrap();
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (running, client) = tokio::join!(server.serve(server_end), ().serve(client_end));
    let (running, client) = (running.unwrap(), client.unwrap());
    let peer = client.peer().clone();
    let pending = tokio::spawn(async move { peer.call_tool(call("wait", json!({}))).await });
    // Give the call time to start, then close the client's end.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let _ = client.cancel().await;
    // rmcp alone would wait five seconds for the call before it stopped it.
    let ended = tokio::time::timeout(Duration::from_secs(1), running.waiting()).await;
    assert!(
        ended.is_ok(),
        "the server was still serving a second after its input closed"
    );
    assert!(SAW_CANCELLATION.load(Ordering::SeqCst), "the tool was told");
    assert!(pending.await.unwrap().is_err(), "the client got no result");
}
