//! `McpServerBuilder::sse_polling` (SEP-1699): a call that runs past the window has its event
//! stream closed mid-call; its client resumes with `Last-Event-ID` and gets the rest — the
//! progress it missed, once, and the result, written by the same rules (a withheld message
//! never on the wire). Seen on the wire through the tower service, by `McpClient` over HTTP,
//! which follows such a server to the result, and by rmcp's client, asked a question by a
//! tool whose stream was closed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use reticent::mcp::rmcp::ClientHandler;
use reticent::mcp::rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, ErrorData, Implementation, ProtocolVersion,
};
use reticent::mcp::rmcp::service::{RequestContext, RoleClient, ServiceExt};
use reticent::mcp::rmcp::transport::StreamableHttpClientTransport;
use reticent::mcp::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use reticent::mcp::rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService,
};
use reticent::mcp::{AskError, Elicited, HttpSessions, McpClient, McpServer};
use reticent::{Agent, AgentEvent, CancellationToken, ModelResponse, ScriptedModel, ToolContext};
use reticent_tests::mcp::{Failures, assert_model_never_saw, run_to_end};
use reticent_tests::transcript::shown_unfenced;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tower_service::Service;

use crate::latency::plain_http;

const SECRET: &str = "postgres://ledger:p0ll-c4n4ry-3f1a@10.9.8.7/ledger";

/// How long a request's stream stays open on the servers here.
const OPEN_FOR: Duration = Duration::from_millis(200);
/// The hint the servers here send before closing a stream.
const RETRY: Duration = Duration::from_millis(50);

#[derive(Debug, thiserror::Error)]
#[error("ledger unreachable at {0}")]
struct LedgerError(String);

/// Reports progress, runs past two windows, reports again, then fails with a secret.
#[reticent::tool(read_only)]
async fn settle(cx: &ToolContext) -> Result<String, LedgerError> {
    cx.progress(1.0, 2.0, "started");
    tokio::time::sleep(OPEN_FOR * 2).await;
    cx.progress(2.0, 2.0, "halfway");
    tokio::time::sleep(OPEN_FOR).await;
    Err(LedgerError(SECRET.into()))
}

/// Reports progress every 100 ms for 900 ms, then answers.
#[reticent::tool(read_only)]
async fn reconcile(cx: &ToolContext) -> &'static str {
    for step in 1..=9 {
        cx.progress(f64::from(step), 9.0, None);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    "reconciled 9 batches"
}

fn server(failures: &Failures) -> McpServer {
    McpServer::builder()
        .name("ledger")
        .tool(Settle)
        .tool(Reconcile)
        .on_failure(failures.hook())
        .sse_polling(OPEN_FOR, RETRY)
        .build()
        .unwrap()
}

/// One server-sent event as it was on the wire.
#[derive(Debug, Default)]
struct Event {
    id: Option<String>,
    retry: Option<u64>,
    data: String,
}

/// The events of an event stream's body.
fn events(body: &str) -> Vec<Event> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut event = Event::default();
            for line in block.lines() {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "id" => event.id = Some(value.to_owned()),
                    "retry" => event.retry = value.parse().ok(),
                    "data" => event.data.push_str(value),
                    _ => {}
                }
            }
            event
        })
        .collect()
}

/// A client of the tower service, speaking HTTP as the protocol says, by hand.
struct Wire {
    service: StreamableHttpService<McpServer, HttpSessions>,
    session: Option<String>,
    /// Every body received, as it was.
    seen: String,
}

impl Wire {
    /// A client of `server` served with `config`, its session open when the server keeps
    /// sessions.
    async fn open(server: &McpServer, config: StreamableHttpServerConfig) -> Self {
        let stateful = config.legacy_session_mode;
        let mut wire = Self {
            service: server.http_service(config),
            session: None,
            seen: String::new(),
        };
        if stateful {
            let (status, _) = wire
                .post(
                    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"}}}),
                )
                .await;
            assert_eq!(status, StatusCode::OK);
            let (status, _) = wire
                .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
            assert_eq!(status, StatusCode::ACCEPTED);
        }
        wire
    }

    async fn send(
        &mut self,
        request: http::request::Builder,
        body: String,
    ) -> (StatusCode, String) {
        let mut request = request
            .uri("http://localhost/mcp")
            .header("host", "localhost");
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        let response = self
            .service
            .call(request.body(body).unwrap())
            .await
            .unwrap();
        let status = response.status();
        if let Some(session) = response.headers().get("mcp-session-id") {
            self.session = Some(session.to_str().unwrap().to_owned());
        }
        let body = tokio::time::timeout(Duration::from_secs(10), response.into_body().collect())
            .await
            .expect("each stream ends within its window")
            .unwrap()
            .to_bytes();
        let body = String::from_utf8(body.to_vec()).unwrap();
        self.seen.push_str(&body);
        (status, body)
    }

    async fn post(&mut self, message: Value) -> (StatusCode, String) {
        let request = Request::builder()
            .method(Method::POST)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        self.send(request, message.to_string()).await
    }

    async fn resume(&mut self, last_event_id: &str) -> (StatusCode, String) {
        let request = Request::builder()
            .method(Method::GET)
            .header("accept", "text/event-stream")
            .header("last-event-id", last_event_id);
        self.send(request, String::new()).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_closed_mid_call_is_resumed_to_the_result_and_the_secret_stays_home() {
    let failures = Failures::default();
    let config = StreamableHttpServerConfig::default();
    let mut wire = Wire::open(&server(&failures), config).await;

    let (status, body) = wire
        .post(
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "settle", "arguments": {}, "_meta": {"progressToken": "p7"}}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let first = events(&body);
    // The stream opens with an event to resume from, and the hint.
    assert!(
        first[0].id.is_some() && first[0].data.is_empty(),
        "{first:?}"
    );
    assert_eq!(first[0].retry, Some(RETRY.as_millis() as u64));
    // It closes before the answer, with the hint again.
    let last = first.last().unwrap();
    assert_eq!(
        (last.id.as_deref(), last.retry),
        (None, Some(50)),
        "{first:?}"
    );
    let mut messages: Vec<Value> = first
        .iter()
        .filter_map(|event| serde_json::from_str(&event.data).ok())
        .collect();
    assert!(!messages.iter().any(|m| m["id"] == 7), "{messages:?}");

    let mut last_id = first.iter().rev().find_map(|e| e.id.clone()).unwrap();
    let mut resumed = 0;
    while !messages.iter().any(|m| m["id"] == 7) {
        resumed += 1;
        assert!(
            resumed <= 20,
            "no answer after {resumed} resumes: {messages:?}"
        );
        tokio::time::sleep(RETRY).await;
        let (status, body) = wire.resume(&last_id).await;
        assert_eq!(status, StatusCode::OK);
        for event in events(&body) {
            if let Some(id) = event.id {
                last_id = id;
            }
            messages.extend(serde_json::from_str::<Value>(&event.data).ok());
        }
    }

    let progress: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| &m["params"]["message"])
        .collect();
    assert_eq!(progress, ["started", "halfway"], "each report once");
    let answer = messages.iter().find(|m| m["id"] == 7).unwrap();
    assert_eq!(
        answer["result"],
        json!({"content": [{"type": "text", "text": "Tool 'settle' failed with LedgerError"}],
               "isError": true}),
    );
    assert!(
        !wire.seen.contains("p0ll-c4n4ry"),
        "the secret reached the wire: {}",
        wire.seen
    );
    assert!(failures.one().error.to_string().contains(SECRET));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_id_that_names_no_stream_resumes_nothing() {
    let config = StreamableHttpServerConfig::default();
    let mut wire = Wire::open(&server(&Failures::default()), config).await;
    let (_, body) = wire
        .post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    let known = events(&body)[0].id.clone().unwrap();
    let (key, _) = known.rsplit_once('-').unwrap();
    let (status, body) = wire.resume(&format!("{key}-0")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains(r#""tools""#), "the stream is kept: {body}");

    for unknown in ["00000000000000000000000000000000-0", "0/0", "nonsense"] {
        let (status, body) = wire.resume(unknown).await;
        assert_eq!(status, StatusCode::OK, "{unknown}");
        assert!(events(&body).is_empty(), "{unknown}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_answers_on_the_request_stream_however_long_the_call() {
    let config = StreamableHttpServerConfig::default().with_legacy_session_mode(false);
    let mut wire = Wire::open(&server(&Failures::default()), config).await;
    let (status, body) = wire
        .post(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "reconcile", "arguments": {}}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let answer: Vec<Value> = events(&body)
        .iter()
        .filter_map(|event| serde_json::from_str(&event.data).ok())
        .filter(|message: &Value| message["id"] == 3)
        .collect();
    assert_eq!(
        answer[0]["result"]["content"][0]["text"], "reconciled 9 batches",
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_client_follows_a_polling_server_to_the_result_with_every_report() {
    let shutdown = CancellationToken::new();
    let failures = Failures::default();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let config = StreamableHttpServerConfig::default().with_cancellation_token(shutdown.clone());
    tokio::spawn(server(&failures).serve_http(listener, config));

    let client = McpClient::builder()
        .timeout(Duration::from_secs(20))
        .http(url)
        .await
        .unwrap();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "reconcile", json!({})),
        ModelResponse::tool_call("c2", "settle", json!({})),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tools(client.tools().await.unwrap())
        .build()
        .unwrap();
    let (events, result) = run_to_end(&agent).await;

    // Both calls run past the window (200 ms): each was answered on a resumed stream.
    let steps: Vec<f64> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolProgress { tool, progress, .. } if tool == "reconcile" => {
                Some(*progress)
            }
            _ => None,
        })
        .collect();
    assert_eq!(steps, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    assert_eq!(
        shown_unfenced(&result.messages),
        [
            r#"{"result":"reconciled 9 batches"}"#,
            "Tool 'settle' failed with McpToolError"
        ],
    );
    assert_model_never_saw("p0ll-c4n4ry", &result, &model);
    assert!(failures.one().error.to_string().contains(SECRET));
    shutdown.cancel();
}

/// Asks the client's user after its stream was closed, and answers with what they said.
#[reticent::tool(read_only)]
async fn confirm_export(cx: &ToolContext) -> Result<String, AskError> {
    tokio::time::sleep(OPEN_FOR + OPEN_FOR / 2).await;
    let form = ElicitationSchema::builder()
        .required_string("reason")
        .build_unchecked();
    Ok(
        match cx
            .elicit("Why export?", form, Duration::from_secs(10))
            .await?
        {
            Elicited::Accepted(content) => format!("exporting: {}", content["reason"]),
            _ => "not exporting".to_owned(),
        },
    )
}

/// A client whose user answers every question with a reason.
#[derive(Clone, Default)]
struct Answers(Arc<Mutex<Vec<String>>>);

impl ClientHandler for Answers {
    fn get_info(&self) -> ClientConfig {
        let capabilities = ClientCapabilities::builder().enable_elicitation().build();
        ClientConfig::new(capabilities, Implementation::new("user", "1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            panic!("a form: {request:?}")
        };
        self.0.lock().unwrap().push(message);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"reason": "audit"})))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_the_tool_asks_after_its_stream_closed_reaches_the_client() {
    let shutdown = CancellationToken::new();
    let server = McpServer::builder()
        .tool(ConfirmExport)
        .sse_polling(OPEN_FOR, RETRY)
        .build()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let config = StreamableHttpServerConfig::default().with_cancellation_token(shutdown.clone());
    tokio::spawn(server.serve_http(listener, config));

    let answers = Answers::default();
    let client = answers
        .clone()
        .serve(StreamableHttpClientTransport::with_client(
            plain_http().build().unwrap(),
            StreamableHttpClientTransportConfig::with_uri(url),
        ))
        .await
        .unwrap();
    let called = client.call_tool(CallToolRequestParams::new("confirm_export"));
    let result = tokio::time::timeout(Duration::from_secs(20), called)
        .await
        .expect("the call is answered")
        .unwrap();
    assert_eq!(
        result.content[0].as_text().map(|text| text.text.as_str()),
        Some(r#"exporting: "audit""#),
        "{result:?}"
    );
    assert_eq!(*answers.0.lock().unwrap(), ["Why export?"]);
    shutdown.cancel();
}
