//! `McpClient` against a hostile server: raw JSON-RPC that never answers `tools/list`, answers
//! it with JSON cut short or with a schema nested 200 deep, answers a call with a line that is
//! not JSON or with 17 MiB — over stdio (the `hostile_mcp` program) and over HTTP (a hyper
//! handler here, answering as an event stream it keeps open, or as a JSON body). rmcp skips
//! what it cannot decode, and such a call used to wait for ever. Each case here ends with a
//! clear error well before the client's timeouts (set to 10 s, so that a case that regressed
//! fails as a timeout rather than hang), and the default timeouts end the silent ones.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use http::{Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper_util::rt::TokioIo;
use reticent::mcp::{McpCallError, McpClient, McpClientError};
use reticent::{
    ModelResponse, Tool, ToolCall, ToolContext, ToolError, ToolFailureOptions,
    failures::EffectOutcome,
};
use reticent_tests::mcp::hostile::{Misbehaviour, answer};
use reticent_tests::mcp::{assert_model_never_saw, find_tool, run_agent};
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// Longer than any case takes, shorter than a hang: every case runs under it.
const BOUND: Duration = Duration::from_secs(60);

/// The client's timeouts in the cases that must end before them.
const PATIENT: Duration = Duration::from_secs(10);

/// How the hostile server is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Over {
    /// The `hostile_mcp` program, over its stdin and stdout.
    Stdio,
    /// HTTP; each answer an event of a stream that stays open after it.
    Events,
    /// HTTP; each answer a JSON body.
    Json,
}

const EVERY_WAY: [Over; 3] = [Over::Stdio, Over::Events, Over::Json];

/// The hostile server over HTTP, served until this is dropped.
struct HostileHttp {
    url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for HostileHttp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Body = BoxBody<Bytes, Infallible>;

fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = status;
    response
}

/// Answers one HTTP request as the streamable HTTP transport asks, the JSON-RPC as
/// `misbehaviour` says. An answer withheld is a response that never comes (JSON) or an event
/// stream that never sends (events).
async fn handle(
    request: Request<Incoming>,
    misbehaviour: Misbehaviour,
    over: Over,
) -> Result<Response<Body>, Infallible> {
    match *request.method() {
        Method::POST => {}
        Method::DELETE => return Ok(empty(StatusCode::OK)),
        // No stream of the session's own.
        _ => return Ok(empty(StatusCode::METHOD_NOT_ALLOWED)),
    }
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return Ok(empty(StatusCode::BAD_REQUEST));
    };
    if message.get("id").is_none() {
        return Ok(empty(StatusCode::ACCEPTED));
    }
    let replies = answer(misbehaviour, &message);
    let response = Response::builder()
        .status(StatusCode::OK)
        .header("mcp-session-id", "hostile-session");
    if over == Over::Json || message["method"] == "initialize" {
        let Some(reply) = replies.last() else {
            std::future::pending::<()>().await;
            unreachable!()
        };
        let body = Full::new(Bytes::from(reply.clone())).boxed();
        return Ok(response
            .header("content-type", "application/json")
            .body(body)
            .unwrap());
    }
    let events = replies
        .into_iter()
        .map(|reply| Ok(Frame::data(Bytes::from(format!("data: {reply}\n\n")))));
    let open = futures::stream::iter(events).chain(futures::stream::pending());
    Ok(response
        .header("content-type", "text/event-stream")
        .body(BodyExt::boxed(StreamBody::new(open)))
        .unwrap())
}

async fn serve_http(misbehaviour: Misbehaviour, over: Over) -> HostileHttp {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let _ = stream.set_nodelay(true);
            let service =
                hyper::service::service_fn(move |request| handle(request, misbehaviour, over));
            connections.spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service),
            );
        }
    });
    HostileHttp { url, task }
}

/// A client of the hostile server, the HTTP server with it (kept alive as long as the
/// client).
async fn connect(
    misbehaviour: Misbehaviour,
    over: Over,
    configure: impl FnOnce(reticent::mcp::McpClientBuilder) -> reticent::mcp::McpClientBuilder,
) -> (McpClient, Option<HostileHttp>) {
    let builder = configure(McpClient::builder().name("hostile"));
    match over {
        Over::Stdio => {
            let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_hostile_mcp"));
            command.arg(misbehaviour.name());
            (builder.stdio(command).await.unwrap(), None)
        }
        Over::Events | Over::Json => {
            let server = serve_http(misbehaviour, over).await;
            (builder.http(&server.url).await.unwrap(), Some(server))
        }
    }
}

/// [`connect`] with the patient timeouts.
async fn patient(misbehaviour: Misbehaviour, over: Over) -> (McpClient, Option<HostileHttp>) {
    connect(misbehaviour, over, |b| {
        b.timeout(PATIENT).list_timeout(PATIENT)
    })
    .await
}

/// The error's chain, each link on its own line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(link) = source {
        text.push_str(&format!("\n  caused by: {link}"));
        source = link.source();
    }
    text
}

/// Lists the tools, within [`BOUND`].
async fn list(client: &McpClient) -> Result<Vec<Arc<dyn Tool>>, McpClientError> {
    tokio::time::timeout(BOUND, client.tools())
        .await
        .expect("tools() ends")
}

/// Lists the tools, within [`BOUND`], expecting a failure.
async fn list_error(client: &McpClient) -> McpClientError {
    match list(client).await {
        Ok(tools) => panic!("listed {} tools", tools.len()),
        Err(error) => error,
    }
}

/// Calls `echo` with `text` outside any agent, within [`BOUND`].
async fn echo(tool: &Arc<dyn Tool>, text: &str) -> Result<Value, ToolError> {
    let call = tool.call(json!({ "text": text }), ToolContext::default());
    tokio::time::timeout(BOUND, call)
        .await
        .expect("the call ends")
}

/// The `McpCallError` a failed call holds, and what the model would be shown.
fn call_error(error: &ToolError) -> (&McpCallError, String) {
    let ToolError::Failed(failure) = error else {
        panic!("not a failure: {error:?}")
    };
    let call = failure
        .error()
        .downcast_ref::<McpCallError>()
        .unwrap_or_else(|| panic!("not a call error: {error:?}"));
    (call, error.model_text("echo", false))
}

#[tokio::test]
async fn a_list_that_never_comes_times_out() {
    for over in EVERY_WAY {
        let (client, _server) = connect(Misbehaviour::SilentList, over, |b| {
            b.list_timeout(Duration::from_millis(300))
        })
        .await;
        let error = list_error(&client).await;
        assert!(
            matches!(
                &error,
                McpClientError::ListToolsTimedOut { server, timeout }
                    if server == "hostile" && *timeout == Duration::from_millis(300)
            ),
            "{over:?}: {error:?}"
        );
        assert_eq!(
            error.to_string(),
            "the MCP server `hostile` did not answer tools/list within 300ms"
        );
    }
}

#[tokio::test]
async fn tools_times_out_by_default() {
    let (client, _server) = connect(Misbehaviour::SilentList, Over::Stdio, |b| b).await;
    // The 30 s of the default, in the test clock's time.
    tokio::time::pause();
    let error = list_error(&client).await;
    assert!(
        matches!(
            error,
            McpClientError::ListToolsTimedOut { timeout, .. } if timeout == Duration::from_secs(30)
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_list_that_is_not_json_fails_at_once() {
    for over in EVERY_WAY {
        let (client, _server) = patient(Misbehaviour::GarbledList, over).await;
        let error = list_error(&client).await;
        let text = chain(&error);
        assert!(
            matches!(&error, McpClientError::ListToolsUnreadable { .. }),
            "{over:?}: {text}"
        );
        assert!(
            text.starts_with(
                "the MCP server `hostile` answered tools/list with something that cannot be read"
            ),
            "{text}"
        );
        assert!(text.contains("EOF while parsing"), "{over:?}: {text}");
    }
}

#[tokio::test]
async fn a_schema_nested_past_the_parsers_limit_fails_at_once() {
    for over in EVERY_WAY {
        let (client, _server) = patient(Misbehaviour::DeepSchema, over).await;
        let error = list_error(&client).await;
        let text = chain(&error);
        assert!(
            matches!(&error, McpClientError::ListToolsUnreadable { .. }),
            "{over:?}: {text}"
        );
        assert!(
            text.contains("recursion limit exceeded"),
            "{over:?}: {text}"
        );
    }
}

#[tokio::test]
async fn a_call_answered_with_something_not_json_fails_at_once() {
    for over in EVERY_WAY {
        let (client, _server) = patient(Misbehaviour::GarbledCall, over).await;
        let tools = list(&client).await.unwrap();
        let tool = find_tool(&tools, "echo");
        let error = echo(&tool, "hi").await.unwrap_err();
        let (call, shown) = call_error(&error);
        let text = chain(call);
        assert!(
            matches!(call, McpCallError::Unreadable { server, tool, .. }
                if server == "hostile" && tool == "echo"),
            "{over:?}: {text}"
        );
        assert!(
            text.starts_with(
                "the answer of the MCP server `hostile` to the call of `echo` cannot be read\n"
            ),
            "{text}"
        );
        let why = match over {
            Over::Stdio => {
                "the server wrote a line that is not JSON (expected value at line 1 column 1), \
                 while this request was the only one waiting"
            }
            Over::Events => {
                "an event of the answer's stream is not a JSON-RPC message (expected value at \
                 line 1 column 1)"
            }
            Over::Json => "could not parse JSON response as ServerJsonRpcMessage",
        };
        assert!(text.contains(why), "{over:?}: {text}");
        assert_eq!(error.kind(), "McpUnreadableAnswer");
        assert!(call.effect_unknown());
        assert_eq!(shown, "Tool 'echo' failed with McpUnreadableAnswer");
        // The connection goes on: the list is read again.
        assert_eq!(list(&client).await.unwrap().len(), 1, "{over:?}");
    }
}

#[tokio::test]
async fn over_stdio_a_line_that_is_not_json_fails_every_call_waiting() {
    let (client, _server) = patient(Misbehaviour::GarbledCall, Over::Stdio).await;
    let tools = list(&client).await.unwrap();
    let tool = find_tool(&tools, "echo");
    // The first call is never answered; the second is answered with a line that is not
    // JSON, which fails both.
    let (first, second) = tokio::join!(echo(&tool, "wait"), echo(&tool, "two"));
    for error in [first.unwrap_err(), second.unwrap_err()] {
        let (call, _) = call_error(&error);
        let text = chain(call);
        assert!(matches!(call, McpCallError::Unreadable { .. }), "{text}");
        assert!(
            text.contains(
                "the server wrote a line that is not JSON (expected value at line 1 column 1), \
                 while 2 requests waited; it names none of them, so all failed"
            ),
            "{text}"
        );
    }
}

#[tokio::test]
async fn the_model_is_shown_the_kind_of_an_unreadable_answer_and_never_its_text() {
    // Over HTTP with a JSON body, the caller's error quotes the start of the body.
    let (client, _server) = patient(Misbehaviour::GarbledCall, Over::Json).await;
    let tools = list(&client).await.unwrap();
    let responses = vec![
        ModelResponse::tool_calls(vec![ToolCall::new("c1", "echo", json!({"text": "hi"}))]),
        ModelResponse::text("done"),
    ];
    let (result, model) = run_agent(responses, tools, |b| {
        b.failure_options(ToolFailureOptions::default().include_error_message(true))
    })
    .await;
    let failure = &result.tool_failures[0];
    assert_eq!(failure.kind, "McpUnreadableAnswer");
    assert!(
        failure.error_chain().contains("Traceback"),
        "{}",
        failure.error_chain()
    );
    assert_eq!(
        failure.shown_to_model,
        "Tool 'echo' failed with McpUnreadableAnswer: the answer of the MCP server `hostile` to \
         the call of `echo` cannot be read"
    );
    assert_eq!(failure.effect(), EffectOutcome::Unknown);
    assert_model_never_saw("Traceback", &result, &model);
}

/// A patient client that reads messages of at most 16 MiB.
async fn limited(misbehaviour: Misbehaviour, over: Over) -> (McpClient, Option<HostileHttp>) {
    connect(misbehaviour, over, |b| {
        b.timeout(PATIENT)
            .list_timeout(PATIENT)
            .max_message_size(16 * 1024 * 1024)
    })
    .await
}

#[tokio::test]
async fn an_answer_over_16_mib_fails_at_once() {
    for over in EVERY_WAY {
        let (client, _server) = limited(Misbehaviour::HugeList, over).await;
        let error = list_error(&client).await;
        let text = chain(&error);
        match over {
            Over::Stdio => {
                assert!(
                    matches!(error, McpClientError::ListToolsUnreadable { .. }),
                    "{text}"
                );
                assert!(
                    text.contains(
                        "the server wrote a line longer than 16777216 bytes, the limit of one message, \
                         while this request was the only one waiting"
                    ),
                    "{text}"
                );
            }
            Over::Json => {
                assert!(
                    matches!(error, McpClientError::ListToolsUnreadable { .. }),
                    "{text}"
                );
                assert!(
                    text.contains(&format!(
                        "exceeded the maximum size of {}",
                        16 * 1024 * 1024
                    )),
                    "{text}"
                );
            }
            // An event over the limit ends rmcp's reading of the stream, and the request
            // with it.
            Over::Events => {
                assert!(matches!(error, McpClientError::ListTools { .. }), "{text}");
            }
        }
    }
    for over in EVERY_WAY {
        let (client, _server) = limited(Misbehaviour::HugeCall, over).await;
        let tools = list(&client).await.unwrap();
        let tool = find_tool(&tools, "echo");
        let error = echo(&tool, "hi").await.unwrap_err();
        let (call, _) = call_error(&error);
        let text = chain(call);
        match over {
            Over::Stdio => {
                assert!(matches!(call, McpCallError::Unreadable { .. }), "{text}");
                assert!(
                    text.contains("the server wrote a line longer than 16777216 bytes"),
                    "{text}"
                );
            }
            Over::Json => {
                assert!(matches!(call, McpCallError::Unreadable { .. }), "{text}");
                assert!(
                    text.contains(&format!(
                        "exceeded the maximum size of {}",
                        16 * 1024 * 1024
                    )),
                    "{text}"
                );
            }
            Over::Events => {
                assert!(matches!(call, McpCallError::Disconnected { .. }), "{text}");
            }
        }
    }
}

#[tokio::test]
async fn a_call_without_an_answer_times_out_by_default() {
    let (client, _server) = connect(Misbehaviour::SilentCall, Over::Stdio, |b| b).await;
    let tools = list(&client).await.unwrap();
    let tool = find_tool(&tools, "echo");
    assert_eq!(tool.timeout(), Some(Duration::from_secs(60)));
    // The default, in the test clock's time.
    tokio::time::pause();

    // Called directly, the call gives up a second after its limit.
    let call = tool.call(json!({"text": "hi"}), ToolContext::default());
    let error = tokio::time::timeout(BOUND * 2, call)
        .await
        .expect("the call ends")
        .unwrap_err();
    let (call, shown) = call_error(&error);
    assert!(
        matches!(call, McpCallError::TimedOut { timeout, .. }
            if *timeout == Duration::from_secs(61)),
        "{call:?}"
    );
    assert_eq!(shown, "Tool 'echo' failed with McpTimeout");

    // In a run, the agent applies the limit, first, as for any tool.
    let responses = vec![
        ModelResponse::tool_calls(vec![ToolCall::new("c1", "echo", json!({"text": "hi"}))]),
        ModelResponse::text("done"),
    ];
    let run = run_agent(responses, tools, |b| b);
    let (result, _) = tokio::time::timeout(BOUND * 2, run)
        .await
        .expect("the run ends");
    let failure = &result.tool_failures[0];
    assert!(failure.timed_out, "{failure:#?}");
    assert_eq!(
        failure.shown_to_model,
        "Tool 'echo' timed out after 1m and was stopped; whether it took effect is unknown"
    );
}

#[tokio::test]
async fn a_banner_before_the_handshake_is_skipped() {
    let (client, _server) = patient(Misbehaviour::Banner, Over::Stdio).await;
    let tools = list(&client).await.unwrap();
    let output = echo(&find_tool(&tools, "echo"), "hi").await.unwrap();
    assert_eq!(output, "hi");
}
