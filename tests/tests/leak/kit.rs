//! `reticent::testing`, the kit users run in their own CI: `model_sees!` says what the real
//! `#[tool]` wrapper shows, and `LeakCheck` passes for tools that keep the promise and fails,
//! naming the channel, for tools that break it.

use std::sync::Arc;

use anyhow::Context as _;
use reticent::testing::{LeakCheck, LeakReport, assert_model_sees, model_sees};
use reticent::tool::ToolFuture;
use reticent::{
    ArgumentError, Failure, Tool, ToolContext, ToolDefinition, ToolError, ToolFailureOptions,
};
use reticent_tests::leak::StoreError;
use serde_json::{Value, json};

const CANARY: &str = "CANARY-kit-9e41-postgres://svc:pa55@db.internal/prod";

#[derive(Debug, thiserror::Error)]
#[error("gateway returned 503 via {0}")]
struct GatewayError(String);

#[derive(Debug, thiserror::Error)]
#[error("could not load the report")]
struct ReportError(#[source] std::io::Error);

/// Fails with the store error its argument names.
#[reticent::tool]
fn store(
    /// `missing`, `unavailable` or `throttled`.
    how: String,
) -> Result<String, StoreError> {
    Err(match how.as_str() {
        "missing" => StoreError::NotFound("R-9".into()),
        "unavailable" => StoreError::Unavailable(CANARY.into()),
        _ => StoreError::Throttled(CANARY.into()),
    })
}

/// Fails with a gateway error.
#[reticent::tool]
async fn charge() -> Result<String, GatewayError> {
    Err(GatewayError(CANARY.into()))
}

/// Fails with an error whose source holds the canary.
#[reticent::tool]
fn report() -> Result<String, ReportError> {
    Err(ReportError(std::io::Error::other(CANARY)))
}

/// Fails with an io::Error.
#[reticent::tool]
fn read_file() -> std::io::Result<String> {
    Err(std::io::Error::other(CANARY))
}

/// Fails with a `Failure` of a kind it names.
#[reticent::tool]
fn named() -> Result<String, Failure> {
    Err(Failure::new("Upstream", GatewayError(CANARY.into())))
}

/// Fails with an anyhow chain: the canary in a context string and in the root cause.
#[reticent::tool]
fn chained() -> anyhow::Result<String> {
    Err(std::io::Error::other(CANARY)).context(format!("while reading {CANARY}"))
}

/// Panics with the canary in its message.
#[reticent::tool]
fn explode() -> String {
    panic!("{CANARY}")
}

// ---- model_sees! agrees with the wrapper -----------------------------------------------------

/// What the real wrapper shows for a call of `tool` with `args`.
async fn wrapper_shows(tool: &dyn Tool, args: Value, include: bool) -> String {
    let error = tool
        .call(args, ToolContext::default())
        .await
        .expect_err("the tool fails");
    error.model_text(&tool.definition().name, include)
}

#[tokio::test]
async fn model_sees_is_what_the_wrapper_shows() {
    for include in [false, true] {
        let cases: Vec<(String, String)> = vec![
            (
                model_sees!(
                    &Store,
                    StoreError::NotFound("R-9".into()),
                    include_error_message = include
                ),
                wrapper_shows(&Store, json!({"how": "missing"}), include).await,
            ),
            (
                model_sees!(
                    &Store,
                    StoreError::Unavailable(CANARY.into()),
                    include_error_message = include
                ),
                wrapper_shows(&Store, json!({"how": "unavailable"}), include).await,
            ),
            (
                model_sees!(
                    &Store,
                    StoreError::Throttled(CANARY.into()),
                    include_error_message = include
                ),
                wrapper_shows(&Store, json!({"how": "throttled"}), include).await,
            ),
            (
                model_sees!(
                    &Charge,
                    GatewayError(CANARY.into()),
                    include_error_message = include
                ),
                wrapper_shows(&Charge, json!({}), include).await,
            ),
            (
                model_sees!(
                    &Report,
                    ReportError(std::io::Error::other(CANARY)),
                    include_error_message = include
                ),
                wrapper_shows(&Report, json!({}), include).await,
            ),
            (
                model_sees!(
                    &ReadFile,
                    std::io::Error::other(CANARY),
                    include_error_message = include
                ),
                wrapper_shows(&ReadFile, json!({}), include).await,
            ),
            (
                model_sees!(
                    &Named,
                    Failure::new("Upstream", GatewayError(CANARY.into())),
                    include_error_message = include
                ),
                wrapper_shows(&Named, json!({}), include).await,
            ),
            (
                model_sees!(
                    &Chained,
                    Err::<(), _>(std::io::Error::other(CANARY))
                        .context(format!("while reading {CANARY}"))
                        .unwrap_err(),
                    include_error_message = include
                ),
                wrapper_shows(&Chained, json!({}), include).await,
            ),
        ];
        for (kit, wrapper) in cases {
            assert_eq!(kit, wrapper, "include_error_message: {include}");
        }
    }
    // and what each says, without the opt-in
    assert_model_sees!(
        &Store,
        StoreError::Unavailable(CANARY.into()),
        "Tool 'store' failed with StoreError::Unavailable"
    );
    assert_model_sees!(
        &Store,
        StoreError::Throttled(CANARY.into()),
        "Tool 'store' failed with RateLimited"
    );
    assert_model_sees!(
        &Charge,
        GatewayError(CANARY.into()),
        "Tool 'charge' failed with GatewayError"
    );
    assert_model_sees!(
        &Chained,
        anyhow::Error::new(std::io::Error::other(CANARY)).context(CANARY),
        "Tool 'chained' failed with Error"
    );
}

#[test]
#[should_panic(expected = "shown: Tool 'charge' failed with GatewayError")]
fn assert_model_sees_fails_on_a_different_text() {
    assert_model_sees!(
        &Charge,
        GatewayError(CANARY.into()),
        "Tool 'charge' failed with Timeout"
    );
}

// ---- LeakCheck passes where the promise is kept ----------------------------------------------

fn every_tool(check: LeakCheck) -> LeakCheck {
    check
        .tool(Store)
        .tool(Charge)
        .tool(Report)
        .tool(ReadFile)
        .tool(Named)
        .tool(Chained)
        .tool(Explode)
}

#[tokio::test]
async fn a_kept_promise_passes_on_every_channel() {
    let report = every_tool(LeakCheck::new(CANARY))
        .call("store", json!({"how": "missing"}))
        .call("store", json!({"how": "unavailable"}))
        .call("store", json!({"how": "throttled"}))
        .call("charge", json!({}))
        .call("report", json!({}))
        .call("read_file", json!({}))
        .call("named", json!({}))
        .call("chained", json!({}))
        .call("explode", json!({}))
        .run()
        .await;
    report.assert_no_leak();

    let channels = report.model_channels();
    for expected in [
        "transcript",
        "trajectory",
        "model request 1",
        "openai request 10",
        "openai stream request 10",
        "openai-responses request 10",
        "anthropic request 10",
        "gemini stream request 10",
        "mcp client",
    ] {
        assert!(
            channels.contains(&expected),
            "no channel {expected}: {channels:?}"
        );
    }
    assert!(
        channels
            .iter()
            .any(|c| c.starts_with("span execute_tool call_9 ")),
        "{channels:?}"
    );
    // the caller got it, from every call that held it, on the record and on the span
    let caller = report.caller_channels();
    assert_eq!(
        caller
            .iter()
            .filter(|c| c.starts_with("tool_failures["))
            .count(),
        8,
        "{caller:?}"
    );
    assert!(
        caller.contains(&"span execute_tool call_2 error.message".to_owned()),
        "{caller:?}"
    );
    assert!(
        caller.contains(&"span execute_tool call_9 error.message".to_owned()),
        "{caller:?}"
    );
    // the MCP client was answered: the failures reached it as their kinds
    let result = report.result().expect("the run finished");
    assert_eq!(result.tool_failures.len(), 9);
}

// ---- LeakCheck fails where it is broken --------------------------------------------------------

/// Formats its error's message into its output: the mistake the kit exists to catch.
#[reticent::tool]
fn leaky_output() -> String {
    match std::fs::read_to_string(format!("/nonexistent/{CANARY}")) {
        Ok(text) => text,
        Err(error) => format!("could not read the file: {error} ({CANARY})"),
    }
}

/// A tool that fails and puts the secret in an argument error, which the model sees in full.
#[derive(Debug)]
struct LeakyArgument(ToolDefinition);

impl Tool for LeakyArgument {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }

    fn call(&self, _: Value, _: ToolContext) -> ToolFuture<'_> {
        ToolFuture::ready(Err(ToolError::Argument(ArgumentError::new(format!(
            "connection to {CANARY} failed"
        )))))
    }
}

fn leaky_argument() -> LeakyArgument {
    LeakyArgument(ToolDefinition::new(
        "leaky_argument",
        "Fails with the secret as an argument error.",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    ))
}

fn leaked_in(report: &LeakReport) -> Vec<String> {
    let found = report.check().expect_err("the check fails");
    assert!(!found.leaks.is_empty(), "{found}");
    found.leaks.iter().map(|l| l.channel.clone()).collect()
}

#[tokio::test]
async fn a_tool_that_puts_its_error_in_its_output_fails_the_check() {
    let report = LeakCheck::new(CANARY)
        .tool(LeakyOutput)
        .call("leaky_output", json!({}))
        .run()
        .await;
    let channels = leaked_in(&report);
    for expected in [
        "transcript",
        "trajectory",
        "openai request 2",
        "anthropic request 2",
        "mcp client",
    ] {
        assert!(
            channels.iter().any(|c| c == expected),
            "{expected} not among {channels:?}"
        );
    }
    // the snippet shows the text around the canary, and the panic says which channel
    let found = report.check().unwrap_err();
    let transcript = found
        .leaks
        .iter()
        .find(|l| l.channel == "transcript")
        .unwrap();
    assert!(
        transcript.snippet.contains("could not read the file"),
        "{}",
        transcript.snippet
    );
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| report.assert_no_leak()))
        .expect_err("assert_no_leak panics");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("the model could read it in transcript: .."),
        "{message}"
    );
    assert!(message.contains("no caller channel holds it"), "{message}");
}

#[tokio::test]
async fn a_hand_written_tool_that_shows_the_secret_fails_the_check() {
    let report = LeakCheck::new(CANARY)
        .tool_arc(Arc::new(leaky_argument()))
        .call("leaky_argument", json!({}))
        .run()
        .await;
    let channels = leaked_in(&report);
    assert!(
        channels.iter().any(|c| c == "transcript: result of call_1"),
        "{channels:?}"
    );
    assert!(
        channels
            .iter()
            .any(|c| c.starts_with("tool_failures[0].shown_to_model")),
        "{channels:?}"
    );
    assert!(
        channels.iter().any(|c| c == "gemini request 2"),
        "{channels:?}"
    );
    assert!(channels.iter().any(|c| c == "mcp client"), "{channels:?}");
    // the caller has it too
    assert_eq!(
        report.caller_channels(),
        ["tool_failures[0] (leaky_argument)"]
    );
}

#[tokio::test]
async fn an_agent_that_opts_in_to_messages_fails_the_check() {
    let report = LeakCheck::new(CANARY)
        .tool(Charge)
        .call("charge", json!({}))
        .agent(|agent| {
            let mut options = ToolFailureOptions::default();
            options.include_error_message = true;
            agent.failure_options(options)
        })
        .run()
        .await;
    let channels = leaked_in(&report);
    assert!(
        channels.iter().any(|c| c == "openai request 2"),
        "{channels:?}"
    );
    // the MCP server was served with its defaults: its bytes hold no canary
    assert!(!channels.iter().any(|c| c == "mcp client"), "{channels:?}");
}

#[tokio::test]
async fn a_canary_no_failure_holds_fails_the_check() {
    let report = LeakCheck::new("CANARY-planted-nowhere")
        .tool(Charge)
        .call("charge", json!({}))
        .run()
        .await;
    let found = report
        .check()
        .expect_err("a check that saw no canary proves nothing");
    assert!(found.leaks.is_empty() && found.caller_missed, "{found}");
}

#[test]
#[should_panic(expected = "a canary is at least 6 bytes")]
fn a_canary_json_would_escape_is_refused() {
    let _ = LeakCheck::new("secret \"quoted\"");
}
