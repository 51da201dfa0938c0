//! Tools that return `anyhow::Result<T>` or `eyre::Result<T>` (features `anyhow`, `eyre`): the
//! model is shown what the first error of the chain that is classified says — an argument error
//! (its own message alone), or the kind of a `Failure` or `Disclose` error, never what is inside
//! it — else `Error`, never a context string. The caller has the whole chain.

use anyhow::{Context as _, anyhow, bail};
use reticent::mcp::McpServer;
use reticent::mcp::rmcp::model::CallToolRequestParams;
use reticent::{
    Agent, ArgumentError, Disclose, Failure, ModelResponse, ScriptedModel, Tool, ToolContext,
    ToolError, failures::RetryHint,
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
    #[error("the lookup failed")]
    Lookup(#[source] ArgumentError),
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

/// What an inner call's argument error says when the server sent it its own data.
fn inner_argument() -> ArgumentError {
    ArgumentError::new(format!(
        "argument `id`: invalid type: string \"postgres://admin:{SECRET}@db\""
    ))
}

/// `error` under more contexts than a chain's walk reads, each holding `CONTEXT`.
fn too_deep(error: anyhow::Error) -> anyhow::Error {
    (0..40).fold(error, |error, level| {
        error.context(format!("{CONTEXT} at level {level}"))
    })
}

/// Returns `error` through `?`, as a tool body would.
fn question_mark<E>(error: E) -> anyhow::Result<String>
where
    anyhow::Error: From<E>,
{
    Err(error)?
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
        "argument_with_source_failure" => Err(ArgumentError::new("dates look like 2024-05-01")
            .with_source(Failure::new("Upstream", io("upstream"))))
        .context(CONTEXT),
        "argument_as_context_over_failure" => Err(Failure::new("Upstream", io("upstream")))
            .context(ArgumentError::new("dates look like 2024-05-01"))
            .context(CONTEXT),
        "argument_as_context_over_disclose" => Err(StoreError::Unavailable(SECRET.into()))
            .context(ArgumentError::new("dates look like 2024-05-01"))
            .context(CONTEXT),
        "failure_over_argument" => question_mark(Failure::new("InternalLookup", inner_argument())),
        "failure_over_tool_error_argument" => Err(Failure::new(
            "InternalLookup",
            ToolError::Argument(inner_argument()),
        ))
        .context(CONTEXT),
        "tool_error_failed_over_argument" => Err(ToolError::Failed(Failure::new(
            "InternalLookup",
            inner_argument(),
        )))
        .context(CONTEXT),
        "disclose_over_argument" => Err(StoreError::Lookup(inner_argument())).context(CONTEXT),
        "failure_as_context_over_argument" => Err(inner_argument())
            .context(Failure::new("Upstream", io("upstream")))
            .context(CONTEXT),
        "disclose_as_context_over_argument" => Err(inner_argument())
            .context(StoreError::Unavailable(SECRET.into()))
            .context(CONTEXT),
        "too_deep" => Err(too_deep(anyhow!("connecting to {SECRET}"))),
        "too_deep_over_failure" => Err(too_deep(
            Failure::new("Upstream", io("upstream refused")).into(),
        )),
        "none_with_context" => None
            .with_context(|| format!("no row for {SECRET}"))
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
        "failure_over_argument" => {
            Err(Failure::new("InternalLookup", inner_argument())).wrap_err(CONTEXT)
        }
        "failure_as_context_over_argument" => Err(inner_argument())
            .wrap_err(Failure::new("Upstream", io("upstream")))
            .wrap_err(CONTEXT),
        "too_deep" => Err(
            (0..40).fold(eyre::eyre!("connecting to {SECRET}"), |error, level| {
                error.wrap_err(format!("{CONTEXT} at level {level}"))
            }),
        ),
        "disclose_kind" => Err(StoreError::Unavailable(SECRET.into())).wrap_err(CONTEXT),
        "plain_message" => Err(eyre::eyre!("connecting to {SECRET}")).wrap_err(CONTEXT),
        other => unreachable!("{other}"),
    }
}

/// The cases returned without a context string.
const WITHOUT_CONTEXT: [&str; 2] = ["bail_argument", "failure_over_argument"];

const ARGUMENT: &str = "Invalid arguments for tool 'report': dates look like 2024-05-01";
const INNER_ARGUMENT: &str =
    "argument `id`: invalid type: string \"postgres://admin:ERR-CANARY-9a2c@db\"";

/// Case, what the model is shown, the kind, fatal, what the opt-in shows after the line.
const TABLE: &[(&str, &str, &str, bool, Option<&str>)] = &[
    ("bail_argument", ARGUMENT, "argument", false, None),
    ("argument_with_context", ARGUMENT, "argument", false, None),
    ("argument_as_context", ARGUMENT, "argument", false, None),
    // an argument error outside a kind is the model's
    (
        "argument_with_source_failure",
        ARGUMENT,
        "argument",
        false,
        None,
    ),
    (
        "argument_as_context_over_failure",
        ARGUMENT,
        "argument",
        false,
        None,
    ),
    (
        "argument_as_context_over_disclose",
        ARGUMENT,
        "argument",
        false,
        None,
    ),
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
    // a kind stops the search: the argument error inside it is not the model's; the opt-in
    // shows what it shows for the same error returned on its own
    (
        "failure_over_argument",
        "Tool 'report' failed with InternalLookup",
        "InternalLookup",
        false,
        Some(INNER_ARGUMENT),
    ),
    (
        "failure_over_tool_error_argument",
        "Tool 'report' failed with InternalLookup",
        "InternalLookup",
        false,
        Some(INNER_ARGUMENT),
    ),
    (
        "tool_error_failed_over_argument",
        "Tool 'report' failed with InternalLookup",
        "InternalLookup",
        false,
        Some(INNER_ARGUMENT),
    ),
    (
        "disclose_over_argument",
        "Tool 'report' failed with StoreError::Lookup",
        "StoreError::Lookup",
        false,
        Some("the lookup failed"),
    ),
    (
        "failure_as_context_over_argument",
        "Tool 'report' failed with Upstream",
        "Upstream",
        false,
        Some("upstream ERR-CANARY-9a2c"),
    ),
    (
        "disclose_as_context_over_argument",
        "Tool 'report' failed with StoreError::Unavailable (transient: retrying later may succeed)",
        "StoreError::Unavailable",
        false,
        Some("store unavailable at ERR-CANARY-9a2c"),
    ),
    // deeper than the walk reads: no root cause, and no kind from beyond the limit
    (
        "too_deep",
        "Tool 'report' failed with Error",
        "Error",
        false,
        None,
    ),
    (
        "too_deep_over_failure",
        "Tool 'report' failed with Error",
        "Error",
        false,
        None,
    ),
    // `Option::context`'s value is the error itself, with nothing under it: its root cause
    (
        "none_with_context",
        "Tool 'report' failed with Error",
        "Error",
        false,
        Some("no row for ERR-CANARY-9a2c"),
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
        if !WITHOUT_CONTEXT.contains(&case) {
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
        ("failure_over_argument", "InternalLookup"),
        ("failure_as_context_over_argument", "Upstream"),
        ("disclose_kind", "StoreError::Unavailable"),
        ("plain_message", "Error"),
        ("too_deep", "Error"),
    ];
    for (case, kind) in cases {
        let error = call(&ReportEyre, case).await;
        assert_eq!(error.kind(), kind, "{case}");
        for include in [false, true] {
            let text = error.model_text("report_eyre", include);
            assert!(!text.contains(CONTEXT), "{case}: {text}");
            assert_eq!(
                text.contains(SECRET),
                include && kind != "argument" && case != "too_deep",
                "{case}: {text}"
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
            .map(|(i, (case, _))| {
                reticent::ToolCall::new(format!("call_{i}"), "report", json!({ "case": case }))
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
            assert!(
                failure.error_chain().contains(CONTEXT) || WITHOUT_CONTEXT.contains(&case),
                "{case}"
            );
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
            failure.error_chain().contains(CONTEXT)
                || failure.kind == "argument"
                || failure.kind == "InternalLookup",
            "{failure:?}"
        );
    }
}

/// With the opt-in, a chain longer than the walk reads shows no message (its 32nd is a context).
#[tokio::test]
async fn a_chain_deeper_than_the_walk_shows_no_root_cause() {
    for case in ["too_deep", "too_deep_over_failure"] {
        let error = call(&Report, case).await;
        assert_eq!(
            error.model_text("report", true),
            "Tool 'report' failed with Error",
            "{case}"
        );
    }
    let error = call(&ReportEyre, "too_deep").await;
    assert_eq!(
        error.model_text("report_eyre", true),
        "Tool 'report_eyre' failed with Error"
    );
}
