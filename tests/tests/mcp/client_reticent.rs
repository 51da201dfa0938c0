//! `McpClient` against reticent's own `McpServer`, served over streamable HTTP on a loopback
//! listener: the same rules as for any server. The server already withholds its tools'
//! messages; the client withholds the server's text on top, so the secret reaches neither
//! model, while the server's operator and the client's caller each get what is theirs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reticent::mcp::rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use reticent::mcp::{McpCallError, McpClient, McpServer, McpToolError};
use reticent::{
    CancellationToken, Disclose, ModelResponse, ToolCall, ToolContext, ToolFailureOptions,
    failures::EffectOutcome,
};
use reticent_tests::mcp::{Failures, assert_model_never_saw, call_tool, find_tool, run_agent};
use reticent_tests::transcript::{shown_texts, shown_unfenced};
use serde_json::json;
use tokio::net::TcpListener;

const SECRET: &str = "amqp://billing:c4n4ry-7f3a@10.1.2.3/vhost";
const CANARY: &str = "c4n4ry-7f3a";

#[derive(Debug, thiserror::Error)]
#[error("queue unreachable at {0}")]
struct QueueError(String);

#[derive(Debug, thiserror::Error, Disclose)]
enum InvoiceError {
    #[error("no invoice {0}; invoice ids look like INV-7")]
    #[disclose(argument)]
    NotFound(String),
}

/// Add two numbers.
#[reticent::tool(read_only, idempotent)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Queue an invoice for sending.
#[reticent::tool(destructive, open_world)]
fn queue_invoice(
    /// The invoice id.
    invoice: String,
) -> Result<String, QueueError> {
    let _ = invoice;
    Err(QueueError(SECRET.into()))
}

/// Look an invoice up.
#[reticent::tool(read_only)]
fn lookup_invoice(
    /// The invoice id, like INV-7.
    invoice: String,
) -> Result<String, InvoiceError> {
    Err(InvoiceError::NotFound(invoice))
}

/// Calls of `wait` whose token was cancelled.
static CANCELLED: AtomicUsize = AtomicUsize::new(0);

/// Wait until cancelled.
#[reticent::tool(read_only)]
async fn wait(cx: &ToolContext) -> String {
    cx.cancellation().cancelled().await;
    CANCELLED.fetch_add(1, Ordering::SeqCst);
    "cancelled".to_owned()
}

/// The server, with a hook that collects its failures.
fn server(failures: &Failures) -> McpServer {
    McpServer::builder()
        .name("billing")
        .tool(Add)
        .tool(QueueInvoice)
        .tool(LookupInvoice)
        .tool(Wait)
        .on_failure(failures.hook())
        .build()
        .unwrap()
}

/// Serves `server` over streamable HTTP on a loopback port until `shutdown` is cancelled;
/// the URL.
async fn serve(server: McpServer, shutdown: &CancellationToken) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let config = StreamableHttpServerConfig::default().with_cancellation_token(shutdown.clone());
    tokio::spawn(server.serve_http(listener, config));
    url
}

/// The server, served until this is dropped.
struct Served {
    url: String,
    failures: Failures,
    shutdown: CancellationToken,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn start() -> Served {
    let failures = Failures::default();
    let shutdown = CancellationToken::new();
    let url = serve(server(&failures), &shutdown).await;
    Served {
        url,
        failures,
        shutdown,
    }
}

#[tokio::test]
async fn a_reticent_server_over_http_follows_the_same_rules() {
    let served = start().await;
    let client = McpClient::builder()
        .prefix("billing_")
        .http(&served.url)
        .await
        .unwrap();
    assert_eq!(client.name(), "billing");
    let tools = client.tools().await.unwrap();

    // The hints the server sends explicitly arrive as they were.
    let add = find_tool(&tools, "billing_add").definition().annotations;
    assert!(add.read_only && add.idempotent && !add.destructive && !add.open_world);
    let queue = find_tool(&tools, "billing_queue_invoice")
        .definition()
        .annotations;
    assert!(!queue.read_only && queue.destructive && queue.open_world);
    // The schema is the server's, with its `additionalProperties: false`.
    assert_eq!(
        find_tool(&tools, "billing_add").definition().parameters["additionalProperties"],
        false
    );

    let responses = vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "billing_add", json!({"a": 2, "b": 3})),
            ToolCall::new("c2", "billing_queue_invoice", json!({"invoice": "INV-7"})),
        ]),
        ModelResponse::tool_calls(vec![
            ToolCall::new("c3", "billing_add", json!({"a": 2, "c": 3})),
            ToolCall::new("c4", "billing_lookup_invoice", json!({"invoice": "X"})),
        ]),
        ModelResponse::text("The invoice could not be queued."),
    ];
    let (result, model) = run_agent(responses, tools, |b| b.max_consecutive_failures(10)).await;
    assert_eq!(
        shown_unfenced(&result.messages),
        [
            // `add` has an output schema: its structured content, `{"result": 5}`, is shown.
            r#"{"result":5}"#,
            "Tool 'billing_queue_invoice' failed with McpToolError",
            // Checked here against the server's schema: never sent.
            "Invalid arguments for tool 'billing_add': \"b\" is a required property; \
             Additional properties are not allowed ('c' was unexpected)",
            // The server's argument error is its text, like any: the kind only, by default.
            "Tool 'billing_lookup_invoice' failed with McpToolError",
        ]
    );
    assert_model_never_saw(CANARY, &result, &model);

    // The caller gets what the server sent; the server's operator, the secret itself.
    let queued = &result.tool_failures[0];
    let error = queued.error.downcast_ref::<McpToolError>().unwrap();
    assert_eq!(
        error.content(),
        "Tool 'queue_invoice' failed with QueueError"
    );
    assert_eq!((error.server(), error.tool()), ("billing", "queue_invoice"));
    let server_side = served.failures.all();
    assert_eq!(
        server_side.len(),
        2,
        "the invalid call never reached the server: {server_side:#?}"
    );
    assert!(server_side[0].error.to_string().contains(SECRET));
    assert_eq!(server_side[1].kind, "argument");

    // The ledger: `queue_invoice` is not read-only; the others are.
    let ledger: Vec<(&str, EffectOutcome)> = result
        .effects
        .iter()
        .map(|e| (e.tool.as_str(), e.outcome))
        .collect();
    assert_eq!(ledger, [("billing_queue_invoice", EffectOutcome::Failed)]);
    // Untrusted by default: the successful `add` tainted the run.
    assert_eq!(result.tainted_by, ["c1"]);
}

#[tokio::test]
async fn a_trusted_server_can_show_its_errors() {
    let served = start().await;
    let client = McpClient::builder()
        .trusted_output(true)
        .include_error_message(true)
        .http(&served.url)
        .await
        .unwrap();
    let responses = vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "add", json!({"a": 2, "b": 3})),
            ToolCall::new("c2", "lookup_invoice", json!({"invoice": "X"})),
            ToolCall::new("c3", "queue_invoice", json!({"invoice": "INV-7"})),
        ]),
        ModelResponse::text("done"),
    ];
    let (result, model) = run_agent(responses, client.tools().await.unwrap(), |b| b).await;
    assert_eq!(
        shown_texts(&result.messages),
        [
            // `add` has an output schema: its structured content, `{"result": 5}`, is shown.
            r#"{"result":5}"#,
            // What reticent's server sends: the argument error in full, the failure by kind.
            "Tool 'lookup_invoice' failed with McpToolError: Invalid arguments for tool \
             'lookup_invoice': no invoice X; invoice ids look like INV-7",
            "Tool 'queue_invoice' failed with McpToolError: Tool 'queue_invoice' failed with \
             QueueError",
        ]
    );
    assert_model_never_saw(CANARY, &result, &model);
    assert!(result.tainted_by.is_empty());
}

#[tokio::test]
async fn a_timeout_over_http_cancels_the_servers_tool() {
    let served = start().await;
    let client = McpClient::http(&served.url).await.unwrap();
    let responses = vec![
        ModelResponse::tool_call("c1", "wait", json!({})),
        ModelResponse::text("too slow"),
    ];
    let before = CANCELLED.load(Ordering::SeqCst);
    let (result, _) = run_agent(responses, client.tools().await.unwrap(), |b| {
        b.failure_options(ToolFailureOptions::default().timeout(Duration::from_millis(300)))
    })
    .await;
    assert!(result.tool_failures[0].timed_out);
    // `notifications/cancelled` reached the server, which cancelled the tool's token.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while CANCELLED.load(Ordering::SeqCst) == before {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server's tool was not cancelled"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A cancelled call is not a failure on the server's side.
    assert!(
        served.failures.all().is_empty(),
        "{:#?}",
        served.failures.all()
    );
}

#[test]
fn a_server_that_goes_away_mid_call_fails_the_call_without_a_hang() {
    // The server in a runtime of its own, dropped in the middle of the call: its connections
    // are cut, as when a server process dies.
    let server_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let failures = Failures::default();
    let shutdown = CancellationToken::new();
    let url = server_runtime.block_on(serve(server(&failures), &shutdown));

    let client_runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    client_runtime.block_on(async move {
        let client = McpClient::http(&url).await.unwrap();
        let tools = client.tools().await.unwrap();
        let responses = vec![
            ModelResponse::tool_call("c1", "wait", json!({})),
            ModelResponse::text("the server went away"),
        ];
        let run = tokio::spawn(run_agent(responses, tools.clone(), |b| b));
        tokio::time::sleep(Duration::from_millis(300)).await;
        server_runtime.shutdown_background();

        let (result, _) = tokio::time::timeout(Duration::from_secs(30), run)
            .await
            .expect("no hang")
            .unwrap();
        let failure = &result.tool_failures[0];
        assert_eq!(failure.kind, "McpDisconnected", "{}", failure.error_chain());
        assert!(matches!(
            failure.error.downcast_ref::<McpCallError>(),
            Some(McpCallError::Disconnected {
                exit_status: None,
                ..
            })
        ));
        assert_eq!(
            failure.shown_to_model,
            "Tool 'wait' failed with McpDisconnected"
        );
        // A later call fails fast too.
        let later = call_tool(&tools, "add", json!({"a": 1, "b": 2}));
        let error = tokio::time::timeout(Duration::from_secs(30), later)
            .await
            .expect("no hang")
            .unwrap_err();
        assert_eq!(error.kind(), "McpDisconnected");
    });
}
