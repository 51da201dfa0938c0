//! [`LeakCheck`]: your tools run by an agent on a scripted model, with a canary you planted,
//! and every channel the model could read searched for it; [`LeakReport`], what it found.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tracing::Instrument;

use super::spans::{Spans, capture_spans};
use crate::agent::{Agent, AgentBuilder, AgentResult};
use crate::error::ToolFailure;
use crate::model::{ModelResponse, ScriptedModel};
use crate::tool::{Tool, Toolbox};

/// The fewest bytes a canary may have: a shorter one could be found by chance.
const MIN_CANARY_LEN: usize = 6;

/// How much of a channel is shown on each side of a leak.
const SNIPPET: usize = 120;

/// The span fields that are the caller's: a failure's full message goes there by design.
const CALLER_SPAN_FIELDS: &[&str] = &["error.message"];

/// Changes made to the agent the check builds.
type Configure = Box<dyn FnOnce(AgentBuilder) -> AgentBuilder + Send>;

/// Runs your tools through an agent on a [`ScriptedModel`] that makes the calls you list, with
/// a canary you planted where the tools fail, and reports every channel the model could read
/// that holds it.
///
/// The channels searched are:
///
/// - `transcript`: the run's messages, as JSON and each tool result's text as it is;
/// - `shown_to_model`: the text each [`ToolFailure`] says the model was shown;
/// - `trajectory`: the recorded run, as JSON;
/// - `model request N`: each request the model was sent;
/// - `<provider> request N` and `<provider> stream request N`: the body each built-in
///   provider compiled in (features `openai`, `anthropic`, `gemini`) would send for it,
///   encoded by the provider's own code;
/// - `mcp client` (feature `mcp`): every byte an MCP client receives when it makes the same
///   calls on an [`McpServer`](crate::mcp::McpServer) serving the same tools;
/// - `span <name> <field>`: the fields of the spans the run records with default settings,
///   except `error.message`, which is the caller's.
///
/// The caller's channels must hold the canary: the error of a [`ToolFailure`] (its message and
/// sources) and the `error.message` of an `execute_tool` span. A canary that reaches no caller
/// was not planted where a tool fails, and the check fails: a check that saw no failure
/// proves nothing.
///
/// A canary must be at least 6 bytes of ASCII letters, digits and `-_.:@/`, characters that
/// JSON and `Debug` write as they are, so that a search of serialized text finds it. Plant it
/// only where the model must never see it: not in an argument error's message, which is shown
/// in full by design.
///
/// ```
/// use reticent::testing::LeakCheck;
/// use serde_json::json;
///
/// const CANARY: &str = "CANARY-7f3a-postgres://pay:s3cr3t@db";
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("gateway returned 503 via {0}")]
/// struct GatewayError(String);
///
/// /// Charge the customer's card.
/// #[reticent::tool]
/// async fn charge_card(amount_cents: u64) -> Result<String, GatewayError> {
///     let _ = amount_cents;
///     Err(GatewayError(CANARY.into()))
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let report = LeakCheck::new(CANARY)
///     .tool(ChargeCard)
///     .call("charge_card", json!({"amount_cents": 4200}))
///     .run()
///     .await;
/// report.assert_no_leak();
/// assert!(report.caller_channels().iter().any(|c| c.contains("tool_failures")));
/// # });
/// ```
#[must_use = "a leak check does nothing until it is run"]
pub struct LeakCheck {
    canary: String,
    tools: Vec<Arc<dyn Tool>>,
    calls: Vec<(String, Value)>,
    configure: Option<Configure>,
    time_limit: Duration,
}

impl fmt::Debug for LeakCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeakCheck")
            .field("canary", &self.canary)
            .field(
                "tools",
                &self
                    .tools
                    .iter()
                    .map(|t| t.definition().name.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("calls", &self.calls)
            .field("configured", &self.configure.is_some())
            .field("time_limit", &self.time_limit)
            .finish()
    }
}

impl LeakCheck {
    /// A check for `canary`, with no tools and no calls yet.
    ///
    /// # Panics
    ///
    /// When the canary is shorter than 6 bytes or holds a character other than ASCII letters,
    /// digits and `-_.:@/`.
    pub fn new(canary: impl Into<String>) -> Self {
        let canary = canary.into();
        check_canary(&canary);
        Self {
            canary,
            tools: Vec::new(),
            calls: Vec::new(),
            configure: None,
            time_limit: Duration::from_secs(60),
        }
    }

    /// Adds a tool.
    pub fn tool(self, tool: impl Tool) -> Self {
        self.tool_arc(Arc::new(tool))
    }

    /// Adds a shared tool.
    pub fn tool_arc(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds every tool of a toolbox.
    pub fn toolbox<T: Toolbox>(mut self, toolbox: Arc<T>) -> Self {
        self.tools.extend(toolbox.tools());
        self
    }

    /// The scripted model calls `tool` with `arguments`, one call a turn, in the order added;
    /// then it answers with text.
    pub fn call(mut self, tool: impl Into<String>, arguments: Value) -> Self {
        self.calls.push((tool.into(), arguments));
        self
    }

    /// Changes the agent the check builds (its failure options, failure mode, limits ...).
    /// By default it has the agent's defaults, and as many consecutive failures as calls.
    pub fn agent(
        mut self,
        configure: impl FnOnce(AgentBuilder) -> AgentBuilder + Send + 'static,
    ) -> Self {
        self.configure = Some(Box::new(configure));
        self
    }

    /// How long the run, and each other part of the check, may take (default 60 s). A part
    /// that does not finish makes the check fail.
    pub fn time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = limit;
        self
    }

    /// Runs the check. Nothing panics here for what the tools do: every finding is in the
    /// report; [`LeakReport::assert_no_leak`] turns it into a test failure.
    pub async fn run(self) -> LeakReport {
        let mut report = LeakReport::empty(self.canary.clone());
        let model = ScriptedModel::new(self.script());
        let mut builder = Agent::builder(model.clone())
            .tools(self.tools.iter().cloned())
            .max_consecutive_failures(u32::try_from(self.calls.len() + 1).unwrap_or(u32::MAX))
            .max_turns(u32::try_from(self.calls.len() + 2).unwrap_or(u32::MAX));
        if let Some(configure) = self.configure {
            builder = configure(builder);
        }
        let agent = match builder.build() {
            Ok(agent) => agent,
            Err(error) => {
                report
                    .unfinished
                    .push(format!("the agent could not be built: {error}"));
                return report;
            }
        };

        // Spans are recorded for the check's own span and its descendants, so the guard is not
        // held across an await.
        let (spans, root) = {
            let (spans, _guard) = capture_spans();
            (spans, tracing::info_span!("reticent_leak_check"))
        };
        let run =
            tokio::time::timeout(self.time_limit, agent.run("Run the tools.")).instrument(root);
        let result = match run.await {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => {
                let mut partial = error.partial().clone();
                if let crate::AgentError::ToolFailed { failure, .. } = &error {
                    partial.tool_failures.push(failure.clone());
                }
                partial
            }
            Err(_) => {
                report.unfinished.push(format!(
                    "the agent's run did not finish within {:?}",
                    self.time_limit
                ));
                return report;
            }
        };

        report.read_run(&result, &model);
        report.read_providers(&model);
        report.read_spans(&spans);
        #[cfg(feature = "mcp")]
        report
            .read_mcp(&self.tools, &self.calls, self.time_limit)
            .await;
        report.result = Some(result);
        report
    }

    fn script(&self) -> Vec<ModelResponse> {
        let mut script: Vec<ModelResponse> = self
            .calls
            .iter()
            .enumerate()
            .map(|(i, (tool, arguments))| {
                ModelResponse::tool_call(format!("call_{}", i + 1), tool, arguments.clone())
            })
            .collect();
        script.push(ModelResponse::text("Done."));
        script
    }
}

/// A channel the model could read that holds the canary, and the text around it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Leak {
    /// The channel: `transcript`, `trajectory`, `openai request 2`, `mcp client`, ...
    pub channel: String,
    /// Up to 120 bytes of the channel on each side of the canary.
    pub snippet: String,
}

impl fmt::Display for Leak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ..{}..", self.channel, self.snippet)
    }
}

/// What a [`LeakCheck`] found: the channels the model could read and the caller's, as text.
#[derive(Debug)]
pub struct LeakReport {
    canary: String,
    /// Each channel the model could read, and its text.
    model: Vec<(String, String)>,
    /// The caller's channels that hold the canary.
    caller: Vec<String>,
    /// The parts of the check that could not finish.
    unfinished: Vec<String>,
    result: Option<AgentResult>,
}

impl LeakReport {
    /// Searches a run you made yourself on a [`ScriptedModel`] (`model`, or a clone of the
    /// one the agent ran on) for `canary`: the transcript, the failures' texts, the trajectory,
    /// each request and each compiled-in provider's body for it, and the caller's record.
    /// Spans and MCP are [`LeakCheck`]'s.
    ///
    /// # Panics
    ///
    /// When the canary is not one [`LeakCheck::new`] takes.
    pub fn of_run(canary: impl Into<String>, result: &AgentResult, model: &ScriptedModel) -> Self {
        let canary = canary.into();
        check_canary(&canary);
        let mut report = Self::empty(canary);
        report.read_run(result, model);
        report.read_providers(model);
        report
    }

    fn empty(canary: String) -> Self {
        Self {
            canary,
            model: Vec::new(),
            caller: Vec::new(),
            unfinished: Vec::new(),
            result: None,
        }
    }

    /// The channels the model could read that hold the canary.
    pub fn leaks(&self) -> Vec<Leak> {
        self.model
            .iter()
            .filter_map(|(channel, text)| {
                let at = text.find(&self.canary)?;
                let from = text.floor_char_boundary(at.saturating_sub(SNIPPET));
                let to =
                    text.ceil_char_boundary((at + self.canary.len() + SNIPPET).min(text.len()));
                Some(Leak {
                    channel: channel.clone(),
                    snippet: text[from..to].to_owned(),
                })
            })
            .collect()
    }

    /// The names of the channels the model could read that were searched.
    pub fn model_channels(&self) -> Vec<&str> {
        self.model.iter().map(|(name, _)| name.as_str()).collect()
    }

    /// The caller's channels that hold the canary (`tool_failures[0] (charge_card)`,
    /// `span execute_tool call_1 error.message`).
    pub fn caller_channels(&self) -> &[String] {
        &self.caller
    }

    /// The run, when it finished: its transcript, failures and trajectory.
    pub fn result(&self) -> Option<&AgentResult> {
        self.result.as_ref()
    }

    /// `Ok` when no channel the model could read holds the canary, the caller got it, and
    /// every part of the check finished.
    pub fn check(&self) -> Result<(), LeakFound> {
        let leaks = self.leaks();
        let missing = self.caller.is_empty() && self.unfinished.is_empty();
        if leaks.is_empty() && !missing && self.unfinished.is_empty() {
            return Ok(());
        }
        Err(LeakFound {
            canary: self.canary.clone(),
            leaks,
            caller_missed: missing,
            unfinished: self.unfinished.clone(),
        })
    }

    /// Panics with what [`check`](Self::check) found, unless it is `Ok`.
    #[track_caller]
    pub fn assert_no_leak(&self) {
        if let Err(found) = self.check() {
            panic!("{found}");
        }
    }

    fn model_channel(&mut self, name: impl Into<String>, text: impl Into<String>) {
        self.model.push((name.into(), text.into()));
    }

    fn read_run(&mut self, result: &AgentResult, model: &ScriptedModel) {
        self.model_channel("transcript", to_json(&result.messages));
        for message in &result.messages {
            if let crate::Message::Tool(tool_result) = message {
                self.model_channel(
                    format!("transcript: result of {}", tool_result.call_id),
                    tool_result.content.clone(),
                );
            }
        }
        self.model_channel("trajectory", to_json(&result.trajectory));
        // An output past its budget: the model was shown its head and tail only.
        for whole in &result.whole_outputs {
            if whole.output.contains(&self.canary) {
                self.caller
                    .push(format!("whole_outputs ({})", whole.call_id));
            }
        }
        for (i, request) in model.requests().iter().enumerate() {
            self.model_channel(format!("model request {}", i + 1), format!("{request:?}"));
        }
        for (i, failure) in result.tool_failures.iter().enumerate() {
            self.model_channel(
                format!("tool_failures[{i}].shown_to_model ({})", failure.tool),
                failure.shown_to_model.clone(),
            );
            if caller_holds(failure, &self.canary) {
                self.caller
                    .push(format!("tool_failures[{i}] ({})", failure.tool));
            }
        }
    }

    fn read_spans(&mut self, spans: &Spans) {
        for span in spans.all() {
            // `span execute_tool call_1 error.message`; a span of no call, `span chat FIELD`.
            let span_name = match span.field("gen_ai.tool.call.id") {
                Some(call) => format!("span {} {call}", span.name),
                None => format!("span {}", span.name),
            };
            for (field, value) in &span.fields {
                let name = format!("{span_name} {field}");
                if CALLER_SPAN_FIELDS.contains(&field.as_str()) {
                    if value.contains(&self.canary) {
                        self.caller.push(name);
                    }
                } else {
                    self.model_channel(name, value.clone());
                }
            }
        }
    }

    #[cfg(not(any(feature = "openai", feature = "anthropic", feature = "gemini")))]
    fn read_providers(&mut self, _: &ScriptedModel) {}

    #[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
    fn read_providers(&mut self, model: &ScriptedModel) {
        for (i, request) in model.requests().iter().enumerate() {
            for (provider, body) in super::providers::bodies(request) {
                match body {
                    Ok(body) => self.model_channel(
                        format!("{provider} request {}", i + 1),
                        String::from_utf8_lossy(&body).into_owned(),
                    ),
                    Err(error) => self.unfinished.push(format!(
                        "{provider} could not encode request {}: {error}",
                        i + 1
                    )),
                }
            }
        }
    }

    #[cfg(feature = "mcp")]
    async fn read_mcp(
        &mut self,
        tools: &[Arc<dyn Tool>],
        calls: &[(String, Value)],
        limit: Duration,
    ) {
        match tokio::time::timeout(limit, super::mcp::received(tools, calls)).await {
            Ok(Ok(bytes)) => self.model_channel("mcp client", bytes),
            Ok(Err(error)) => self
                .unfinished
                .push(format!("the MCP check could not run: {error}")),
            Err(_) => self
                .unfinished
                .push(format!("the MCP calls did not finish within {limit:?}")),
        }
    }
}

/// Panics unless `canary` is at least 6 bytes of ASCII letters, digits and `-_.:@/`.
#[track_caller]
fn check_canary(canary: &str) {
    assert!(
        canary.len() >= MIN_CANARY_LEN
            && canary
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:@/".contains(&b)),
        "a canary is at least {MIN_CANARY_LEN} bytes of ASCII letters, digits and `-_.:@/`, \
         which every channel writes as they are: {canary:?}"
    );
}

/// Whether the caller's record of `failure` holds `canary`: its error's message or a source's
/// (the chain's walk is bounded).
fn caller_holds(failure: &ToolFailure, canary: &str) -> bool {
    failure.error_chain().contains(canary)
}

/// A channel's value as JSON.
fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|error| format!("(could not be written as JSON: {error})"))
}

/// What a failed [`LeakReport::check`] found; its `Display` says each finding.
#[derive(Debug)]
#[non_exhaustive]
pub struct LeakFound {
    /// The canary.
    pub canary: String,
    /// The channels the model could read that hold it.
    pub leaks: Vec<Leak>,
    /// Whether the caller's channels all lack it.
    pub caller_missed: bool,
    /// The parts of the check that could not finish.
    pub unfinished: Vec<String>,
}

impl fmt::Display for LeakFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the leak check of `{}` failed", self.canary)?;
        for leak in &self.leaks {
            write!(f, "\n- the model could read it in {leak}")?;
        }
        if self.caller_missed {
            write!(
                f,
                "\n- no caller channel holds it: plant it where a tool fails (an error's message or \
                 source, a panic's message, a context string)"
            )?;
        }
        for part in &self.unfinished {
            write!(f, "\n- {part}")?;
        }
        Ok(())
    }
}

impl StdError for LeakFound {}
