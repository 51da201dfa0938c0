//! What the fuzz targets share: a tool with one parameter of each common kind, an agent
//! around it, and the checks every run must pass whatever the input: every call is answered,
//! in call order, and what the model is shown about a failed call stays short.
#![forbid(unsafe_code)]

use std::collections::{BTreeMap, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use reticent::{
    Agent, AgentResult, Message, Model, ModelError, ModelRequest, ModelResponse, Tool,
    ToolContext, ToolError, model::ModelEvent,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// The longest text the model may be shown about one failed call, besides the tool's name.
pub const MAX_SHOWN: usize = 1024;

/// The longest tool name echoed back to the model (`reticent::render` cuts longer ones).
const MAX_NAME: usize = 64;

/// A unit of length.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Centimetres.
    Cm,
    /// Inches.
    Inch,
}

/// A closed struct.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Size {
    /// Width.
    pub width: u16,
    /// Height.
    pub height: u16,
    /// Unit (default cm).
    pub unit: Option<Unit>,
}

/// An internally tagged enum.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Recipient {
    /// By email.
    Email {
        /// The address.
        address: String,
    },
    /// By phone.
    Phone {
        /// The number.
        number: u64,
    },
}

/// The tool's errors: one the model is shown, one it is not.
#[derive(Debug, thiserror::Error, reticent::Disclose)]
pub enum ShapeError {
    /// The model's fault.
    #[error("size {0}x{1} is too large; the limit is 1000x1000")]
    #[disclose(argument)]
    TooLarge(u16, u16),
    /// Not the model's fault.
    #[error("the store is unavailable for {0}")]
    Store(String),
}

/// Take one argument of every common kind and count them.
#[reticent::tool]
#[allow(clippy::too_many_arguments)]
pub fn shape(
    /// A name.
    name: String,
    /// A count.
    count: u32,
    /// An offset.
    offset: Option<i64>,
    /// A ratio.
    ratio: Option<f64>,
    /// A flag.
    flag: Option<bool>,
    /// Tags.
    tags: Option<Vec<String>>,
    /// A size.
    size: Option<Size>,
    /// Who to tell.
    to: Option<Recipient>,
    /// Labels.
    labels: Option<BTreeMap<String, i8>>,
    /// A character.
    code: Option<char>,
    /// A pair.
    pair: Option<(u8, String)>,
) -> Result<usize, ShapeError> {
    if let Some(Size { width, height, .. }) = size
        && (width > 1000 || height > 1000)
    {
        return Err(ShapeError::TooLarge(width, height));
    }
    if name == "store" {
        return Err(ShapeError::Store(name));
    }
    let _ = (offset, ratio, flag, to, code, pair);
    Ok(count as usize + tags.map_or(0, |t| t.len()) + labels.map_or(0, |l| l.len()))
}

/// A model that answers each request with the next response queued by [`run_agent`]; unlike
/// `ScriptedModel` it keeps no record of requests, so one agent serves every input.
#[derive(Clone, Default)]
struct Queued(Arc<Mutex<VecDeque<ModelResponse>>>);

impl Model for Queued {
    fn complete<'a>(
        &'a self,
        _request: &'a ModelRequest,
    ) -> Pin<Box<dyn Future<Output = Result<ModelResponse, ModelError>> + Send + 'a>> {
        let next = self.0.lock().unwrap().pop_front();
        Box::pin(async move { next.ok_or_else(|| ModelError::new("no response queued")) })
    }
}

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    static AGENT: (Queued, Agent) = {
        let model = Queued::default();
        let agent = Agent::builder(model.clone()).tool(Shape).build().expect("the agent builds");
        (model, agent)
    };
}

fn block_on<F: Future>(future: F) -> F::Output {
    RUNTIME.with(|runtime| runtime.block_on(future))
}

/// Calls the tool directly and checks what the model would be shown if it failed.
pub fn call_tool(arguments: Value) {
    if let Err(error) = block_on(Shape.call(arguments, ToolContext::default())) {
        check_error_text(&error);
    }
}

/// `Shape` without its own `call_text`: the trait's provided method, which parses the text and
/// calls `call`.
struct Parsed;

impl Tool for Parsed {
    fn definition(&self) -> &reticent::ToolDefinition {
        Shape.definition()
    }

    fn call(
        &self,
        arguments: Value,
        cx: ToolContext,
    ) -> Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + '_>> {
        Shape.call(arguments, cx)
    }
}

/// The generated `call_text` on `text` comes to what the provided one does: the same output,
/// or an error of the same kind shown to the model the same way.
pub fn call_tool_text(text: &str) {
    let generated = block_on(Shape.call_text(text, ToolContext::default()));
    let provided = block_on(Parsed.call_text(text, ToolContext::default()));
    match (&generated, &provided) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "outputs differ for {text:?}"),
        (Err(a), Err(b)) => {
            assert_eq!(a.kind(), b.kind(), "kinds differ for {text:?}");
            assert_eq!(
                a.model_text("shape", true),
                b.model_text("shape", true),
                "errors differ for {text:?}"
            );
            check_error_text(a);
        }
        _ => panic!("call_text disagrees for {text:?}: {generated:?} against {provided:?}"),
    }
}

fn check_error_text(error: &ToolError) {
    for include_message in [false, true] {
        let text = error.model_text("shape", include_message);
        assert!(
            text.len() < MAX_SHOWN + "shape".len(),
            "the model is shown {} bytes: {text:?}",
            text.len()
        );
    }
}

/// Runs an agent whose model answers `response` and then `done`, and checks the run.
pub fn run_agent(response: ModelResponse) {
    let calls: Vec<String> = response.tool_calls.iter().map(|c| c.id.clone()).collect();
    let names: Vec<String> = response.tool_calls.iter().map(|c| c.name.clone()).collect();
    let (model, agent) = AGENT.with(|(model, agent)| (model.clone(), agent.clone()));
    *model.0.lock().unwrap() = VecDeque::from([response, ModelResponse::text("done")]);
    let result = block_on(agent.run("go")).expect("a bad call never ends the run");
    check_run(&result, &calls, &names);
}

fn check_run(result: &AgentResult, calls: &[String], names: &[String]) {
    let results: Vec<_> = result
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some(r),
            _ => None,
        })
        .collect();
    let answered: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(answered, calls, "every call is answered, in call order");
    for (result, name) in results.iter().zip(names) {
        if result.is_error {
            let bound = MAX_SHOWN + name.len().min(MAX_NAME);
            assert!(
                result.content.len() < bound,
                "the model is shown {} bytes about a call of {:?}: {:?}",
                result.content.len(),
                &name[..name.floor_char_boundary(80)],
                &result.content[..result.content.floor_char_boundary(200)]
            );
        }
    }
    let failed = results.iter().filter(|r| r.is_error).count();
    assert_eq!(
        failed,
        result.tool_failures.len(),
        "every failure is recorded once"
    );
    if !calls.is_empty() {
        assert_eq!(result.output, "done");
    }
}

/// Checks what a stream yielded, as `Model::stream` promises it: events, then `Completed` or
/// a short error. Of a completed stream: its text is the text deltas; its calls are the ones
/// started, in order, with the arguments their deltas spell; and an agent answers them.
pub fn check_stream(items: Vec<Result<ModelEvent, ModelError>>) {
    let mut items = items.into_iter();
    let last = items.next_back().expect("a stream ends with Completed or an error");
    let mut text = String::new();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for item in items {
        match item.expect("only the last item may be an error") {
            ModelEvent::TextDelta(delta) => text.push_str(&delta),
            ModelEvent::ToolCallStarted { index, id, name } => {
                assert_eq!(index, calls.len(), "calls start in order");
                calls.push((id, name, String::new()));
            }
            ModelEvent::ToolCallDelta { index, arguments } => {
                calls[index].2.push_str(&arguments);
            }
            other => panic!("{other:?} before the end"),
        }
    }
    let response = match last {
        Ok(ModelEvent::Completed(response)) => response,
        Ok(other) => panic!("the stream ends with {other:?}"),
        Err(error) => {
            let length = error.message().len();
            assert!(length < MAX_SHOWN, "the error is {length} bytes long");
            return;
        }
    };
    assert_eq!(response.text.as_deref().unwrap_or_default(), text);
    let spelled: Vec<_> = calls.iter().map(|(id, name, _)| (id, name)).collect();
    let completed: Vec<_> = response.tool_calls.iter().map(|c| (&c.id, &c.name)).collect();
    assert_eq!(spelled, completed);
    for ((_, _, raw), call) in calls.iter().zip(&response.tool_calls) {
        match serde_json::from_str::<Value>(raw) {
            Ok(parsed) => assert_eq!(call.arguments, parsed),
            Err(_) if raw.trim().is_empty() => assert_eq!(call.arguments, Value::Object(Default::default())),
            Err(_) => assert_eq!(call.arguments, Value::String(raw.clone())),
        }
    }
    run_agent(response);
}
