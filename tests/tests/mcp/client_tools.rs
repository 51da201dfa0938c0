//! How `McpClient` turns a server's tool list and results into tools: every page of the list,
//! MCP's defaults for absent hints, names (prefix, rename, exclude, refusals), schemas it
//! cannot use, and each kind of content. The server is a small rmcp server written here, on
//! an in-memory duplex, so the list and the results can be anything the protocol allows.

use std::sync::Arc;
use std::time::Duration;

use reticent::mcp::rmcp::model::Resource;
use reticent::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ResourceContents, ServerCapabilities,
    ServerConfig, Tool as McpTool, ToolAnnotations as McpAnnotations,
};
use reticent::mcp::rmcp::service::{RequestContext, RoleServer, RunningService};
use reticent::mcp::rmcp::{ServerHandler, ServiceExt};
use reticent::mcp::{McpCallError, McpClient, McpClientBuilder, McpClientError, McpToolError};
use reticent::{Tool, ToolContext, ToolError};
use reticent_tests::mcp::find_tool;
use serde_json::{Map, Value, json};

/// A server whose tools come in pages of two.
#[derive(Clone)]
struct Paged {
    tools: Vec<McpTool>,
}

fn schema(value: Value) -> Arc<Map<String, Value>> {
    Arc::new(value.as_object().expect("an object").clone())
}

fn object_schema() -> Arc<Map<String, Value>> {
    schema(json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}))
}

impl ServerHandler for Paged {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("paged", "1.0.0"))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start: usize = request
            .and_then(|r| r.cursor)
            .map_or(0, |cursor| cursor.parse().unwrap());
        let end = (start + 2).min(self.tools.len());
        let mut page = ListToolsResult::with_all_items(self.tools[start..end].to_vec());
        if end < self.tools.len() {
            page.next_cursor = Some(end.to_string());
        }
        Ok(page)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let png = "iVBORw0KGgo="; // 8 bytes
        let result = match &*request.name {
            "echo" => CallToolResult::success(vec![ContentBlock::text(
                Value::Object(request.arguments.unwrap_or_default()).to_string(),
            )]),
            "mixed" => CallToolResult::success(vec![
                ContentBlock::text("a chart and its data"),
                ContentBlock::image(png, "image/png"),
                ContentBlock::audio("AAAA", "audio/wav"),
                ContentBlock::resource(ResourceContents::text("col1,col2", "file:///data.csv")),
                ContentBlock::resource(
                    ResourceContents::blob("AAAAAA==", "file:///data.bin")
                        .with_mime_type("application/octet-stream"),
                ),
                ContentBlock::resource_link(Resource::new("file:///report.pdf", "report")),
            ]),
            "structured" => CallToolResult::structured(json!({"total": 3, "unit": "orders"})),
            "structured_error" => {
                let mut result = CallToolResult::structured_error(json!({"code": "E42"}));
                result.content.clear();
                result
            }
            "refuse" => {
                return Err(ErrorData::invalid_params(
                    "refused: token sk-c4n4ry is not allowed here",
                    None,
                ));
            }
            _ => return Err(ErrorData::invalid_params("no such tool", None)),
        };
        Ok(result.into())
    }
}

/// A tool with `n: integer >= 1` and the given hints.
fn tool(name: &str, annotations: Option<McpAnnotations>) -> McpTool {
    let mut tool = McpTool::new(
        name.to_owned(),
        format!("The {name} tool."),
        object_schema(),
    );
    tool.annotations = annotations;
    tool
}

/// Connects `builder` to a server listing `tools`; keep the server's side alive.
async fn connect(
    tools: Vec<McpTool>,
    builder: McpClientBuilder,
) -> (McpClient, RunningService<RoleServer, Paged>) {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (server, client) = tokio::join!(
        Paged { tools }.serve(server_end),
        builder.connect(tokio::io::split(client_end)),
    );
    (client.unwrap(), server.unwrap())
}

fn names(tools: &[Arc<dyn Tool>]) -> Vec<&str> {
    tools.iter().map(|t| t.definition().name.as_str()).collect()
}

#[tokio::test]
async fn every_page_is_listed_and_absent_hints_take_mcps_defaults() {
    let listed = vec![
        tool("echo", None),
        tool("mixed", Some(McpAnnotations::new())),
        tool(
            "structured",
            Some(McpAnnotations::new().read_only(true).destructive(true)),
        ),
        tool(
            "structured_error",
            Some(
                McpAnnotations::new()
                    .destructive(false)
                    .idempotent(true)
                    .open_world(false),
            ),
        ),
        tool("refuse", None),
    ];
    let (client, _server) = connect(listed, McpClient::builder()).await;
    assert_eq!(client.name(), "paged");
    let tools = client.tools().await.unwrap();
    assert_eq!(
        names(&tools),
        ["echo", "mixed", "structured", "structured_error", "refuse"]
    );

    let hints = |name| find_tool(&tools, name).definition().annotations;
    for absent in ["echo", "mixed"] {
        let a = hints(absent);
        assert!(
            !a.read_only && a.destructive && !a.idempotent && a.open_world,
            "{absent}"
        );
    }
    // A read-only tool is not destructive, whatever the hint says.
    let a = hints("structured");
    assert!(a.read_only && !a.destructive && a.open_world);
    let a = hints("structured_error");
    assert!(!a.read_only && !a.destructive && a.idempotent && !a.open_world);
    assert_eq!(
        find_tool(&tools, "echo").definition().description,
        "The echo tool."
    );
}

#[tokio::test]
async fn names_take_the_prefix_renames_and_exclusions() {
    let listed = vec![
        tool("echo", None),
        tool("mixed", None),
        tool("refuse", None),
    ];
    let builder = McpClient::builder()
        .prefix("srv_")
        .rename("mixed", "content_demo")
        .exclude("refuse");
    let (client, _server) = connect(listed.clone(), builder).await;
    let tools = client.tools().await.unwrap();
    assert_eq!(names(&tools), ["srv_echo", "content_demo"]);
    // The server is called by its own name.
    let echoed = find_tool(&tools, "srv_echo")
        .call(json!({"n": 2}), ToolContext::default())
        .await
        .unwrap();
    assert_eq!(echoed, json!(r#"{"n":2}"#));

    // A rename onto another tool's name.
    let builder = McpClient::builder().rename("mixed", "echo");
    let (client, _server) = connect(listed.clone(), builder).await;
    let error = client.tools().await.err().unwrap();
    assert!(
        matches!(&error, McpClientError::DuplicateTool { name, .. } if name == "echo"),
        "{error}"
    );

    // A prefix that makes a name too long: 60 + `echo` fits in 64 bytes, 60 + `mixed` does not.
    let builder = McpClient::builder().prefix("p".repeat(60));
    let (client, _server) = connect(listed.clone(), builder).await;
    let error = client.tools().await.err().unwrap();
    assert!(
        matches!(&error, McpClientError::InvalidToolName { remote, .. } if remote == "mixed"),
        "{error}"
    );

    // An exclusion of a tool the server does not have.
    let builder = McpClient::builder().exclude("nope");
    let (client, _server) = connect(listed, builder).await;
    let error = client.tools().await.err().unwrap();
    assert_eq!(
        error.to_string(),
        "exclude(\"nope\") names a tool the MCP server `paged` does not list; it lists: echo, \
         mixed, refuse"
    );
}

#[tokio::test]
async fn a_schema_that_cannot_be_used_is_refused_naming_the_tool() {
    let mut not_object = tool("echo", None);
    not_object.input_schema = schema(json!({"type": "string"}));
    let (client, _server) = connect(vec![not_object], McpClient::builder()).await;
    let error = client.tools().await.err().unwrap();
    assert!(matches!(&error, McpClientError::InvalidSchema { remote, .. } if remote == "echo"));
    assert!(
        error.to_string().contains("not an object schema"),
        "{error}"
    );

    // A `$ref` to another document is not fetched: the schema is refused instead.
    let mut remote_ref = tool("echo", None);
    remote_ref.input_schema = schema(json!({
        "type": "object",
        "properties": {"n": {"$ref": "https://schemas.invalid/n.json"}}
    }));
    let (client, _server) = connect(vec![remote_ref], McpClient::builder()).await;
    let error = client.tools().await.err().unwrap();
    assert!(
        matches!(&error, McpClientError::InvalidSchema { .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("https://schemas.invalid/n.json"),
        "{error}"
    );

    // Not a valid schema at all.
    let mut invalid = tool("echo", None);
    invalid.input_schema = schema(json!({"type": "object", "properties": {"n": {"type": 7}}}));
    let (client, _server) = connect(vec![invalid], McpClient::builder()).await;
    assert!(matches!(
        client.tools().await.err().unwrap(),
        McpClientError::InvalidSchema { .. }
    ));
}

#[tokio::test]
async fn violations_name_the_path_and_the_constraint_and_are_bounded() {
    let (client, _server) = connect(vec![tool("echo", None)], McpClient::builder()).await;
    let echo = find_tool(&client.tools().await.unwrap(), "echo");
    let error = echo
        .call(json!({"n": 0}), ToolContext::default())
        .await
        .unwrap_err();
    assert_eq!(
        error.model_text("echo", false),
        "Invalid arguments for tool 'echo': argument `n`: 0 is less than the minimum of 1"
    );

    // A huge value is cut, and past three violations the rest are summed up.
    let mut echo_many = tool("echo", None);
    echo_many.input_schema = schema(json!({
        "type": "object",
        "properties": {
            "a": {"type": "integer"}, "b": {"type": "integer"},
            "c": {"type": "integer"}, "d": {"type": "integer"}
        }
    }));
    let (client, _server) = connect(vec![echo_many], McpClient::builder()).await;
    let echo = find_tool(&client.tools().await.unwrap(), "echo");
    let huge = "x".repeat(100_000);
    let error = echo
        .call(
            json!({"a": huge, "b": "1", "c": "2", "d": "3"}),
            ToolContext::default(),
        )
        .await
        .unwrap_err();
    let text = error.model_text("echo", false);
    assert!(text.len() < 600, "{} bytes: {text}", text.len());
    assert!(text.contains("bytes cut"), "{text}");
    assert!(
        text.contains("argument `b`: \"1\" is not of type \"integer\""),
        "{text}"
    );
    assert!(text.ends_with("; and more"), "{text}");
}

#[tokio::test]
async fn content_of_every_kind_becomes_text_and_structured_content_the_output() {
    let listed = ["mixed", "structured", "structured_error", "refuse"]
        .into_iter()
        .map(|name| tool(name, None))
        .collect();
    let (client, _server) = connect(listed, McpClient::builder()).await;
    let tools = client.tools().await.unwrap();
    let call = |name: &'static str| {
        let tool = find_tool(&tools, name);
        async move { tool.call(json!({}), ToolContext::default()).await }
    };

    assert_eq!(
        call("mixed").await.unwrap(),
        json!(
            "a chart and its data\n\
             [image not shown: image/png 8 bytes]\n\
             [audio not shown: audio/wav 3 bytes]\n\
             col1,col2\n\
             [resource not shown: file:///data.bin application/octet-stream 4 bytes]\n\
             [resource link: report file:///report.pdf]"
        )
    );
    assert_eq!(
        call("structured").await.unwrap(),
        json!({"total": 3, "unit": "orders"})
    );

    // A tool error with structured content only: its JSON is the caller's text.
    let Err(ToolError::Failed(failure)) = call("structured_error").await else {
        panic!("a tool error")
    };
    let error = failure.error().downcast_ref::<McpToolError>().unwrap();
    assert_eq!(error.content(), r#"{"code":"E42"}"#);
    assert_eq!(error.structured_content(), Some(&json!({"code": "E42"})));

    // A JSON-RPC error is a protocol error: the kind for the model, the message for the caller.
    let Err(ToolError::Failed(failure)) = call("refuse").await else {
        panic!("a protocol error")
    };
    assert_eq!(failure.kind(), "McpProtocolError");
    assert_eq!(
        ToolError::Failed(failure.clone()).model_text("refuse", false),
        "Tool 'refuse' failed with McpProtocolError"
    );
    let error = failure.error().downcast_ref::<McpCallError>().unwrap();
    assert!(matches!(error, McpCallError::Protocol { .. }));
    assert!(!error.effect_unknown());
    let source = std::error::Error::source(error).expect("the server's error");
    assert!(source.to_string().contains("sk-c4n4ry"), "{source}");
}

#[tokio::test]
async fn a_server_that_cannot_start_or_does_not_answer_is_an_error() {
    let error = McpClient::stdio(tokio::process::Command::new("/nonexistent/mcp-server"))
        .await
        .err()
        .unwrap();
    assert!(matches!(error, McpClientError::Spawn { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "could not start the MCP server \"/nonexistent/mcp-server\""
    );

    // `sleep` reads nothing and writes nothing.
    let mut sleep = tokio::process::Command::new("sleep");
    sleep.arg("30");
    let error = McpClient::builder()
        .connect_timeout(Duration::from_millis(300))
        .stdio(sleep)
        .await
        .err()
        .unwrap();
    let McpClientError::Initialize { server, source } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(server, "sleep");
    assert_eq!(source.to_string(), "no answer within 300ms");

    // Nothing listens on port 1; the URL's credentials stay out of the error.
    let error = McpClient::http("http://user:pa55@127.0.0.1:1/mcp")
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&error, McpClientError::Initialize { server, .. } if server == "127.0.0.1:1"),
        "{error:?}"
    );
    assert!(!format!("{error:?}").contains("pa55"), "{error:?}");

    let error = McpClient::builder()
        .header("bad header", "x")
        .http("http://127.0.0.1:1/mcp")
        .await
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "could not set up the HTTP client for the MCP server `127.0.0.1:1`: `bad header` is \
         not a valid header name"
    );
}
