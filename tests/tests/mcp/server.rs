//! `reticent::mcp` driven by rmcp's own client over an in-memory duplex: what `tools/list`
//! says, and what each kind of call outcome sends the client and the operator.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reticent::mcp::McpServer;
use reticent::mcp::rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, CustomRequest, ErrorCode, ServerResult,
};
use reticent::mcp::rmcp::service::{PeerRequestOptions, ServiceError};
use reticent::{ArgumentError, Tool, ToolContext};
use reticent_tests::mcp::{Failures, connect, text};
use reticent_tests::shop::Wire;
use reticent_tests::spans::capture_spans;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Repeat a text.
#[reticent::tool(read_only, idempotent)]
fn echo(
    /// The text to repeat.
    text: String,
    /// How many times (default 1).
    times: Option<u32>,
) -> Result<String, ArgumentError> {
    let times = times.unwrap_or(1);
    if times > 3 {
        return Err(ArgumentError::new("`times` must be at most 3"));
    }
    Ok(text.repeat(times as usize))
}

/// Send an email.
#[reticent::tool(destructive, open_world)]
fn send_email(
    /// Who gets it.
    to: String,
) -> Result<String, std::io::Error> {
    Err(std::io::Error::other(format!(
        "smtp relay refused {to}: 550 mailbox unavailable"
    )))
}

/// Panic.
#[reticent::tool]
fn explode() -> String {
    panic!("explode was called")
}

/// A tool that waits until it is cancelled, saying what it saw.
struct Waiter {
    events: mpsc::UnboundedSender<&'static str>,
}

/// Says `stopped` when the call's future is dropped, however it ends.
struct Stopped(mpsc::UnboundedSender<&'static str>);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.send("stopped");
    }
}

#[reticent::tools]
impl Waiter {
    /// Wait up to `seconds`, or until the call is cancelled.
    #[tool(read_only)]
    async fn wait(
        &self,
        /// How long to wait.
        seconds: u64,
        cx: &ToolContext,
    ) -> String {
        let _ = self.events.send("started");
        let _stopped = Stopped(self.events.clone());
        tokio::select! {
            () = cx.cancellation().cancelled() => {
                let _ = self.events.send("cancelled");
                "cancelled".to_owned()
            }
            () = tokio::time::sleep(Duration::from_secs(seconds)) => {
                let _ = self.events.send("finished");
                "finished".to_owned()
            }
        }
    }
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name).with_arguments(args(arguments))
}

fn server(failures: &Failures) -> McpServer {
    McpServer::builder()
        .tool(Echo)
        .tool(SendEmail)
        .tool(Explode)
        .on_failure(failures.hook())
        .build()
        .unwrap()
}

#[tokio::test]
async fn tools_list_gives_names_descriptions_schemas_and_every_hint() {
    let connection = connect(server(&Failures::default())).await;
    let tools = connection.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| &*t.name).collect();
    assert_eq!(names, ["echo", "send_email", "explode"]);

    let echo = &tools[0];
    assert_eq!(echo.description.as_deref(), Some("Repeat a text."));
    assert_eq!(
        Value::Object((*echo.input_schema).clone()),
        Echo.definition().parameters,
        "the schema is the tool's own"
    );
    assert_eq!(echo.input_schema["required"], json!(["text"]));
    assert_eq!(echo.input_schema["additionalProperties"], json!(false));

    // Every hint is sent, false ones too: MCP's defaults for a missing destructiveHint and
    // openWorldHint are true.
    let listed = serde_json::to_value(&tools).unwrap();
    assert_eq!(
        listed[0]["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false,
               "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(
        listed[1]["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true,
               "idempotentHint": false, "openWorldHint": true})
    );
    assert_eq!(
        listed[2]["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": false,
               "idempotentHint": false, "openWorldHint": false})
    );
}

#[tokio::test]
async fn initialize_gives_the_servers_name_version_and_instructions() {
    let server = McpServer::builder()
        .name("desk")
        .version("2.1.0")
        .instructions("Look orders up before changing them.")
        .tool(Echo)
        .build()
        .unwrap();
    let connection = connect(server).await;
    let info = connection
        .client
        .peer_info()
        .expect("the server introduced itself");
    let info = serde_json::to_value(&*info).unwrap();
    assert_eq!(info["serverInfo"]["name"], "desk");
    assert_eq!(info["serverInfo"]["version"], "2.1.0");
    assert_eq!(info["instructions"], "Look orders up before changing them.");
    assert!(info["capabilities"]["tools"].is_object(), "{info}");
}

#[tokio::test]
async fn a_succeeding_call_returns_the_tools_output() {
    let failures = Failures::default();
    let connection = connect(server(&failures)).await;
    let result = connection
        .client
        .call_tool(call("echo", json!({"text": "ab", "times": 2})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_eq!(text(&result), "abab");
    assert!(failures.all().is_empty());
}

#[tokio::test]
async fn argument_errors_are_error_results_with_the_full_message() {
    let failures = Failures::default();
    let connection = connect(server(&failures)).await;
    let cases = [
        (
            json!({"text": "a", "times": 9}),
            "Invalid arguments for tool 'echo': `times` must be at most 3",
        ),
        (
            json!({"text": 5}),
            "Invalid arguments for tool 'echo': argument `text`: invalid type: integer `5`, expected a string",
        ),
        (
            json!({}),
            "Invalid arguments for tool 'echo': missing required argument `text`",
        ),
    ];
    for (arguments, expected) in cases.clone() {
        let result = connection
            .client
            .call_tool(call("echo", arguments.clone()))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true), "{arguments}");
        assert_eq!(text(&result), expected, "{arguments}");
    }
    let all = failures.all();
    assert_eq!(all.len(), 3);
    assert!(all.iter().all(|f| f.kind == "argument"), "{all:#?}");
    assert_eq!(all[0].shown_to_model, cases[0].1);
    assert_eq!(all[0].arguments, json!({"text": "a", "times": 9}));
}

/// Sends `tools/call` with these params as they are, without rmcp's typing.
async fn raw_call(
    connection: &reticent_tests::mcp::Connection,
    params: Value,
) -> Result<Value, ServiceError> {
    let request = ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(params)));
    let result = connection.client.send_request(request).await?;
    Ok(match result {
        ServerResult::CustomResult(result) => result.0,
        other => serde_json::to_value(other).unwrap(),
    })
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_an_argument_error_not_a_protocol_error() {
    let failures = Failures::default();
    let connection = connect(server(&failures)).await;

    let result = raw_call(
        &connection,
        json!({"name": "echo", "arguments": "{\"text\": "}),
    )
    .await
    .unwrap();
    assert_eq!(result["isError"], true, "{result}");
    let shown = result["content"][0]["text"].as_str().unwrap();
    assert!(
        shown.starts_with("Invalid arguments for tool 'echo': the arguments are not valid JSON"),
        "{shown}"
    );

    let result = raw_call(&connection, json!({"name": "echo", "arguments": [1, 2]}))
        .await
        .unwrap();
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        result["content"][0]["text"],
        "Invalid arguments for tool 'echo': arguments must be a JSON object, got an array"
    );
    assert_eq!(failures.all().len(), 2);
    assert!(failures.all().iter().all(|f| f.kind == "argument"));

    // Without a tool name it is not a call at all.
    let error = raw_call(&connection, json!({"arguments": {}}))
        .await
        .unwrap_err();
    let ServiceError::McpError(error) = error else {
        panic!("expected a JSON-RPC error, got {error:?}")
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
}

#[tokio::test]
async fn a_failure_shows_the_type_name_and_the_operator_gets_the_whole_error() {
    let failures = Failures::default();
    let (spans, _guard) = capture_spans();
    let connection = connect(server(&failures)).await;
    let result = connection
        .client
        .call_tool(call("send_email", json!({"to": "ada@example.com"})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(text(&result), "Tool 'send_email' failed with io::Error");
    assert!(!connection.received().contains("550 mailbox"));

    let failure = failures.one();
    assert_eq!(failure.tool, "send_email");
    assert_eq!(failure.kind, "io::Error");
    assert!(!failure.timed_out);
    assert_eq!(
        failure.shown_to_model,
        "Tool 'send_email' failed with io::Error"
    );
    assert!(
        failure
            .error
            .to_string()
            .contains("550 mailbox unavailable")
    );
    assert_eq!(failure.arguments, json!({"to": "ada@example.com"}));

    let span = spans.one("execute_tool");
    assert_eq!(span.field("otel.name"), Some("execute_tool send_email"));
    assert_eq!(span.field("gen_ai.tool.name"), Some("send_email"));
    assert_eq!(
        span.field("gen_ai.tool.call.id"),
        Some(failure.call_id.as_str())
    );
    assert_eq!(span.field("otel.status_code"), Some("ERROR"));
    assert_eq!(span.field("error.type"), Some("io::Error"));
    assert!(
        span.field("error.message")
            .unwrap()
            .contains("550 mailbox unavailable"),
        "{span:?}"
    );
}

#[tokio::test]
async fn include_error_message_shows_the_message_after_the_kind() {
    let server = McpServer::builder()
        .tool(SendEmail)
        .include_error_message(true)
        .build()
        .unwrap();
    let connection = connect(server).await;
    let result = connection
        .client
        .call_tool(call("send_email", json!({"to": "ada@example.com"})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        "Tool 'send_email' failed with io::Error: smtp relay refused ada@example.com: 550 mailbox unavailable"
    );
}

#[tokio::test]
async fn a_timeout_is_an_error_result_saying_how_long_the_tool_was_given() {
    let (events, mut seen) = mpsc::unbounded_channel();
    let failures = Failures::default();
    let server = McpServer::builder()
        .toolbox(Arc::new(Waiter { events }))
        .timeout(Duration::from_millis(200))
        .on_failure(failures.hook())
        .build()
        .unwrap();
    let connection = connect(server).await;
    let start = Instant::now();
    let result = connection
        .client
        .call_tool(call("wait", json!({"seconds": 30})))
        .await
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        "Tool 'wait' timed out after 200ms and was stopped; whether it took effect is unknown"
    );
    let failure = failures.one();
    assert!(failure.timed_out);
    assert_eq!(failure.kind, "timeout");
    // The tool was stopped when its time ran out, not left running.
    assert_eq!(seen.recv().await, Some("started"));
    assert_eq!(seen.recv().await, Some("stopped"));
}

#[tokio::test]
async fn a_panicking_tool_gets_an_error_result_and_the_server_goes_on() {
    let failures = Failures::default();
    let connection = connect(server(&failures)).await;
    let result = tokio::time::timeout(
        Duration::from_secs(5),
        connection.client.call_tool(call("explode", json!({}))),
    )
    .await
    .expect("a reply, not a hung client")
    .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(text(&result), "Tool 'explode' failed with panic");
    assert!(!connection.received().contains("explode was called"));

    let failure = failures.one();
    assert_eq!(failure.kind, "panic");
    assert!(failure.error.to_string().contains("explode was called"));

    // The connection still serves calls.
    let result = connection
        .client
        .call_tool(call("echo", json!({"text": "still here"})))
        .await
        .unwrap();
    assert_eq!(text(&result), "still here");
}

#[tokio::test]
async fn an_unknown_tool_is_a_json_rpc_error_listing_the_tools() {
    let failures = Failures::default();
    let connection = connect(server(&failures)).await;
    let error = connection
        .client
        .call_tool(call("delete_everything", json!({})))
        .await
        .unwrap_err();
    let ServiceError::McpError(error) = error else {
        panic!("expected a JSON-RPC error, got {error:?}")
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "Unknown tool 'delete_everything'. Available tools: echo, send_email, explode"
    );
    let failure = failures.one();
    assert_eq!(failure.kind, "unknown_tool");
    assert_eq!(failure.tool, "delete_everything");
}

/// A request whose token is cancelled before the server first polls the call: a call that is
/// done then (an async tool that never waits) was never stopped, and is answered as it ended (rmcp's serve loop drops the answer
/// to a cancelled request); one that has to wait is stopped and answered as cancelled. Neither
/// is a failure.
#[tokio::test]
async fn a_request_cancelled_before_the_call_starts() {
    use reticent::mcp::rmcp::ServerHandler;
    use reticent::mcp::rmcp::model::{CallToolResponse, NumberOrString};
    use reticent::mcp::rmcp::service::{RequestContext, serve_directly};

    /// Shout a text.
    #[reticent::tool]
    async fn shout(
        /// The text.
        text: String,
    ) -> String {
        text.to_uppercase()
    }

    /// Sleep, not watching the call's token.
    #[reticent::tool]
    async fn nap(
        /// How long.
        seconds: u64,
    ) -> String {
        tokio::time::sleep(Duration::from_secs(seconds)).await;
        "rested".to_owned()
    }

    let failures = Failures::default();
    let server = McpServer::builder()
        .tool(Shout)
        .tool(Nap)
        .on_failure(failures.hook())
        .build()
        .unwrap();
    // A peer for the request contexts: the server served on a duplex nobody writes to.
    let (_client_end, server_end) = tokio::io::duplex(4096);
    let running = serve_directly(server.clone(), server_end, None);
    let cancelled = |id| {
        let context = RequestContext::new(NumberOrString::Number(id), running.peer().clone());
        context.ct.cancel();
        context
    };

    let answer = server
        .call_tool(call("shout", json!({"text": "hi"})), cancelled(1))
        .await
        .expect("answered");
    let CallToolResponse::Complete(result) = answer else {
        panic!("a result: {answer:?}")
    };
    assert_eq!(text(&result), "HI");
    assert_ne!(result.is_error, Some(true));

    let answer = tokio::time::timeout(
        Duration::from_secs(5),
        server.call_tool(call("nap", json!({"seconds": 60})), cancelled(2)),
    )
    .await
    .expect("a waiting call of a cancelled request ends at once");
    let error = answer.expect_err("a cancelled request is answered as cancelled");
    assert_eq!(error.message, "the request was cancelled");
    assert!(failures.all().is_empty(), "{:#?}", failures.all());
}

#[tokio::test]
async fn a_cancelled_call_stops_the_tool_and_is_not_a_failure() {
    let (events, mut seen) = mpsc::unbounded_channel();
    let failures = Failures::default();
    let (spans, _guard) = capture_spans();
    let server = McpServer::builder()
        .toolbox(Arc::new(Waiter { events }))
        .on_failure(failures.hook())
        .build()
        .unwrap();
    let connection = connect(server).await;

    let request =
        ClientRequest::CallToolRequest(CallToolRequest::new(call("wait", json!({"seconds": 60}))));
    let handle = connection
        .client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    assert_eq!(seen.recv().await, Some("started"));
    handle
        .cancel(Some("the user gave up".into()))
        .await
        .unwrap();

    // `notifications/cancelled` reached the tool's token.
    let observed = tokio::time::timeout(Duration::from_secs(5), seen.recv())
        .await
        .expect("the tool saw the cancellation");
    assert_eq!(observed, Some("cancelled"));
    assert_eq!(seen.recv().await, Some("stopped"));

    // The server goes on; the cancelled call was not a failure.
    let result = connection
        .client
        .call_tool(call("wait", json!({"seconds": 0})))
        .await
        .unwrap();
    assert_eq!(text(&result), "finished");
    assert_eq!(seen.recv().await, Some("started"));
    assert_eq!(seen.recv().await, Some("finished"));
    assert!(failures.all().is_empty(), "{:#?}", failures.all());
    let cancelled: Vec<_> = spans
        .named("execute_tool")
        .into_iter()
        .filter(|s| s.field("reticent.tool.cancelled") == Some("true"))
        .collect();
    assert_eq!(cancelled.len(), 1, "{:#?}", spans.all());
    assert_eq!(cancelled[0].field("error.type"), None);
}

#[tokio::test]
async fn toolboxes_and_free_tools_are_served_together() {
    let (events, _seen) = mpsc::unbounded_channel();
    let server = McpServer::builder()
        .tool(Echo)
        .toolbox(Arc::new(Waiter { events }))
        .build()
        .unwrap();
    assert_eq!(server.tool_names().collect::<Vec<_>>(), ["echo", "wait"]);
}

#[test]
fn build_refuses_two_tools_with_one_name() {
    let error = McpServer::builder()
        .tool(Echo)
        .tool(Echo)
        .build()
        .unwrap_err();
    assert_eq!(
        error,
        reticent::BuildError::DuplicateTool {
            name: "echo".into()
        }
    );
}

/// Close an account: calls a person must approve first.
#[reticent::tool(needs_approval, destructive)]
fn close_account(
    /// The account.
    account: String,
) -> String {
    format!("closed {account}")
}

#[test]
fn build_refuses_a_tool_that_needs_approval_unless_the_client_is_trusted_to_ask() {
    for (tool, name) in [
        (Arc::new(Wire) as Arc<dyn Tool>, "wire"),
        (Arc::new(CloseAccount), "close_account"),
    ] {
        let error = McpServer::builder()
            .tool(Echo)
            .tool_arc(tool)
            .build()
            .unwrap_err();
        assert_eq!(
            error,
            reticent::BuildError::NeedsApproval { name: name.into() }
        );
        let message = error.to_string();
        assert!(
            message.contains(&format!("tool `{name}` needs a person's approval"))
                && message.contains(".trust_client_approval(true)"),
            "{message}"
        );
    }
    // Saying `false` is the default: still refused.
    let error = McpServer::builder()
        .tool(CloseAccount)
        .trust_client_approval(false)
        .build()
        .unwrap_err();
    assert!(matches!(error, reticent::BuildError::NeedsApproval { .. }));
}

#[tokio::test]
async fn a_tool_that_needs_approval_is_served_to_a_client_trusted_to_ask() {
    let server = McpServer::builder()
        .tool(Wire)
        .tool(CloseAccount)
        .trust_client_approval(true)
        .build()
        .unwrap();
    let connection = connect(server).await;
    let result = connection
        .client
        .call_tool(call("wire", json!({"amount_cents": 250})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_eq!(text(&result), "sent 250");
    // The constraint still holds.
    let refused = connection
        .client
        .call_tool(call("wire", json!({"amount_cents": 0})))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains("amount_cents"),
        "{}",
        text(&refused)
    );
}

#[derive(Debug, thiserror::Error)]
#[error("could not read the ledger")]
struct LedgerError(#[source] std::io::Error);

/// Read the ledger.
#[reticent::tool(read_only)]
fn read_ledger() -> Result<String, LedgerError> {
    Err(LedgerError(std::io::Error::other(
        "permission denied: /srv/ledger.db",
    )))
}

#[tokio::test]
async fn the_span_and_the_hook_have_the_error_with_its_sources() {
    let failures = Failures::default();
    let (spans, _guard) = capture_spans();
    let server = McpServer::builder()
        .tool(ReadLedger)
        .on_failure(failures.hook())
        .build()
        .unwrap();
    let connection = connect(server).await;
    let result = connection
        .client
        .call_tool(call("read_ledger", json!({})))
        .await
        .unwrap();
    assert_eq!(text(&result), "Tool 'read_ledger' failed with LedgerError");
    assert!(!connection.received().contains("/srv/ledger.db"));
    let chain = "could not read the ledger: permission denied: /srv/ledger.db";
    assert_eq!(
        spans.one("execute_tool").field("error.message"),
        Some(chain)
    );
    assert_eq!(failures.one().error_chain(), chain);
}

#[tokio::test]
async fn a_panicking_hook_does_not_cost_the_client_its_reply() {
    let failures = Failures::default();
    let server = McpServer::builder()
        .tool(SendEmail)
        .on_failure(|_| panic!("the hook itself is broken"))
        .on_failure(failures.hook())
        .build()
        .unwrap();
    let connection = connect(server).await;
    let result = tokio::time::timeout(
        Duration::from_secs(5),
        connection
            .client
            .call_tool(call("send_email", json!({"to": "ada@example.com"}))),
    )
    .await
    .expect("a reply")
    .unwrap();
    assert_eq!(text(&result), "Tool 'send_email' failed with io::Error");
    // The hooks after the broken one still ran.
    assert_eq!(failures.one().kind, "io::Error");
}
