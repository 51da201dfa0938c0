//! What the model may see is decided from types, never from how a type is written: a tool that
//! returns an alias of `Result`, a `Result` renamed with `use … as`, a `#[tools]` method
//! returning such an alias, or a `Result` deeper inside its output, never sends an error that
//! derives `Serialize` to the model as a successful output.
//!
//! Each shape is driven through `Tool::call`, `Tool::call_text`, an agent run, the MCP server
//! and both HTTP providers' request bodies: the canary in the error never appears in
//! model-visible text, and the caller's `ToolFailure` carries it.

use std::sync::Arc;
use std::time::Duration;

use reticent::mcp::McpServer;
use reticent::mcp::rmcp::model::CallToolRequestParams;
use reticent::providers::anthropic::Anthropic;
use reticent::{
    Agent, AgentResult, Model, ModelResponse, ScriptedModel, Tool, ToolContext, ToolError,
    ToolFailure, Toolbox, failures::OutputError,
};
use reticent_tests::mcp::{Failures, connect, text};
use reticent_tests::provider::{Reply, TestServer, fixture, openai, openai_tool_call};
use serde::Serialize;
use serde_json::json;

const CANARY: &str = "CANARY-7e01c2";

/// An error a developer made `Serialize` (to log it as JSON, say): serialized as an output, its
/// fields would reach the model.
#[derive(Debug, Serialize, thiserror::Error)]
#[error("cannot reach {dsn}")]
struct SerErr {
    dsn: String,
}

fn ser_err() -> SerErr {
    SerErr {
        dsn: format!("postgres://admin:{CANARY}@10.0.0.7/prod"),
    }
}

// ---- the shapes ----------------------------------------------------------------------------

/// An alias of `Result`.
type Outcome = Result<String, SerErr>;

/// A generic alias, as crates write for their own error type.
type AppResult<T> = Result<T, SerErr>;

mod renamed {
    pub(crate) use std::result::Result as Res;
}
use renamed::Res;

/// Fails; its return type is an alias of `Result`.
#[reticent::tool]
fn aliased() -> Outcome {
    Err(ser_err())
}

/// Fails; its return type is a generic alias of `Result`.
#[reticent::tool]
async fn aliased_generic(
    /// Ignored.
    n: u32,
) -> AppResult<u32> {
    let _ = n;
    Err(ser_err())
}

/// Fails; `Result` is renamed with `use … as`.
#[reticent::tool]
fn renamed_result() -> Res<String, SerErr> {
    Err(ser_err())
}

/// A toolbox whose method returns an alias.
struct Store;

#[reticent::tools]
impl Store {
    /// Fails; its return type is an alias of `Result`.
    #[tool]
    async fn method_aliased(&self) -> Outcome {
        Err(ser_err())
    }
}

/// An output with a `Result` in a struct field.
#[derive(Serialize)]
struct Report {
    rows: u32,
    outcome: Result<u32, SerErr>,
}

/// Succeeds with a `Result` in a struct field of its output.
#[reticent::tool]
fn result_in_field() -> Result<Report, std::io::Error> {
    Ok(Report {
        rows: 3,
        outcome: Err(ser_err()),
    })
}

/// Succeeds with results in a `Vec`.
#[reticent::tool]
fn results_in_vec() -> Vec<Result<u32, SerErr>> {
    vec![Ok(1), Err(ser_err())]
}

/// Succeeds with an alias of `Result` deep in an `Option`.
#[reticent::tool]
fn result_in_option() -> Option<Vec<Outcome>> {
    Some(vec![Err(ser_err())])
}

/// The tools, each with the kind the model must be shown.
fn shapes() -> Vec<(Arc<dyn Tool>, &'static str)> {
    let mut tools: Vec<(Arc<dyn Tool>, &'static str)> = vec![
        (Arc::new(Aliased), "SerErr"),
        (Arc::new(AliasedGeneric), "SerErr"),
        (Arc::new(RenamedResult), "SerErr"),
        (Arc::new(ResultInField), "OutputError"),
        (Arc::new(ResultsInVec), "OutputError"),
        (Arc::new(ResultInOption), "OutputError"),
    ];
    for tool in Arc::new(Store).tools() {
        tools.push((tool, "SerErr"));
    }
    tools
}

fn arguments(tool: &dyn Tool) -> serde_json::Value {
    if tool.definition().name == "aliased_generic" {
        json!({"n": 1})
    } else {
        json!({})
    }
}

fn shown(name: &str, kind: &str) -> String {
    format!("Tool '{name}' failed with {kind}")
}

/// The caller's error holds the canary: the error itself, or for a refused output, nothing of
/// it (the output was the tool's success, and it is not kept).
fn check_caller_error(error: &ToolError, kind: &str) {
    let ToolError::Failed(failure) = error else {
        panic!("not a failure: {error:?}")
    };
    assert_eq!(failure.kind(), kind);
    if kind == "SerErr" {
        let ser = failure.error().downcast_ref::<SerErr>().expect("the error");
        assert!(ser.dsn.contains(CANARY));
    } else {
        let output = failure
            .error()
            .downcast_ref::<OutputError>()
            .expect("an output error");
        assert!(output.holds_result());
        assert!(failure.is_fatal());
        assert!(!output.to_string().contains(CANARY));
    }
}

// ---- Tool::call and call_text --------------------------------------------------------------

#[tokio::test]
async fn every_shape_is_a_failure_through_call_and_call_text() {
    for (tool, kind) in shapes() {
        let name = tool.definition().name.clone();
        let args = arguments(&*tool);
        let by_value = tool
            .call(args.clone(), ToolContext::default())
            .await
            .expect_err(&name);
        let by_text = tool
            .call_text(&args.to_string(), ToolContext::default())
            .await
            .expect_err(&name);
        for error in [by_value, by_text] {
            check_caller_error(&error, kind);
            for include in [false, true] {
                let text = error.model_text(&name, include);
                if !include {
                    assert_eq!(text, shown(&name, kind));
                }
                if kind == "OutputError" || !include {
                    assert!(!text.contains(CANARY), "{name}: {text}");
                }
            }
        }
    }
}

#[test]
fn the_function_stays_callable_as_written() {
    assert!(aliased().is_err());
    assert!(renamed_result().is_err());
    assert!(results_in_vec()[1].is_err());
}

// ---- the agent loop ------------------------------------------------------------------------

fn agent(model: impl Model) -> reticent::Agent {
    let mut builder = Agent::builder(model).system("You run reports.");
    for (tool, _) in shapes() {
        builder = builder.tool_arc(tool);
    }
    builder.build().unwrap()
}

fn calls() -> Vec<reticent::ToolCall> {
    shapes()
        .iter()
        .enumerate()
        .map(|(i, (tool, _))| {
            reticent::ToolCall::new(
                format!("call_{i}"),
                tool.definition().name.clone(),
                arguments(&**tool),
            )
        })
        .collect()
}

fn check_failures(failures: &[ToolFailure]) {
    let kinds: std::collections::HashMap<String, &str> = shapes()
        .into_iter()
        .map(|(tool, kind)| (tool.definition().name.clone(), kind))
        .collect();
    assert!(!failures.is_empty());
    for failure in failures {
        let kind = kinds[&failure.tool];
        assert_eq!(failure.kind, kind);
        assert_eq!(failure.shown_to_model, shown(&failure.tool, kind));
        if kind == "SerErr" {
            assert!(failure.error_chain().contains(CANARY), "{failure:?}");
            assert!(failure.error.downcast_ref::<SerErr>().is_some());
        } else {
            assert!(failure.fatal);
        }
    }
}

#[tokio::test]
async fn an_agent_run_shows_the_model_the_kind_only() {
    // The fatal output failures end a run: the failing calls go first, one run each.
    for call in calls() {
        let model = ScriptedModel::new(vec![
            ModelResponse::tool_calls(vec![call]),
            ModelResponse::text("Done."),
        ]);
        let agent = agent(model.clone());
        let (failures, messages) = match agent.run("Run the report.").await {
            Ok(result) => (result.tool_failures, result.messages),
            Err(reticent::AgentError::ToolFailed { failure, partial }) => {
                (vec![failure], partial.messages)
            }
            Err(other) => panic!("{other:?}"),
        };
        check_failures(&failures);
        let transcript = serde_json::to_string(&messages).unwrap();
        assert!(!transcript.contains(CANARY), "{transcript}");
        for request in model.requests() {
            let request = format!("{request:?}");
            assert!(!request.contains(CANARY), "{request}");
            assert!(!request.contains("\"Err\""), "{request}");
        }
    }
}

// ---- MCP -----------------------------------------------------------------------------------

#[tokio::test]
async fn the_mcp_server_reports_an_error_with_the_kind_only() {
    let failures = Failures::default();
    let mut builder = McpServer::builder();
    for (tool, _) in shapes() {
        builder = builder.tool_arc(tool);
    }
    let server = builder.on_failure(failures.hook()).build().unwrap();
    let connection = connect(server).await;
    for (tool, kind) in shapes() {
        let name = tool.definition().name.clone();
        let mut params = CallToolRequestParams::new(name.clone());
        if let serde_json::Value::Object(map) = arguments(&*tool) {
            params = params.with_arguments(map);
        }
        let result = connection.client.call_tool(params).await.unwrap();
        assert_eq!(result.is_error, Some(true), "{name}");
        assert_eq!(text(&result), shown(&name, kind));
    }
    let received = connection.received();
    assert!(
        received.contains("failed with SerErr"),
        "the wire was recorded"
    );
    assert!(!received.contains(CANARY), "the canary reached the client");
    check_failures(&failures.all());
}

// ---- the providers' request bodies ---------------------------------------------------------

async fn run_provider(model: impl Model) -> AgentResult {
    Agent::builder(model)
        .tool(Aliased)
        .build()
        .unwrap()
        .run("Run the report.")
        .await
        .unwrap()
}

fn check_provider(result: &AgentResult, server: &TestServer) {
    check_failures(&result.tool_failures);
    let received = server.received();
    assert_eq!(received.len(), 2);
    for request in &received {
        assert!(!request.text().contains(CANARY), "{}", request.text());
    }
    assert!(received[1].body.contains("failed with SerErr"));
}

#[tokio::test]
async fn openai_request_bodies_never_carry_the_error() {
    let call = openai_tool_call("call_1", "aliased", "{}");
    let server = TestServer::start(vec![
        Reply::json(call),
        Reply::json(fixture("openai/response_text.json")),
    ])
    .await;
    let model = openai(&server);
    check_provider(&run_provider(model).await, &server);
}

#[tokio::test]
async fn anthropic_request_bodies_never_carry_the_error() {
    let call = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "aliased", "input": {}}],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 100, "output_tokens": 20}
    });
    let server = TestServer::start(vec![
        Reply::json(call.to_string()),
        Reply::json(fixture("anthropic/response_text.json")),
    ])
    .await;
    let model = Anthropic::new("sk-ant-test", "claude-sonnet-4-5")
        .base_url(&server.url)
        .timeout(Duration::from_secs(10));
    check_provider(&run_provider(model).await, &server);
}
