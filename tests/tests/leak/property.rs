//! The leak property: a failed tool tells the model less than it tells the caller, over
//! thousands of generated failures.
//!
//! Each case makes failures of every kind a tool has — plain error types, the variants of a
//! `#[derive(Disclose)]` enum (argument, kind, hinted, fatal, with a source), `io::Error`,
//! boxed errors, hand-built `Failure`s and `ArgumentError`s, errors whose source holds the
//! secret, panics, timeouts, outputs that cannot be serialized, errors that derive `Serialize`
//! returned through an alias of `Result` or a renamed `Result`, outputs with a `Result` deeper
//! in them (a `Vec`, a struct field, an `Option` of an alias), and `anyhow`/`eyre` chains whose
//! context string holds the secret above an argument error, a `Disclose` error or a plain
//! message, or at every one of more levels than the walk of a chain reads, and a `Failure`
//! returned through `?` around an inner call's argument error that holds it — each with its
//! own canary in a generated message (short, unicode, long, or with the canary where a message
//! is cut), and runs them with the opt-in `include_error_message` on or off. Then:
//!
//! - nothing the model receives holds a canary it may not see: the text of each failure
//!   (`ToolError::model_text`, `ToolFailure::shown_to_model`), the transcript, every request
//!   the model received, the trajectory, the bodies the HTTP providers send and the bytes an
//!   MCP client reads. The model may see a canary only in the message of an argument error
//!   (written by the developer for the model, shown by design) or, with the opt-in, in an
//!   error's own message — never from a source, a panic or a stopped call;
//! - each failure's text is exactly what the rules say, cut to a bounded length, and shorter
//!   than 1 KiB plus the tool's name;
//! - the caller's record holds everything: `ToolFailure::error` and `error_chain`, the
//!   `ToolFailed` event, the `execute_tool` span's `error.message`, the MCP `on_failure` hook.
//!
//! One case drives many failures (a scripted model calling many failing tools per turn, over
//! several turns), so the default run makes well over 10,000. `RETICENT_LEAK_SCALE=10` runs ten
//! times as many cases.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use reticent::mcp::McpServer;
use reticent::mcp::rmcp::model::CallToolRequestParams;
use reticent::providers::anthropic::Anthropic;
use reticent::providers::openai::OpenAi;
use reticent::{
    Agent, AgentError, AgentEvent, AgentResult, Message, Model, ModelResponse, ScriptedModel, Tool,
    ToolCall, ToolContext, ToolDefinition, ToolFailure, ToolFailureMode, ToolFailureOptions,
    tool::ToolFuture,
};
use reticent_tests::leak::{
    Registered, Registry, SLOW_TOOL_LIMIT, Spec, canary, cases, check_surface, full_chain, spec,
    tool, tools,
};
use reticent_tests::provider::{Reply, TestServer, fixture};
use reticent_tests::spans::{Spans, capture_spans};
use serde_json::{Value, json};

type CaseResult = Result<(), TestCaseError>;

fn fail(message: impl Into<String>) -> TestCaseError {
    TestCaseError::fail(message.into())
}

/// Runs `test` on `cases` generated values; panics with the minimal failing value.
fn property<S: Strategy>(cases: u32, strategy: S, test: impl Fn(S::Value) -> CaseResult)
where
    S::Value: std::fmt::Debug,
{
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 500,
        ..Config::default()
    };
    match TestRunner::new(config).run(&strategy, test) {
        Ok(()) => {}
        Err(TestError::Fail(reason, minimal)) => {
            panic!("{reason}\n\nminimal failing case: {minimal:#?}")
        }
        Err(error) => panic!("{error}"),
    }
}

/// How a run shows failures: what every check of it needs to know.
#[derive(Clone, Copy, Debug)]
struct Settings {
    include_error_message: bool,
    /// The limit `fail_slow` is stopped at: the shorter of the run's timeout and its own.
    limit: Duration,
    collapse_repeats: bool,
}

impl Settings {
    fn new(include_error_message: bool, timeout: Option<Duration>, collapse: bool) -> Self {
        Self {
            include_error_message,
            limit: timeout.map_or(SLOW_TOOL_LIMIT, |t| t.min(SLOW_TOOL_LIMIT)),
            collapse_repeats: collapse,
        }
    }
}

/// What a property generated and saw, for its report and to show it covers what it claims.
#[derive(Default)]
struct Counts {
    cases: Cell<usize>,
    /// Failed tool calls a run (or an MCP server) recorded.
    failures: Cell<usize>,
    /// Tool errors whose `model_text` was checked directly.
    direct: Cell<usize>,
    /// Failures whose canary the model may see and saw (argument errors, the opt-in).
    canaries_shown: Cell<usize>,
    /// Failures whose canary the model may see, but that fell in the part of a long message
    /// that was cut.
    canaries_cut: Cell<usize>,
    /// Failures recorded, by tool and kind.
    faults: RefCell<BTreeMap<String, usize>>,
}

impl Counts {
    fn bump(cell: &Cell<usize>, n: usize) {
        cell.set(cell.get() + n);
    }

    /// Counts a failure the model was shown as `shown` (not collapsed as a repeat).
    fn saw(&self, failure: &Registered, shown: &str, include_error_message: bool) {
        let label = format!("{} {}", failure.tool(), failure.fault.kind());
        *self.faults.borrow_mut().entry(label).or_default() += 1;
        if failure.may_show(include_error_message) {
            if shown.contains(&failure.canary) {
                Self::bump(&self.canaries_shown, 1);
            } else {
                Self::bump(&self.canaries_cut, 1);
            }
        }
    }

    /// Reports the counts; checks a canary was shown, and with `every_fault` that every way to
    /// fail was recorded (the paths with fewer cases see the rarest ones only most of the
    /// time).
    fn report(&self, path: &str, start: Instant, every_fault: bool) {
        let faults = self.faults.borrow();
        println!(
            "{path}: {} cases, {} failed calls ({} rendered directly too), {:.1?}; canaries the \
             model was allowed to see: {} shown, {} cut from long messages; by tool and kind: \
             {faults:?}",
            self.cases.get(),
            self.failures.get(),
            self.direct.get(),
            start.elapsed(),
            self.canaries_shown.get(),
            self.canaries_cut.get(),
        );
        if std::env::var("RETICENT_LEAK_SCALE").is_err() {
            for fault in reticent_tests::leak::every_fault()
                .into_iter()
                .filter(|_| every_fault)
            {
                let label = format!("{} {}", fault.tool(), fault.kind());
                assert!(faults.contains_key(&label), "{path}: no {label} failure");
            }
            assert!(self.canaries_shown.get() > 0, "{path}: no canary was shown");
        }
    }
}

fn timeout() -> impl Strategy<Value = Option<Duration>> {
    prop_oneof![
        Just(None),
        Just(Some(Duration::from_millis(1))),
        Just(Some(Duration::from_millis(250))),
        Just(Some(Duration::from_millis(1500))),
        Just(Some(Duration::from_secs(30))),
    ]
}

/// A runtime on this thread with its clock paused: a stopped call costs no time, and the spans
/// of everything it runs are captured here.
fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

fn key_of(arguments: &Value) -> Result<u64, TestCaseError> {
    let parsed;
    let arguments = match arguments {
        // as the JSON text
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text).unwrap_or_default();
            &parsed
        }
        other => other,
    };
    arguments["key"]
        .as_u64()
        .ok_or_else(|| fail(format!("arguments without a key: {arguments}")))
}

// ---- the caller's record -------------------------------------------------------------------

/// Whether `failure` is a call the model made in its last turn, which offered no tools: not
/// run, and answered with fixed text.
fn not_run(failure: &ToolFailure) -> Result<bool, TestCaseError> {
    if failure.kind != "tools_disabled" {
        return Ok(false);
    }
    prop_assert_eq!(
        &failure.shown_to_model,
        &format!(
            "Tool '{}' was not run: tools are disabled for the rest of this conversation",
            failure.tool
        )
    );
    Ok(true)
}

/// The caller's record of one failure holds the whole error.
fn check_caller(
    what: &str,
    failure: &ToolFailure,
    registered: &Registered,
    settings: &Settings,
) -> CaseResult {
    prop_assert_eq!(&failure.tool, registered.tool(), "{}", what);
    prop_assert_eq!(&failure.kind, registered.fault.kind(), "{}", what);
    prop_assert_eq!(failure.timed_out, registered.fault.is_timeout(), "{}", what);
    let expected = registered.caller_text(settings.limit);
    let chain = full_chain(&*failure.error);
    prop_assert!(
        chain.contains(&expected),
        "{what}: the caller's error lost the message: {chain:?} does not hold {expected:?}"
    );
    let chain = failure.error_chain();
    prop_assert!(
        chain.contains(&expected),
        "{what}: error_chain lost the message: {chain:?} does not hold {expected:?}"
    );
    Ok(())
}

/// The `execute_tool` span of the call holds the whole error — except an argument error's,
/// whose message echoes what the model sent: without `record_content` it stays off the span.
fn check_span(
    spans: &HashMap<String, reticent_tests::spans::SpanRecord>,
    failure: &ToolFailure,
    registered: &Registered,
    settings: &Settings,
) -> CaseResult {
    let span = spans
        .get(&failure.call_id)
        .ok_or_else(|| fail(format!("no execute_tool span for call {}", failure.call_id)))?;
    prop_assert_eq!(span.field("otel.status_code"), Some("ERROR"));
    prop_assert_eq!(span.field("error.type"), Some(registered.fault.kind()));
    let message = span.field("error.message").unwrap_or_default();
    if registered.fault.kind() == "argument" {
        prop_assert!(
            !message.contains(&registered.canary) && message.contains("arguments were refused"),
            "the span of {} holds an argument error's message: {message:?}",
            failure.call_id
        );
        return Ok(());
    }
    let expected = registered.caller_text(settings.limit);
    prop_assert!(
        message.contains(&expected),
        "the span of {} lost the message: {message:?} does not hold {expected:?}",
        failure.call_id
    );
    Ok(())
}

fn tool_spans(spans: &Spans) -> HashMap<String, reticent_tests::spans::SpanRecord> {
    spans
        .named("execute_tool")
        .into_iter()
        .filter_map(|s| Some((s.field("gen_ai.tool.call.id")?.to_owned(), s)))
        .collect()
}

// ---- a run's record ------------------------------------------------------------------------

/// Checks what a run recorded: each failure's record, span, text and tool result.
fn check_run(
    record: &AgentResult,
    by_key: &HashMap<u64, Arc<Registered>>,
    settings: &Settings,
    spans: &HashMap<String, reticent_tests::spans::SpanRecord>,
    counts: &Counts,
) -> CaseResult {
    let results: HashMap<&str, _> = record
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(result) => Some((result.call_id.as_str(), result)),
            _ => None,
        })
        .collect();
    prop_assert_eq!(
        results.len(),
        record.tool_failures.len(),
        "every call fails, and each failure has one tool result"
    );
    let mut first_call: HashMap<u64, &str> = HashMap::new();
    for failure in &record.tool_failures {
        if not_run(failure)? {
            continue;
        }
        let key = key_of(&failure.arguments)?;
        let registered = &by_key[&key];
        check_caller("the run's record", failure, registered, settings)?;
        check_span(spans, failure, registered, settings)?;
        let shown = failure.shown_to_model.as_str();
        let tool = registered.tool();
        match first_call.get(&key) {
            Some(first) if settings.collapse_repeats => prop_assert_eq!(
                shown,
                format!(
                    "Tool '{tool}' failed again the same way as call '{first}' with the same arguments"
                )
            ),
            _ => {
                registered
                    .check_shown(shown, settings.include_error_message, settings.limit)
                    .map_err(|e| fail(format!("call {}: {e}", failure.call_id)))?;
                counts.saw(registered, shown, settings.include_error_message);
            }
        }
        prop_assert!(shown.len() < 1024 + tool.len(), "too long: {shown}");
        first_call.entry(key).or_insert(&failure.call_id);
        Counts::bump(&counts.failures, 1);

        let result = results
            .get(failure.call_id.as_str())
            .ok_or_else(|| fail(format!("no tool result for {}", failure.call_id)))?;
        prop_assert!(result.is_error);
        prop_assert_eq!(&result.content, &failure.shown_to_model);
    }
    Ok(())
}

/// Everything of a run that holds what the model saw.
fn check_record_surfaces(
    record: &AgentResult,
    failures: &[Arc<Registered>],
    include_error_message: bool,
) -> CaseResult {
    let surfaces = [
        (
            "the transcript",
            serde_json::to_string(&record.messages).unwrap(),
        ),
        ("the transcript", format!("{:?}", record.messages)),
        (
            "the trajectory",
            serde_json::to_string(&record.trajectory).unwrap(),
        ),
        ("the output", record.output.clone()),
    ];
    for (what, surface) in &surfaces {
        check_surface(what, surface, failures, include_error_message)?;
    }
    for failure in &record.tool_failures {
        check_surface(
            "shown_to_model",
            &failure.shown_to_model,
            failures,
            include_error_message,
        )?;
    }
    Ok(())
}

/// The record of a run that may have ended on a failure: only `ToolFailed` is expected, from a
/// fatal failure or under `Propagate`.
fn record_of<'a>(
    result: &'a Result<AgentResult, AgentError>,
    by_key: &HashMap<u64, Arc<Registered>>,
    propagate: bool,
    settings: &Settings,
) -> Result<&'a AgentResult, TestCaseError> {
    match result {
        Ok(record) => {
            for failure in &record.tool_failures {
                if not_run(failure)? {
                    continue;
                }
                let registered = &by_key[&key_of(&failure.arguments)?];
                prop_assert!(
                    !propagate && !registered.fault.is_fatal(),
                    "the run went on after {} failed ({:?})",
                    failure.call_id,
                    registered.fault
                );
            }
            Ok(record)
        }
        Err(AgentError::ToolFailed { failure, partial }) => {
            let registered = &by_key[&key_of(&failure.arguments)?];
            prop_assert!(propagate || registered.fault.is_fatal());
            check_caller("AgentError::ToolFailed", failure, registered, settings)?;
            prop_assert!(
                partial
                    .tool_failures
                    .iter()
                    .any(|f| f.call_id == failure.call_id)
            );
            Ok(partial)
        }
        Err(other) => Err(fail(format!("the run failed: {other:?}"))),
    }
}

// ---- the agent loop ------------------------------------------------------------------------

/// One call of a turn: a new failure, or (now and then) the exact call of an earlier one.
#[derive(Clone, Debug)]
struct PlannedCall {
    spec: Spec,
    repeat: Option<prop::sample::Index>,
}

#[derive(Clone, Debug)]
struct AgentCase {
    seed: u64,
    include_error_message: bool,
    propagate: bool,
    collapse_repeats: bool,
    timeout: Option<Duration>,
    max_parallel_tools: usize,
    max_consecutive_failures: u32,
    turns: Vec<Vec<PlannedCall>>,
}

fn agent_case() -> impl Strategy<Value = AgentCase> {
    let call = (
        spec(4),
        prop::option::weighted(0.08, any::<prop::sample::Index>()),
    )
        .prop_map(|(spec, repeat)| PlannedCall { spec, repeat });
    (
        any::<u64>(),
        any::<bool>(),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.85),
        timeout(),
        1usize..=8,
        prop_oneof![1 => 1u32..=4, 5 => Just(1000u32)],
        prop::collection::vec(prop::collection::vec(call, 1..=16), 1..=4),
    )
        .prop_map(
            |(
                seed,
                include_error_message,
                propagate,
                collapse_repeats,
                timeout,
                max_parallel_tools,
                max_consecutive_failures,
                turns,
            )| AgentCase {
                seed,
                include_error_message,
                propagate,
                collapse_repeats,
                timeout,
                max_parallel_tools,
                max_consecutive_failures,
                turns,
            },
        )
}

/// `ToolError::model_text` of the error the tool returns, called directly, with the opt-in on
/// and off. Panics and stopped calls are the loop's, not the tool's.
fn check_direct(
    runtime: &tokio::runtime::Runtime,
    registered: &Arc<Registered>,
    settings: &Settings,
) -> Result<usize, TestCaseError> {
    if matches!(
        registered.fault,
        reticent_tests::leak::Fault::Panic { .. } | reticent_tests::leak::Fault::Timeout
    ) {
        return Ok(0);
    }
    let tool = tool(registered.tool());
    let error = runtime
        .block_on(tool.call(json!({"key": registered.key}), ToolContext::default()))
        .err()
        .ok_or_else(|| fail(format!("{:?} succeeded", registered.fault)))?;
    // From the JSON text, the same error.
    let from_text = runtime
        .block_on(tool.call_text(
            &json!({"key": registered.key}).to_string(),
            ToolContext::default(),
        ))
        .err()
        .ok_or_else(|| fail(format!("{:?} succeeded from text", registered.fault)))?;
    for (path, error) in [("call", &error), ("call_text", &from_text)] {
        prop_assert_eq!(error.kind(), registered.fault.kind(), "{}", path);
        prop_assert_eq!(
            error.is_argument(),
            registered.fault.is_argument(),
            "{}",
            path
        );
        prop_assert_eq!(error.is_fatal(), registered.fault.is_fatal(), "{}", path);
        let chain = full_chain(error);
        let expected = registered.caller_text(settings.limit);
        prop_assert!(
            chain.contains(&expected),
            "{path}: {chain:?} lost {expected:?}"
        );
        for include in [false, true] {
            let text = error.model_text(registered.tool(), include);
            registered
                .check_shown(&text, include, settings.limit)
                .map_err(|e| fail(format!("{path}: model_text(.., {include}): {e}")))?;
            check_surface(
                "ToolError::model_text",
                &text,
                std::slice::from_ref(registered),
                include,
            )?;
        }
    }
    Ok(1)
}

/// A call's arguments: for odd keys the JSON text, which the loop hands to
/// `Tool::call_text`, so that both ways in are covered.
fn arguments(key: u64) -> serde_json::Value {
    let arguments = json!({ "key": key });
    if key % 2 == 1 {
        serde_json::Value::String(arguments.to_string())
    } else {
        arguments
    }
}

fn run_agent_case(case: AgentCase, counts: &Counts) -> CaseResult {
    let settings = Settings::new(
        case.include_error_message,
        case.timeout,
        case.collapse_repeats,
    );
    let runtime = paused_runtime();
    let mut registry = Registry::default();
    let mut registered: Vec<Arc<Registered>> = Vec::new();
    let mut script = Vec::new();
    let mut direct = 0;
    let mut call_number = 0;
    for turn in &case.turns {
        let mut calls = Vec::new();
        for planned in turn {
            let failure = match planned.repeat {
                Some(index) if !registered.is_empty() => {
                    Arc::clone(&registered[index.index(registered.len())])
                }
                _ => {
                    let failure =
                        registry.register(&planned.spec, canary(case.seed, registered.len()));
                    direct += check_direct(&runtime, &failure, &settings)?;
                    registered.push(Arc::clone(&failure));
                    failure
                }
            };
            call_number += 1;
            calls.push(ToolCall::new(
                format!("call_{call_number}"),
                failure.tool(),
                arguments(failure.key),
            ));
        }
        script.push(ModelResponse::tool_calls(calls));
    }
    script.push(ModelResponse::text("Some steps failed."));
    let by_key: HashMap<u64, Arc<Registered>> =
        registered.iter().map(|r| (r.key, Arc::clone(r))).collect();

    let model = ScriptedModel::new(script);
    let mut builder = Agent::builder(model.clone())
        .system("You are a careful operator.")
        .failure_mode(if case.propagate {
            ToolFailureMode::Propagate
        } else {
            ToolFailureMode::ReportToModel
        })
        .failure_options(
            ToolFailureOptions::default()
                .include_error_message(case.include_error_message)
                .timeout(case.timeout)
                .collapse_repeats(case.collapse_repeats),
        )
        .max_parallel_tools(case.max_parallel_tools)
        .max_consecutive_failures(case.max_consecutive_failures);
    for tool in tools() {
        builder = builder.tool_arc(tool);
    }
    let agent = builder.build().unwrap();

    let (spans, _capture) = capture_spans();
    let events: Vec<AgentEvent> = runtime.block_on(agent.run_stream("Do the work.").collect());
    let spans = tool_spans(&spans);

    let Some(AgentEvent::Finished(result)) = events.last() else {
        return Err(fail("the stream did not end with Finished"));
    };
    let record = record_of(result, &by_key, case.propagate, &settings)?;
    check_run(record, &by_key, &settings, &spans, counts)?;

    // The stream: a ToolFailed event, with the whole error, for each failure, in order; every
    // other event is about what the model said or was shown.
    let mut failed_events = Vec::new();
    for event in &events[..events.len() - 1] {
        match event {
            AgentEvent::ToolFailed(failure) => {
                if !not_run(failure)? {
                    let registered = &by_key[&key_of(&failure.arguments)?];
                    check_caller("the ToolFailed event", failure, registered, &settings)?;
                }
                failed_events.push((failure.call_id.as_str(), failure.shown_to_model.as_str()));
            }
            other => check_surface(
                "an event",
                &format!("{other:?}"),
                &registered,
                case.include_error_message,
            )?,
        }
    }
    let recorded: Vec<_> = record
        .tool_failures
        .iter()
        .map(|f| (f.call_id.as_str(), f.shown_to_model.as_str()))
        .collect();
    prop_assert_eq!(failed_events, recorded);

    // Every request the model received.
    let requests = model.requests();
    prop_assert_eq!(requests.len(), record.turns as usize);
    for (i, request) in requests.iter().enumerate() {
        let what = format!("request {}", i + 1);
        let json = serde_json::to_string(request).unwrap();
        check_surface(&what, &json, &registered, case.include_error_message)?;
        check_surface(
            &what,
            &format!("{request:?}"),
            &registered,
            case.include_error_message,
        )?;
    }
    check_record_surfaces(record, &registered, case.include_error_message)?;
    Counts::bump(&counts.cases, 1);
    Counts::bump(&counts.direct, direct);
    Ok(())
}

#[test]
fn agent_runs_never_show_the_model_a_withheld_message() {
    let start = Instant::now();
    let counts = Counts::default();
    property(cases(900), agent_case(), |case| {
        run_agent_case(case, &counts)
    });
    counts.report("agent loop", start, true);
    at_least(&counts, 10_000);
}

/// Without `RETICENT_LEAK_SCALE`, the property made at least `floor` failures.
fn at_least(counts: &Counts, floor: usize) {
    let failures = counts.failures.get();
    if std::env::var("RETICENT_LEAK_SCALE").is_err() {
        assert!(
            failures >= floor,
            "only {failures} failures were generated; this property makes at least {floor}"
        );
    }
}

// ---- MCP -----------------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct McpCase {
    seed: u64,
    include_error_message: bool,
    timeout: Option<Duration>,
    /// Every tool served without its output schema: its output is written straight to text
    /// (`Tool::call_text_output`), not made a `Value` first.
    text_only: bool,
    calls: Vec<Spec>,
}

fn mcp_case() -> impl Strategy<Value = McpCase> {
    (
        any::<u64>(),
        any::<bool>(),
        timeout(),
        any::<bool>(),
        prop::collection::vec(spec(4), 1..=16),
    )
        .prop_map(
            |(seed, include_error_message, timeout, text_only, calls)| McpCase {
                seed,
                include_error_message,
                timeout,
                text_only,
                calls,
            },
        )
}

/// A tool served without its output schema; everything else is the tool's own, its generated
/// `call_text_output` too.
struct TextOnly(Arc<dyn Tool>, ToolDefinition);

/// `tool`, served without its output schema.
fn text_only(tool: Arc<dyn Tool>) -> Arc<dyn Tool> {
    let mut definition = tool.definition().clone();
    definition.output_schema = None;
    Arc::new(TextOnly(tool, definition))
}

impl Tool for TextOnly {
    fn definition(&self) -> &ToolDefinition {
        &self.1
    }
    fn call(&self, args: Value, cx: ToolContext) -> ToolFuture<'_> {
        self.0.call(args, cx)
    }
    fn call_text(&self, text: &str, cx: ToolContext) -> ToolFuture<'_> {
        self.0.call_text(text, cx)
    }
    fn call_text_output(&self, args: Value, cx: ToolContext) -> ToolFuture<'_, String> {
        self.0.call_text_output(args, cx)
    }
    fn timeout(&self) -> Option<Duration> {
        self.0.timeout()
    }
    fn is_blocking(&self) -> bool {
        self.0.is_blocking()
    }
}

fn run_mcp_case(case: McpCase, counts: &Counts) -> CaseResult {
    let settings = Settings::new(case.include_error_message, case.timeout, false);
    let mut registry = Registry::default();
    let registered: Vec<Arc<Registered>> = case
        .calls
        .iter()
        .enumerate()
        .map(|(i, spec)| registry.register(spec, canary(case.seed, i)))
        .collect();

    let hook = reticent_tests::mcp::Failures::default();
    let mut builder = McpServer::builder()
        .include_error_message(case.include_error_message)
        .on_failure(hook.hook());
    for tool in tools() {
        builder = builder.tool_arc(if case.text_only {
            text_only(tool)
        } else {
            tool
        });
    }
    if let Some(timeout) = case.timeout {
        builder = builder.timeout(timeout);
    }
    let server = builder.build().unwrap();

    let runtime = paused_runtime();
    let (spans, _capture) = capture_spans();
    let (results, received) = runtime.block_on(async {
        let connection = reticent_tests::mcp::connect(server).await;
        let calls = registered.iter().map(|failure| {
            let mut arguments = serde_json::Map::new();
            arguments.insert("key".into(), json!(failure.key));
            connection
                .client
                .call_tool(CallToolRequestParams::new(failure.tool()).with_arguments(arguments))
        });
        let results = futures::future::join_all(calls).await;
        (results, connection.received())
    });
    let spans = tool_spans(&spans);

    check_surface(
        "the bytes the MCP client received",
        &received,
        &registered,
        case.include_error_message,
    )?;
    for (failure, result) in registered.iter().zip(&results) {
        let result = result
            .as_ref()
            .map_err(|e| fail(format!("tools/call of {} failed: {e}", failure.tool())))?;
        prop_assert_eq!(result.is_error, Some(true));
        let text = reticent_tests::mcp::text(result);
        failure
            .check_shown(text, case.include_error_message, settings.limit)
            .map_err(|e| fail(format!("MCP {}: {e}", failure.tool())))?;
        Counts::bump(&counts.failures, 1);
        counts.saw(failure, text, case.include_error_message);
    }

    // The operator's hook heard of every failure, with the whole error and the text sent.
    let heard = hook.all();
    prop_assert_eq!(heard.len(), registered.len());
    for (failure, result) in registered.iter().zip(&results) {
        let record = heard
            .iter()
            .find(|f| f.arguments["key"] == json!(failure.key))
            .ok_or_else(|| fail(format!("the hook missed {:?}", failure.fault)))?;
        check_caller("the on_failure hook", record, failure, &settings)?;
        check_span(&spans, record, failure, &settings)?;
        let sent = reticent_tests::mcp::text(result.as_ref().unwrap());
        prop_assert_eq!(&record.shown_to_model, sent);
    }
    Counts::bump(&counts.cases, 1);
    Ok(())
}

#[test]
fn mcp_responses_never_send_a_withheld_message() {
    let start = Instant::now();
    let counts = Counts::default();
    property(cases(150), mcp_case(), |case| run_mcp_case(case, &counts));
    counts.report("MCP", start, false);
    at_least(&counts, 1_000);
}

// ---- HTTP providers ------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Provider {
    OpenAi,
    Anthropic,
}

#[derive(Clone, Debug)]
struct ProviderCase {
    seed: u64,
    include_error_message: bool,
    propagate: bool,
    turns: Vec<Vec<Spec>>,
}

/// Real requests on loopback with the clock running: stopped calls are stopped at this. Long
/// enough that a tool that yields once is never stopped on a busy machine.
const PROVIDER_TIMEOUT: Duration = Duration::from_millis(200);

fn provider_case() -> impl Strategy<Value = ProviderCase> {
    (
        any::<u64>(),
        any::<bool>(),
        prop::bool::weighted(0.1),
        prop::collection::vec(prop::collection::vec(spec(2), 1..=6), 1..=2),
    )
        .prop_map(
            |(seed, include_error_message, propagate, turns)| ProviderCase {
                seed,
                include_error_message,
                propagate,
                turns,
            },
        )
}

/// A response calling these tools, in the provider's format.
fn tool_turn(provider: Provider, calls: &[(String, &str, u64)]) -> String {
    match provider {
        Provider::OpenAi => {
            let calls: Vec<Value> = calls
                .iter()
                .map(|(id, name, key)| {
                    json!({"id": id, "type": "function", "function": {
                        "name": name, "arguments": json!({"key": key}).to_string()}})
                })
                .collect();
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null, "tool_calls": calls}}]})
            .to_string()
        }
        Provider::Anthropic => {
            let content: Vec<Value> = calls
                .iter()
                .map(|(id, name, key)| {
                    json!({"type": "tool_use", "id": id, "name": name, "input": {"key": key}})
                })
                .collect();
            json!({"id": "msg_1", "type": "message", "role": "assistant",
                   "model": "claude-sonnet-4-5", "content": content, "stop_reason": "tool_use",
                   "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 5}})
            .to_string()
        }
    }
}

fn run_provider_case(provider: Provider, case: ProviderCase, counts: &Counts) -> CaseResult {
    let settings = Settings::new(case.include_error_message, Some(PROVIDER_TIMEOUT), true);
    let mut registry = Registry::default();
    let mut registered: Vec<Arc<Registered>> = Vec::new();
    let mut replies = Vec::new();
    for turn in &case.turns {
        let mut calls = Vec::new();
        for spec in turn {
            let failure = registry.register(spec, canary(case.seed, registered.len()));
            calls.push((
                format!("call_{}", registered.len() + 1),
                failure.tool(),
                failure.key,
            ));
            registered.push(failure);
        }
        replies.push(Reply::json(tool_turn(provider, &calls)));
    }
    replies.push(Reply::json(match provider {
        Provider::OpenAi => fixture("openai/response_text.json"),
        Provider::Anthropic => fixture("anthropic/response_text.json"),
    }));
    let by_key: HashMap<u64, Arc<Registered>> =
        registered.iter().map(|r| (r.key, Arc::clone(r))).collect();

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (spans, _capture) = capture_spans();
    let (result, received) = runtime.block_on(async {
        let server = TestServer::start(replies).await;
        let model: Arc<dyn Model> = match provider {
            Provider::OpenAi => Arc::new(
                OpenAi::new("sk-test", "gpt-4o-mini")
                    .base_url(format!("{}/v1", server.url))
                    .timeout(Duration::from_secs(10))
                    .max_retries(0),
            ),
            Provider::Anthropic => Arc::new(
                Anthropic::new("sk-ant-test", "claude-sonnet-4-5")
                    .base_url(&server.url)
                    .timeout(Duration::from_secs(10))
                    .max_retries(0),
            ),
        };
        let mut builder = Agent::builder(model)
            .system("You are a careful operator.")
            .failure_mode(if case.propagate {
                ToolFailureMode::Propagate
            } else {
                ToolFailureMode::ReportToModel
            })
            .failure_options(
                ToolFailureOptions::default()
                    .include_error_message(case.include_error_message)
                    .timeout(PROVIDER_TIMEOUT),
            )
            .max_consecutive_failures(1000);
        for tool in tools() {
            builder = builder.tool_arc(tool);
        }
        let result = builder.build().unwrap().run("Do the work.").await;
        (result, server.received())
    });

    let spans = tool_spans(&spans);

    let record = record_of(&result, &by_key, case.propagate, &settings)?;
    check_run(record, &by_key, &settings, &spans, counts)?;
    check_record_surfaces(record, &registered, case.include_error_message)?;
    prop_assert_eq!(received.len(), record.turns as usize);
    for (i, request) in received.iter().enumerate() {
        check_surface(
            &format!("the body of request {}", i + 1),
            &request.text(),
            &registered,
            case.include_error_message,
        )?;
    }
    // The failures did reach the model, as the text they were shown as.
    if result.is_ok() {
        let last = &received.last().unwrap().body;
        for failure in &record.tool_failures {
            let shown = serde_json::to_string(&failure.shown_to_model).unwrap();
            let shown = &shown[1..shown.len() - 1];
            prop_assert!(
                last.contains(shown),
                "the last request lacks {shown}: {last}"
            );
        }
    }
    Counts::bump(&counts.cases, 1);
    Ok(())
}

fn provider_property(provider: Provider) {
    let start = Instant::now();
    let counts = Counts::default();
    property(cases(120), provider_case(), |case| {
        run_provider_case(provider, case, &counts)
    });
    counts.report(&format!("{provider:?}"), start, false);
    at_least(&counts, 300);
}

#[test]
fn openai_request_bodies_never_carry_a_withheld_message() {
    provider_property(Provider::OpenAi);
}

#[test]
fn anthropic_request_bodies_never_carry_a_withheld_message() {
    provider_property(Provider::Anthropic);
}
