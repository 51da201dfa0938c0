//! Tools that return `anyhow::Result<T>` or `eyre::Result<T>` (features `anyhow`, `eyre`): the
//! model is shown the first argument error in the chain (its own message alone), else the kind
//! of the first `Failure` or `Disclose` error, else `Error` — never a context string. The caller
//! has the whole chain.

use anyhow::{Context as _, anyhow, bail};
use reticent::mcp::McpServer;
use reticent::mcp::rmcp::model::CallToolRequestParams;
use reticent::{
    Agent, ArgumentError, Disclose, Failure, ModelResponse, RetryHint, ScriptedModel, Tool,
    ToolContext, ToolError,
};
use reticent_tests::mcp::{Failures, connect, text};
use serde_json::json;

/// In the context strings: must never reach the model.
const CONTEXT: &str = "CTX-CANARY-31f0";
/// In the errors' own messages: reaches the model only with the opt-in.
const SECRET: &str = "ERR-CANARY-9a2c";

#[derive(Debug, thiserror::Error, Disclose)]
enum StoreError {
    #[error("no record {0}; ids look like R-1")]
    #[disclose(argument, permanent)]
    NotFound(String),
    #[error("store unavailable at {0}")]
    #[disclose(transient)]
    Unavailable(String),
    #[error("store corrupt at {0}")]
    #[disclose(fatal, kind = "Corrupt")]
    Corrupt(String),
}

/// A generic `Disclose` type: it cannot be registered, so a chain does not find it.
#[derive(Debug, thiserror::Error, Disclose)]
enum LookupError<E: std::error::Error + Send + Sync + 'static> {
    #[error("backend failed")]
    Backend(#[source] E),
}

/// An error whose source is a `Disclose` error.
#[derive(Debug, thiserror::Error)]
#[error("the store failed")]
struct Wrapper(#[source] StoreError);

fn io(message: &str) -> std::io::Error {
    std::io::Error::other(format!("{message} {SECRET}"))
}

/// What each case returns, by name.
fn failing(case: &str) -> anyhow::Result<String> {
    match case {
        "bail_argument" => bail!(ArgumentError::new("dates look like 2024-05-01")),
        "argument_with_context" => Err(ArgumentError::new("dates look like 2024-05-01"))
            .context(format!("booking for {CONTEXT}"))
            .context("outer context"),
        "argument_as_context" => Err(io("parse failed"))
            .context(ArgumentError::new("dates look like 2024-05-01"))
            .context(format!("booking for {CONTEXT}")),
        "argument_below_failure" => Err(ArgumentError::new("dates look like 2024-05-01"))
            .context(Failure::new("Upstream", io("upstream")))
            .context(CONTEXT),
        "tool_error_argument" => Err(ToolError::Argument(ArgumentError::new(
            "dates look like 2024-05-01",
        )))
        .context(CONTEXT),
        "failure" => Err(Failure::new("Upstream", io("upstream refused")))
            .context(format!("calling upstream with {CONTEXT}")),
        "failure_hinted_fatal" => Err(Failure::new("Upstream", io("upstream refused"))
            .with_hint(RetryHint::Transient)
            .fatal())
        .context(CONTEXT),
        "tool_error_failed" => Err(ToolError::Failed(Failure::new(
            "Upstream",
            io("upstream refused"),
        )))
        .context(CONTEXT),
        "disclose_kind" => Err(StoreError::Unavailable(SECRET.into())).context(CONTEXT),
        "disclose_fatal" => Err(StoreError::Corrupt(SECRET.into())).context(CONTEXT),
        "disclose_argument" => Err(StoreError::NotFound("R-9".into())).context(CONTEXT),
        "disclose_as_source" => {
            Err(Wrapper(StoreError::Unavailable(SECRET.into()))).context(CONTEXT)
        }
        "generic_disclose" => Err(LookupError::Backend(io("lookup"))).context(CONTEXT),
        "plain_message" => Err(anyhow!("connecting to {SECRET}")).context(CONTEXT),
        "plain_io" => Err(io("disk full")).context(CONTEXT),
        "ok" => Ok("fine".into()),
        other => unreachable!("{other}"),
    }
}

/// Fails as the case says.
#[reticent::tool]
fn report(
    /// Which case.
    case: String,
) -> anyhow::Result<String> {
    failing(&case)
}

/// Fails as the case says, with `eyre`.
#[reticent::tool]
async fn report_eyre(
    /// Which case.
    case: String,
) -> eyre::Result<String> {
    use eyre::WrapErr as _;
    match case.as_str() {
        "argument_with_context" => Err(ArgumentError::new("dates look like 2024-05-01"))
            .wrap_err(format!("booking for {CONTEXT}")),
        "failure" => Err(Failure::new("Upstream", io("upstream refused")))
            .wrap_err(format!("calling upstream with {CONTEXT}")),
        "disclose_kind" => Err(StoreError::Unavailable(SECRET.into())).wrap_err(CONTEXT),
        "plain_message" => Err(eyre::eyre!("connecting to {SECRET}")).wrap_err(CONTEXT),
        other => unreachable!("{other}"),
    }
}

const ARGUMENT: &str = "Invalid arguments for tool 'report': dates look like 2024-05-01";

/// Case, what the model is shown, the kind, fatal, what the opt-in shows after the line.
const TABLE: &[(&str, &str, &str, bool, Option<&str>)] = &[
    ("bail_argument", ARGUMENT, "argument", false, None),
    ("argument_with_context", ARGUMENT, "argument", false, None),
    ("argument_as_context", ARGUMENT, "argument", false, None),
    ("argument_below_failure", ARGUMENT, "argument", false, None),
    ("tool_error_argument", ARGUMENT, "argument", false, None),
    (
        "failure",
        "Tool 'report' failed with Upstream",
        "Upstream",
        false,
        Some("upstream refused ERR-CANARY-9a2c"),
    ),
    (
        "failure_hinted_fatal",
        "Tool 'report' failed with Upstream (transient: retrying later may succeed)",
        "Upstream",
        true,
        Some("upstream refused ERR-CANARY-9a2c"),
    ),
    (
        "tool_error_failed",
        "Tool 'report' failed with Upstream",
        "Upstream",
        false,
        Some("upstream refused ERR-CANARY-9a2c"),
    ),
    (
        "disclose_kind",
        "Tool 'report' failed with StoreError::Unavailable (transient: retrying later may succeed)",
        "StoreError::Unavailable",
        false,
        Some("store unavailable at ERR-CANARY-9a2c"),
    ),
    (
        "disclose_fatal",
        "Tool 'report' failed with Corrupt",
        "Corrupt",
        true,
        Some("store corrupt at ERR-CANARY-9a2c"),
    ),
    (
        "disclose_argument",
        "Invalid arguments for tool 'report': no record R-9; ids look like R-1 (permanent: retrying the same call will not help)",
        "argument",
        false,
        None,
    ),
    (
        "disclose_as_source",
        "Tool 'report' failed with StoreError::Unavailable (transient: retrying later may succeed)",
        "StoreError::Unavailable",
        false,
        Some("store unavailable at ERR-CANARY-9a2c"),
    ),
    (
        "generic_disclose",
        "Tool 'report' failed with Error",
        "Error",
        false,
        Some("lookup ERR-CANARY-9a2c"),
    ),
    (
        "plain_message",
        "Tool 'report' failed with Error",
        "Error",
        false,
        Some("connecting to ERR-CANARY-9a2c"),
    ),
    (
        "plain_io",
        "Tool 'report' failed with Error",
        "Error",
        false,
        Some("disk full ERR-CANARY-9a2c"),
    ),
];

async fn call(tool: &dyn Tool, case: &str) -> ToolError {
    tool.call(json!({ "case": case }), ToolContext::default())
        .await
        .expect_err(case)
}

#[tokio::test]
async fn the_classification_table() {
    for &(case, shown, kind, fatal, message) in TABLE {
        let error = call(&Report, case).await;
        assert_eq!(error.model_text("report", false), shown, "{case}");
        assert_eq!(error.kind(), kind, "{case}");
        assert_eq!(error.is_fatal(), fatal, "{case}");
        let with_message = error.model_text("report", true);
        match message {
            Some(message) => assert_eq!(with_message, format!("{shown}: {message}"), "{case}"),
            None => assert_eq!(with_message, shown, "{case}"),
        }
        assert!(!with_message.contains(CONTEXT), "{case}: {with_message}");
        // The caller has the whole chain, context strings and all.
        let chain = match &error {
            ToolError::Argument(argument) => {
                reticent_chain(argument.error().expect("the chain is the source"))
            }
            ToolError::Failed(failure) => reticent_chain(&**failure.error()),
        };
        if case != "bail_argument" {
            assert!(chain.contains(CONTEXT), "{case}: {chain}");
        }
    }
    let ok = Report
        .call(json!({"case": "ok"}), ToolContext::default())
        .await;
    assert_eq!(ok.unwrap(), json!("fine"));
}

#[tokio::test]
async fn eyre_reports_classify_as_anyhow_errors_do() {
    let cases = [
        ("argument_with_context", "argument"),
        ("failure", "Upstream"),
        ("disclose_kind", "StoreError::Unavailable"),
        ("plain_message", "Error"),
    ];
    for (case, kind) in cases {
        let error = call(&ReportEyre, case).await;
        assert_eq!(error.kind(), kind, "{case}");
        for include in [false, true] {
            let text = error.model_text("report_eyre", include);
            assert!(!text.contains(CONTEXT), "{case}: {text}");
            assert_eq!(
                text.contains(SECRET),
                include && kind != "argument",
                "{case}"
            );
        }
    }
    let error = call(&ReportEyre, "argument_with_context").await;
    assert_eq!(
        error.model_text("report_eyre", true),
        "Invalid arguments for tool 'report_eyre': dates look like 2024-05-01"
    );
}

fn reticent_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(error) = source {
        text.push_str(" | ");
        text.push_str(&error.to_string());
        source = error.source();
    }
    text
}

// ---- the loop and MCP ----------------------------------------------------------------------

fn cases() -> impl Iterator<Item = (&'static str, &'static str)> {
    TABLE.iter().filter(|row| !row.3).map(|row| (row.0, row.1))
}

#[tokio::test]
async fn a_context_string_never_reaches_the_model_in_a_run() {
    for include in [false, true] {
        let calls = cases()
            .enumerate()
            .map(|(i, (case, _))| reticent::ToolCall {
                id: format!("call_{i}"),
                name: "report".into(),
                arguments: json!({ "case": case }).into(),
            })
            .collect();
        let model = ScriptedModel::new(vec![
            ModelResponse::tool_calls(calls),
            ModelResponse::text("Done."),
        ]);
        let result = Agent::builder(model.clone())
            .tool(Report)
            .max_consecutive_failures(100)
            .failure_options(reticent::ToolFailureOptions::default().include_error_message(include))
            .build()
            .unwrap()
            .run("Book it.")
            .await
            .unwrap();
        assert_eq!(result.tool_failures.len(), cases().count());
        for (failure, (case, shown)) in result.tool_failures.iter().zip(cases()) {
            if !include {
                assert_eq!(failure.shown_to_model, shown, "{case}");
            }
            assert!(failure.error_chain().contains(CONTEXT) || case == "bail_argument");
        }
        let requests: Vec<String> = model.requests().iter().map(|r| format!("{r:?}")).collect();
        for request in &requests {
            assert!(!request.contains(CONTEXT), "{request}");
        }
        // the errors' own messages, shown by the opt-in only
        assert_eq!(requests.iter().any(|r| r.contains(SECRET)), include);
        let transcript = serde_json::to_string(&result.messages).unwrap();
        assert!(!transcript.contains(CONTEXT));
    }
}

#[tokio::test]
async fn a_context_string_never_reaches_an_mcp_client() {
    let failures = Failures::default();
    let server = McpServer::builder()
        .tool(Report)
        .on_failure(failures.hook())
        .build()
        .unwrap();
    let connection = connect(server).await;
    for (case, shown) in cases() {
        let mut arguments = serde_json::Map::new();
        arguments.insert("case".into(), json!(case));
        let result = connection
            .client
            .call_tool(CallToolRequestParams::new("report").with_arguments(arguments))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true), "{case}");
        assert_eq!(text(&result), shown, "{case}");
    }
    let received = connection.received();
    assert!(received.contains("failed with Upstream"));
    assert!(!received.contains(CONTEXT), "{received}");
    assert!(!received.contains(SECRET), "{received}");
    for failure in failures.all() {
        assert!(
            failure.error_chain().contains(CONTEXT) || failure.kind == "argument",
            "{failure:?}"
        );
    }
}
