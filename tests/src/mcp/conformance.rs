//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/conformance/package.json`): the server its server scenarios test, the baseline of
//! the scenarios that do not apply (`tests/conformance/baseline.yml`), and how to run it.
//!
//! The suite runs on Node 22, both found through environment variables that `.ci/run` sets
//! after installing them from npm (`tests/conformance/install.sh`): `RETICENT_NODE` (the
//! `node` binary) and `RETICENT_MCP_CONFORMANCE` (the suite's entry script). A test that needs
//! them and finds them unset is skipped, loudly.
//!
//! The server serves, through `#[tool]`, the tools the server scenarios call. One of them
//! discloses more than the default: the `tools-call-error` scenario expects the text of a tool
//! error to reach the client, so `test_error_handling` fails with a [`Failure`] its author
//! opted in to show ([`Failure::show_message`]). Every other failure of these tools follows
//! the default rule (the client is told the kind only).
//!
//! The elicitation and sampling scenarios' tools ask the client through
//! [`ToolContext::elicit`] and [`ToolContext::sample`], each wait bounded by [`ASK_WAIT`].
//!
//! The server closes each request's event stream after [`POLL_OPEN_FOR`] (SSE polling,
//! `McpServerBuilder::sse_polling`); `test_reconnection` runs past it, so that the
//! `server-sse-polling` scenario gets its result by resuming the stream.
#![allow(deprecated)] // sampling is deprecated by the 2026-07-28 protocol (SEP-2577), still in use.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use reticent::mcp::rmcp::model::{CreateMessageRequestParams, ElicitationSchema, SamplingMessage};
use reticent::mcp::{AskError, Elicited, McpServer};
use reticent::{
    Failure, Tool, ToolContext, ToolDefinition, ToolError,
    tool::{LogLevel, ToolFuture},
};
use serde_json::{Value, json};

use super::python::workspace;

/// The text `test_error_handling` fails with, which the client is shown (see the module docs).
pub const INTENTIONAL_ERROR: &str = "This tool intentionally returns an error for testing";

/// The error `test_error_handling` always fails with.
#[derive(Debug, thiserror::Error)]
#[error("{INTENTIONAL_ERROR}")]
pub struct IntentionalError;

/// Returns a simple text.
#[reticent::tool(read_only, idempotent)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Logs three lines at info level while it runs, 50 ms apart.
#[reticent::tool(read_only, idempotent)]
async fn test_tool_with_logging(cx: &ToolContext) -> &'static str {
    cx.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    cx.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    cx.log(LogLevel::Info, "Tool execution completed");
    "Tool with logging executed successfully"
}

/// Reports progress 0, 50 and 100 of 100, 50 ms apart.
#[reticent::tool(read_only, idempotent)]
async fn test_tool_with_progress(cx: &ToolContext) -> &'static str {
    cx.progress(0.0, 100.0, None);
    tokio::time::sleep(Duration::from_millis(50)).await;
    cx.progress(50.0, 100.0, None);
    tokio::time::sleep(Duration::from_millis(50)).await;
    cx.progress(100.0, 100.0, None);
    "Tool with progress executed successfully"
}

/// Always fails, with an error whose text the client is shown.
#[reticent::tool(read_only, idempotent)]
fn test_error_handling() -> Result<String, ToolError> {
    // Opted in, for this failure only: the suite checks that the text reaches the client.
    Err(ToolError::Failed(
        Failure::new("IntentionalError", IntentionalError).show_message(),
    ))
}

/// Takes a name and an address.
#[reticent::tool(read_only, idempotent)]
fn json_schema_2020_12_tool(name: Option<String>, address: Option<Value>) -> String {
    let city = address
        .as_ref()
        .and_then(|a| a.get("city"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    format!("{} {city}", name.unwrap_or_default())
}

/// How long a tool waits for the client to answer a question.
pub const ASK_WAIT: Duration = Duration::from_secs(20);

/// The form `schema` (a JSON Schema object) describes.
fn form(schema: Value) -> ElicitationSchema {
    let Value::Object(schema) = schema else {
        panic!("a form's schema is an object")
    };
    ElicitationSchema::from_json_schema(schema).expect("the scenario's form is a valid form")
}

/// What the user answered, as the scenarios' tools say it.
fn answered(elicited: Elicited) -> String {
    match elicited {
        Elicited::Accepted(content) => format!("action=accept, content={content}"),
        Elicited::Declined => "action=decline, content={}".to_owned(),
        Elicited::Cancelled => "action=cancel, content={}".to_owned(),
        // A later answer this version does not know.
        _ => "action=unknown".to_owned(),
    }
}

/// Asks the client's user for a username and an email, with the message given.
#[reticent::tool(read_only)]
async fn test_elicitation(
    /// The message to show the user.
    message: String,
    cx: &ToolContext,
) -> Result<String, AskError> {
    let form = form(json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    }));
    let elicited = cx.elicit(message, form, ASK_WAIT).await?;
    Ok(format!("User response: {}", answered(elicited)))
}

/// Asks the client's user with a form whose fields of every primitive type have defaults.
#[reticent::tool(read_only)]
async fn test_elicitation_sep1034_defaults(cx: &ToolContext) -> Result<String, AskError> {
    let form = form(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        }
    }));
    let elicited = cx
        .elicit(
            "Please review and update the form fields with defaults",
            form,
            ASK_WAIT,
        )
        .await?;
    Ok(format!("Elicitation completed: {}", answered(elicited)))
}

/// Asks the client's user with a form of every kind of enum field.
#[reticent::tool(read_only)]
async fn test_elicitation_sep1330_enums(cx: &ToolContext) -> Result<String, AskError> {
    let form = form(json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Choose an option",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Choose a titled option",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]
            },
            "legacyEnum": {
                "type": "string",
                "description": "Choose a legacy option",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Choose multiple options",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array",
                "description": "Choose multiple titled options",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}
                    ]
                }
            }
        }
    }));
    let elicited = cx
        .elicit("Please select options from the enum fields", form, ASK_WAIT)
        .await?;
    Ok(format!("Elicitation completed: {}", answered(elicited)))
}

/// Asks the client's model to complete the prompt given.
#[reticent::tool(read_only)]
async fn test_sampling(
    /// The prompt to send to the model.
    prompt: String,
    cx: &ToolContext,
) -> Result<String, AskError> {
    let request = CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], 100);
    let result = cx.sample(request, ASK_WAIT).await?;
    let content = serde_json::to_value(&result.message.content).unwrap_or_default();
    let first = match &content {
        Value::Array(blocks) => blocks.first().unwrap_or(&Value::Null),
        block => block,
    };
    let text = first
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Ok(format!("LLM response: {text}"))
}

/// How long a request's event stream stays open on the conformance server before the client
/// is told to resume it (SSE polling, SEP-1699; the `server-sse-polling` scenario).
pub const POLL_OPEN_FOR: Duration = Duration::from_secs(1);

/// The hint the conformance server sends of when to resume a closed stream.
pub const POLL_RETRY: Duration = Duration::from_millis(500);

/// Runs half a window past [`POLL_OPEN_FOR`]: its stream is closed mid-call, and the client
/// gets the result by resuming it.
#[reticent::tool(read_only, idempotent)]
async fn test_reconnection() -> &'static str {
    tokio::time::sleep(POLL_OPEN_FOR + POLL_OPEN_FOR / 2).await;
    "Reconnection test completed successfully"
}

/// The input schema the `json-schema-2020-12` scenario expects `tools/list` to keep as it is:
/// `$schema`, `$defs` and `additionalProperties`.
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {
                    "street": { "type": "string" },
                    "city": { "type": "string" }
                }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" }
        },
        "additionalProperties": false
    })
}

/// A tool listed with an input schema written by hand, which accepts what the tool's own
/// does; the tool still checks its arguments against its own schema.
#[derive(Debug)]
struct WithSchema<T> {
    tool: T,
    definition: ToolDefinition,
}

impl<T: Tool> WithSchema<T> {
    fn new(tool: T, description: &str, parameters: Value) -> Self {
        let own = tool.definition();
        let definition = ToolDefinition::new(own.name.clone(), description, parameters)
            .with_annotations(own.annotations);
        Self { tool, definition }
    }
}

impl<T: Tool> Tool for WithSchema<T> {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, args: Value, cx: ToolContext) -> ToolFuture<'_> {
        self.tool.call(args, cx)
    }

    fn reads_context(&self) -> bool {
        self.tool.reads_context()
    }

    fn is_blocking(&self) -> bool {
        self.tool.is_blocking()
    }
}

/// The server the suite's server scenarios test.
pub fn server() -> McpServer {
    McpServer::builder()
        .name("reticent-conformance")
        .version(env!("CARGO_PKG_VERSION"))
        .tool(TestSimpleText)
        .tool(TestToolWithLogging)
        .tool(TestToolWithProgress)
        .tool(TestErrorHandling)
        .tool(TestElicitation)
        .tool(TestElicitationSep1034Defaults)
        .tool(TestElicitationSep1330Enums)
        .tool(TestSampling)
        .tool(WithSchema::new(
            JsonSchema202012Tool,
            "Tool with JSON Schema 2020-12 features",
            json_schema_2020_12(),
        ))
        .timeout(Duration::from_secs(30))
        // SSE polling: `test_reconnection` runs past the window, every other tool within it.
        .tool(TestReconnection)
        .sse_polling(POLL_OPEN_FOR, POLL_RETRY)
        .build()
        .expect("the conformance server's tools are valid")
}

/// Where the suite's files are: the baseline and the pinned package.
pub fn folder() -> PathBuf {
    workspace().join("tests/conformance")
}

/// The suite, ready to run.
#[derive(Debug, Clone)]
pub struct Suite {
    /// Node 22's `node`.
    pub node: PathBuf,
    /// The suite's entry script.
    pub cli: PathBuf,
}

impl Suite {
    /// The suite found through `RETICENT_NODE` and `RETICENT_MCP_CONFORMANCE`, or `None` when
    /// either is unset: the test is skipped, with a notice naming `what` goes unchecked.
    pub fn find(what: &str) -> Option<Self> {
        let var = |name: &str| {
            std::env::var_os(name).map(|path| {
                let path = PathBuf::from(path);
                assert!(
                    path.exists(),
                    "{name} is {}, which does not exist",
                    path.display()
                );
                path
            })
        };
        match (var("RETICENT_NODE"), var("RETICENT_MCP_CONFORMANCE")) {
            (Some(node), Some(cli)) => Some(Self { node, cli }),
            _ => {
                // Straight to stderr, past the test harness's capture, so it is seen.
                let _ = writeln!(
                    std::io::stderr(),
                    "\n\
                     ************************************************************************\n\
                     SKIPPED (RETICENT_NODE or RETICENT_MCP_CONFORMANCE unset; .ci/run sets\n\
                     them after tests/conformance/install.sh): {what}\n\
                     was NOT checked by the MCP conformance suite.\n\
                     ************************************************************************\n"
                );
                None
            }
        }
    }

    /// A command that runs the suite with `args`.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.node);
        command.arg(&self.cli).args(args).kill_on_drop(true);
        command
    }
}

/// The baseline of expected failures, to pass as `--expected-failures`.
pub fn baseline() -> PathBuf {
    folder().join("baseline.yml")
}

/// Where a test keeps the suite's results: a fresh folder under `target/`.
pub fn results(name: &str) -> PathBuf {
    let dir = workspace().join("target/conformance").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the results folder can be made");
    dir
}
