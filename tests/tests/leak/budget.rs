//! Output budgets: a successful output past its budget never reaches the model whole, and the
//! caller gets every byte of it.
//!
//! The property plants a canary in the part of an output its budget leaves out (in text and in
//! JSON, with characters of one to four bytes around it) and checks every channel the model
//! could read with `reticent::testing`'s `LeakReport`: the transcript, every request the
//! scripted model received, the trajectory and the body each built-in provider would send for
//! them. The view the model is shown is exactly the output's head and tail, cut at character
//! boundaries, around a notice of how much was left out; a cut JSON output never parses. The
//! caller's `ToolSucceeded` event, `whole_outputs` and `tool_output` hold the whole output.
//! Then a 20 MB output, on the scripted model and on the wire of an HTTP provider, and the
//! MCP server's opt-in budget.

use futures::StreamExt;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use reticent::mcp::McpServer;
use reticent::mcp::rmcp::model::CallToolRequestParams;
use reticent::testing::LeakReport;
use reticent::tool::{DEFAULT_MAX_OUTPUT, ToolFuture};
use reticent::{
    Agent, AgentEvent, AgentResult, Message, ModelResponse, ReplayModel, ScriptedModel, Tool,
    ToolContext, ToolDefinition,
};
use reticent_tests::mcp::{connect, text};
use reticent_tests::provider::{Reply, TestServer, fixture, openai, openai_tool_call};
use serde_json::{Value, json};

const CANARY: &str = "CANARY-budget-7c2e91";

/// A tool whose output is given: a string, or any other JSON value.
struct Emit {
    definition: ToolDefinition,
    output: Value,
    max_output: Option<usize>,
}

impl Emit {
    fn new(output: Value, max_output: Option<usize>) -> Self {
        Self {
            definition: ToolDefinition::new(
                "emit",
                "Emit the output.",
                json!({"type": "object", "properties": {}}),
            ),
            output,
            max_output,
        }
    }
}

impl Tool for Emit {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, _: Value, _: ToolContext) -> ToolFuture<'_> {
        ToolFuture::ready(Ok(self.output.clone()))
    }

    fn max_output(&self) -> Option<usize> {
        self.max_output
    }
}

/// A run of an agent whose model calls `emit` once, then answers.
struct Run {
    result: AgentResult,
    model: ScriptedModel,
    /// The output and the view of the `ToolSucceeded` event.
    event: (String, Option<String>),
}

async fn run(tool: impl Tool, agent_budget: Option<usize>) -> Run {
    let name = tool.definition().name.clone();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("call_1", &name, json!({})),
        ModelResponse::text("done"),
    ]);
    let mut builder = Agent::builder(model.clone()).tool(tool);
    if let Some(budget) = agent_budget {
        builder = builder.max_tool_output(budget);
    }
    let agent = builder.build().unwrap();
    let mut events: Vec<AgentEvent> = agent.run_stream("Go.").collect().await;
    let event = events
        .iter()
        .find_map(|event| match event {
            AgentEvent::ToolSucceeded {
                output,
                shown_to_model,
                ..
            } => Some((output.clone(), shown_to_model.clone())),
            _ => None,
        })
        .expect("the call succeeded");
    let Some(AgentEvent::Finished(Ok(result))) = events.pop() else {
        panic!("the run did not finish")
    };
    Run {
        result,
        model,
        event,
    }
}

/// The result of `call_1` in `messages`.
fn shown(messages: &[Message]) -> &str {
    messages
        .iter()
        .find_map(|message| match message {
            Message::Tool(result) if result.call_id == "call_1" => Some(result.content.as_str()),
            _ => None,
        })
        .expect("the call's result is in the transcript")
}

/// What the rules say the model is shown of `output` under `budget`, as a head, the notice's
/// count of bytes left out, and a tail; `None` when it is shown whole.
fn expected_cut(output: &str, budget: usize) -> Option<(&str, usize, &str)> {
    if output.len() <= budget {
        return None;
    }
    let head = output.floor_char_boundary(budget / 2);
    let tail = output.ceil_char_boundary(output.len() - (budget - budget / 2));
    Some((&output[..head], tail - head, &output[tail..]))
}

/// Checks one run of an output whose text is `text` under `budget`.
fn check(text: &str, budget: usize, json: bool, run: &Run) -> Result<(), TestCaseError> {
    let result = &run.result;
    let view = shown(&result.messages);

    // The caller gets every byte.
    prop_assert_eq!(&run.event.0, text);
    prop_assert_eq!(result.tool_output("call_1"), Some(text));

    // Every request the model received holds the same view as the transcript.
    let requests = run.model.requests();
    prop_assert_eq!(requests.len(), 2);
    prop_assert_eq!(shown(&requests[1].messages), view);

    match expected_cut(text, budget) {
        None => {
            prop_assert_eq!(view, text);
            prop_assert_eq!(&run.event.1, &None);
            prop_assert!(result.whole_outputs.is_empty());
        }
        Some((head, left_out, tail)) => {
            prop_assert_eq!(run.event.1.as_deref(), Some(view));
            prop_assert_eq!(result.whole_outputs.len(), 1);
            prop_assert_eq!(&result.whole_outputs[0].output, text);
            prop_assert_eq!(&result.whole_outputs[0].call_id, "call_1");
            prop_assert!(view.starts_with(head) && view.ends_with(tail), "{}", view);
            prop_assert!(head.len() + tail.len() <= budget);
            let notice = &view[head.len()..view.len() - tail.len()];
            prop_assert!(
                notice.starts_with('\n') && notice.ends_with('\n'),
                "{}",
                notice
            );
            let count = format!("{left_out} of {} bytes", text.len());
            prop_assert!(notice.contains(&count), "{}", notice);
            prop_assert!(notice.len() < 400, "{}", notice);
            if json {
                prop_assert!(notice.contains("not valid JSON"), "{}", notice);
                prop_assert!(serde_json::from_str::<Value>(view).is_err(), "{}", view);
            }
        }
    }

    // The canary is in the model's channels exactly when the view holds it: checked in the
    // transcript, the trajectory, every request and every provider's body.
    let report = LeakReport::of_run(CANARY, result, &run.model);
    if view.contains(CANARY) {
        prop_assert!(report.check().is_err(), "the check finds a canary in view");
    } else if let Err(found) = report.check() {
        return Err(TestCaseError::fail(format!("{found}")));
    }
    Ok(())
}

/// Text of characters one to four bytes long.
fn pieces(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "b ", "\n", "é", "€", "😀", "\"", "\\", "{", "]"]),
        0..max,
    )
    .prop_map(|pieces| pieces.concat())
}

#[derive(Debug, Clone)]
struct Case {
    prefix: String,
    suffix: String,
    budget: usize,
    /// The output is `{"page": TEXT, "n": [..]}` rather than the text.
    json: bool,
    /// The budget is the tool's own, not the agent's.
    tool_budget: bool,
}

fn cases() -> impl Strategy<Value = Case> {
    (
        pieces(400),
        pieces(400),
        1usize..700,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(prefix, suffix, budget, json, tool_budget)| Case {
            prefix,
            suffix,
            budget,
            json,
            tool_budget,
        })
}

#[test]
fn output_past_its_budget_never_reaches_the_model_whole() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut runner = TestRunner::new(Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    });
    let outcome = runner.run(&cases(), |case| {
        let page = format!("{}{CANARY}{}", case.prefix, case.suffix);
        let output = if case.json {
            json!({"page": page, "n": [1, 2, 3]})
        } else {
            Value::String(page.clone())
        };
        let text = match &output {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let (tool_budget, agent_budget) = if case.tool_budget {
            (Some(case.budget), None)
        } else {
            (None, Some(case.budget))
        };
        let run = runtime.block_on(run(Emit::new(output, tool_budget), agent_budget));
        check(&text, case.budget, case.json, &run)
    });
    if let Err(error) = outcome {
        panic!("{error}");
    }
}

/// Twenty million bytes of text with the canary in the middle.
fn twenty_megabytes() -> String {
    let half = "all work and no play makes a long page.\n".repeat(250_000);
    format!("page-start {half}{CANARY}{half} page-end")
}

/// Read a very long page.
#[reticent::tool]
fn read_page() -> String {
    twenty_megabytes()
}

#[tokio::test]
async fn twenty_megabytes_of_a_local_tool_never_reach_the_model_whole() {
    let whole = twenty_megabytes();
    assert!(whole.len() > 20_000_000);
    // The agent's default budget: on out of the box.
    let run = run(ReadPage, None).await;
    check(&whole, DEFAULT_MAX_OUTPUT, false, &run).unwrap();
    let view = shown(&run.result.messages);
    assert!(view.starts_with("page-start ") && view.ends_with(" page-end"));
    assert!(view.len() < DEFAULT_MAX_OUTPUT + 400, "{}", view.len());
    let trajectory = serde_json::to_string(&run.result.trajectory).unwrap();
    assert!(
        trajectory.len() < 4 * DEFAULT_MAX_OUTPUT,
        "{}",
        trajectory.len()
    );
    assert_eq!(run.result.whole_outputs[0].output.len(), whole.len());
}

#[tokio::test]
async fn twenty_megabytes_never_reach_an_http_providers_request_whole() {
    let server = TestServer::start(vec![
        Reply::json(openai_tool_call("call_1", "read_page", "{}")),
        Reply::json(fixture("openai/response_text.json")),
    ])
    .await;
    let agent = Agent::builder(openai(&server))
        .tool(ReadPage)
        .build()
        .unwrap();
    let result = agent.run("Read the page.").await.unwrap();
    let received = server.received();
    assert_eq!(received.len(), 2);
    // The request that carries the result: the view, the conversation and the tools.
    assert!(
        received[1].body.len() < DEFAULT_MAX_OUTPUT + 8192,
        "{} bytes",
        received[1].body.len()
    );
    assert!(received[1].body.contains("page-start"));
    assert!(!received[1].body.contains(CANARY));
    assert_eq!(
        result.tool_output("call_1"),
        Some(twenty_megabytes().as_str())
    );
}

/// Read a long page, shown up to 1 KiB.
#[reticent::tool(max_output = "1KiB")]
fn read_short() -> String {
    format!("{}{CANARY}{}", "a".repeat(2000), "z".repeat(2000))
}

#[tokio::test]
async fn a_tools_own_budget_replaces_the_agents() {
    // Larger than the agent's: the tool's is used.
    let run = run(ReadShort, Some(1 << 20)).await;
    let view = shown(&run.result.messages);
    assert!(view.starts_with(&"a".repeat(512)), "{view}");
    assert!(view.contains("2996 of 4020 bytes"), "{view}");
    assert!(!view.contains(CANARY));
    // The trajectory holds the view, and replays: the tool's output is cut the same way.
    let replay = Agent::builder(ReplayModel::new(run.result.trajectory.clone()))
        .tool(ReadShort)
        .build()
        .unwrap();
    let replayed = replay.run("Go.").await.unwrap();
    assert_eq!(shown(&replayed.messages), view);
    // Smaller than the agent's default: the tool's is used too.
    let page = format!("{}{CANARY}{}", "a".repeat(600), "z".repeat(600));
    let run = self::run(Emit::new(Value::String(page), Some(100)), None).await;
    assert!(shown(&run.result.messages).contains("1120 of 1220 bytes"));
}

/// A long list.
#[reticent::tool]
fn numbers() -> Vec<u32> {
    (0..10_000).collect()
}

#[tokio::test]
async fn a_cut_json_output_says_it_is_cut_and_never_parses() {
    let run = run(Numbers, Some(1000)).await;
    let view = shown(&run.result.messages);
    assert!(view.starts_with("[0,1,2,3,"), "{view}");
    assert!(view.ends_with(",9998,9999]"), "{view}");
    assert!(view.contains("not valid JSON"), "{view}");
    assert!(serde_json::from_str::<Value>(view).is_err());
    let whole: Vec<u32> = serde_json::from_str(run.result.tool_output("call_1").unwrap()).unwrap();
    assert_eq!(whole.len(), 10_000);
}

#[tokio::test]
async fn an_mcp_server_sends_results_whole_unless_it_sets_a_budget() {
    // By default, whole: the client is the caller, even of a tool with a budget of its own.
    let connection = connect(McpServer::builder().tool(ReadShort).build().unwrap()).await;
    let result = connection
        .client
        .call_tool(CallToolRequestParams::new("read_short"))
        .await
        .unwrap();
    assert_eq!(text(&result).len(), 4020);
    assert!(connection.received().contains(CANARY));
    // With a budget: the server's for a tool without one, the tool's own for one with one.
    let server = McpServer::builder()
        .tool(ReadPage)
        .tool(ReadShort)
        .max_output(4096)
        .build()
        .unwrap();
    let connection = connect(server).await;
    let result = connection
        .client
        .call_tool(CallToolRequestParams::new("read_page"))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    let page = text(&result);
    assert!(page.len() < 4096 + 400, "{}", page.len());
    assert!(page.starts_with("page-start ") && page.ends_with(" page-end"));
    let result = connection
        .client
        .call_tool(CallToolRequestParams::new("read_short"))
        .await
        .unwrap();
    assert!(text(&result).contains("2996 of 4020 bytes"));
    assert!(!connection.received().contains(CANARY));
}
