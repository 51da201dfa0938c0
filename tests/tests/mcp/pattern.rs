//! A `pattern` whose match cannot finish — `^((?!\d)\w+\s?)+$` against 40 letters and a `!` —
//! on both sides of MCP. `McpServer` refuses the value as one that could not be checked, and
//! its tool does not run (it ran before). `McpClient` checks a remote tool's arguments against
//! the schema the *server* chose: the same refusal, before anything is sent, and a check of
//! 2,000 such strings is cut by its budget and made where the client's `.timeout(..)` covers
//! it (before, it stalled the caller's thread until a watchdog fired at 30 s).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reticent::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool as McpTool,
};
use reticent::mcp::rmcp::service::{RequestContext, RoleServer, RunningService};
use reticent::mcp::rmcp::{ServerHandler, ServiceExt};
use reticent::mcp::{McpClient, McpClientBuilder, McpServer};
use reticent::{ModelResponse, ToolContext, ToolError};
use reticent_tests::mcp::{connect, find_tool, run_agent, text};
use reticent_tests::pattern::{EVIL, GAVE_UP, Names, evil_string, evil_strings, guarded};
use serde_json::{Map, Value, json};

/// A hang guard only: the checks below take a second or two in a debug build.
const GUARD: Duration = Duration::from_secs(120);

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("an object"),
    }
}

/// Proves: `McpServer` refuses a value its tool's pattern cannot be checked against, says so,
/// and the tool never runs; 2,000 such strings are refused within the check's bound.
#[test]
fn the_server_refuses_a_value_that_could_not_be_checked() {
    guarded(GUARD, async {
        let names = Arc::new(Names::default());
        let server = McpServer::builder()
            .toolbox(Arc::clone(&names))
            .build()
            .unwrap();
        let connection = connect(server).await;
        let call = |tool: &str, arguments: Value| {
            connection.client.call_tool(
                CallToolRequestParams::new(tool.to_owned()).with_arguments(object(arguments)),
            )
        };
        let result = call("greet", json!({"name": evil_string()})).await.unwrap();
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            text(&result),
            format!("Invalid arguments for tool 'greet': argument `name`: {GAVE_UP}")
        );
        let result = call("greet_all", json!({"names": evil_strings(2000)}))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            text(&result),
            format!("Invalid arguments for tool 'greet_all': argument `names[0]`: {GAVE_UP}")
        );
        assert_eq!(
            names.runs(),
            0,
            "a tool ran with a value that was not checked"
        );
    });
}

/// A server whose one tool, `lookup`, carries [`EVIL`] in its input schema; it counts the calls
/// that reach it.
#[derive(Clone)]
struct Hostile {
    calls: Arc<AtomicUsize>,
}

impl ServerHandler for Hostile {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("hostile", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = object(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "pattern": EVIL},
                "names": {"type": "array", "items": {"type": "string", "pattern": EVIL}},
            },
        }));
        let tool = McpTool::new("lookup", "Look names up.", Arc::new(schema));
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(CallToolResult::success(vec![ContentBlock::text("found")]).into())
    }
}

/// Connects `builder` to a [`Hostile`] server; keep the server's side alive.
async fn connect_hostile(
    builder: McpClientBuilder,
) -> (
    McpClient,
    RunningService<RoleServer, Hostile>,
    Arc<AtomicUsize>,
) {
    let calls = Arc::new(AtomicUsize::new(0));
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let hostile = Hostile {
        calls: Arc::clone(&calls),
    };
    let (server, client) = tokio::join!(
        hostile.serve(server_end),
        builder.connect(tokio::io::split(client_end)),
    );
    (client.unwrap(), server.unwrap(), calls)
}

/// Proves: `McpClient` refuses a value the server's pattern cannot be checked against, before
/// anything is sent; 2,000 such strings are refused within the check's bound.
#[test]
fn the_client_refuses_a_value_the_servers_pattern_cannot_be_checked_against() {
    guarded(GUARD, async {
        let builder = McpClient::builder().timeout(Duration::from_secs(2));
        let (client, _server, calls) = connect_hostile(builder).await;
        let lookup = find_tool(&client.tools().await.unwrap(), "lookup");
        let refused = |result: Result<Value, ToolError>| match result {
            Err(ToolError::Argument(error)) => error.message().to_owned(),
            other => panic!("expected an argument error, got {other:?}"),
        };
        let message = refused(
            lookup
                .call(json!({"name": evil_string()}), ToolContext::default())
                .await,
        );
        assert_eq!(message, format!("argument `name`: {GAVE_UP}"));
        let message = refused(
            lookup
                .call(json!({"names": evil_strings(2000)}), ToolContext::default())
                .await,
        );
        assert_eq!(message, format!("argument `names[0]`: {GAVE_UP}"));
        assert_eq!(
            calls.load(Ordering::SeqCst),
            0,
            "a value that was not checked was sent"
        );
        // a value it can check is sent
        let found = lookup
            .call(json!({"name": "Ada Lovelace"}), ToolContext::default())
            .await
            .unwrap();
        assert_eq!(found, json!("found"));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    });
}

/// Proves: the client's `.timeout(..)` covers the check of a call's arguments: a costly check
/// is made where the limit stops the call, and nothing is sent.
#[test]
fn the_clients_timeout_covers_the_check() {
    guarded(GUARD, async {
        let builder = McpClient::builder().timeout(Duration::from_millis(20));
        let (client, _server, calls) = connect_hostile(builder).await;
        let responses = vec![
            ModelResponse::tool_call("c1", "lookup", json!({"names": evil_strings(2000)})),
            ModelResponse::text("done"),
        ];
        let (result, _) = run_agent(responses, client.tools().await.unwrap(), |b| b).await;
        let failure = &result.tool_failures[0];
        assert_eq!(failure.kind, "timeout");
        assert!(failure.timed_out);
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    });
}
