//! A secret in an error message never reaches the model unless the caller opts in, whatever
//! shape the error has, while the caller always keeps it.

use std::error::Error as StdError;
use std::sync::Arc;

use reticent::{
    Agent, Disclose, Failure, ModelResponse, ScriptedModel, Tool, ToolContext, ToolError,
    ToolFailureOptions, Toolbox, failures::BoxError,
};
use serde_json::json;

const CANARY: &str = "CANARY-7f3a";
const DSN: &str = "postgres://admin:CANARY-7f3a@db";

#[derive(Debug, thiserror::Error)]
#[error("cannot connect to {0}")]
struct DbError(String);

#[derive(Debug, thiserror::Error, Disclose)]
enum OrderError {
    #[error("no order {0}")]
    #[disclose(argument)]
    NotFound(String),
    #[error("database unavailable: {0}")]
    Database(String),
    #[error("replica {0} is behind")]
    #[disclose(kind = "Unavailable")]
    Lagging(String),
}

/// The canary is only in the error's source, not in its own message.
#[derive(Debug, thiserror::Error)]
#[error("order lookup failed")]
struct LookupFailed(#[source] DbError);

#[derive(Debug, thiserror::Error, Disclose)]
#[error("inventory sync failed")]
struct SyncFailed {
    #[source]
    source: DbError,
}

fn dsn() -> String {
    DSN.to_owned()
}

/// Plain error type.
#[reticent::tool]
async fn plain() -> Result<(), DbError> {
    Err(DbError(dsn()))
}

/// Disclose variant that is not an argument.
#[reticent::tool]
async fn disclose_variant() -> Result<(), OrderError> {
    Err(OrderError::Database(dsn()))
}

/// Disclose variant with its own kind.
#[reticent::tool]
async fn disclose_kind() -> Result<(), OrderError> {
    Err(OrderError::Lagging(dsn()))
}

/// io::Error.
#[reticent::tool]
fn io_error() -> std::io::Result<()> {
    Err(std::io::Error::other(format!("cannot open {DSN}")))
}

/// A boxed error.
#[reticent::tool]
fn boxed() -> Result<(), BoxError> {
    Err(format!("connect {DSN}: refused").into())
}

/// A boxed concrete error.
#[reticent::tool]
fn boxed_concrete() -> Result<(), Box<DbError>> {
    Err(Box::new(DbError(dsn())))
}

/// A failure built by hand.
#[reticent::tool]
async fn failure_by_hand() -> Result<(), Failure> {
    Err(Failure::new("Database", DbError(dsn())))
}

/// A tool error built by hand.
#[reticent::tool]
async fn tool_error_by_hand() -> Result<(), ToolError> {
    Err(ToolError::from_error(DbError(dsn())))
}

/// The canary in the source only.
#[reticent::tool]
fn in_source() -> Result<(), LookupFailed> {
    Err(LookupFailed(DbError(dsn())))
}

/// The canary in the source of a Disclose struct.
#[reticent::tool]
fn in_disclose_source() -> Result<(), SyncFailed> {
    Err(SyncFailed {
        source: DbError(dsn()),
    })
}

/// Look up a customer by id.
#[reticent::tool]
fn lookup_customer(id: u64) -> Result<String, DbError> {
    Ok(format!("C-{id}"))
}

/// What a lookup of the customer with the id a database row holds fails with: the argument
/// error of the inner call, which echoes the row (the canary).
async fn inner_lookup() -> Result<serde_json::Value, ToolError> {
    LookupCustomer
        .call(json!({ "id": dsn() }), ToolContext::default())
        .await
}

/// Summarise a customer, returning `anyhow::Result`: the inner call's error gets a kind and
/// leaves through `?`.
#[reticent::tool]
async fn customer_summary() -> anyhow::Result<String> {
    let customer = inner_lookup()
        .await
        .map_err(|inner| Failure::new("InternalLookup", inner))?;
    Ok(customer.to_string())
}

/// The same summary, returning `Result<_, Failure>`.
#[reticent::tool]
async fn customer_summary_plain() -> Result<String, Failure> {
    let customer = inner_lookup()
        .await
        .map_err(|inner| Failure::new("InternalLookup", inner))?;
    Ok(customer.to_string())
}

struct Warehouse;

#[reticent::tools]
impl Warehouse {
    /// A method failing with a plain error type.
    #[tool]
    async fn method_plain(&self) -> Result<(), DbError> {
        Err(DbError(dsn()))
    }

    /// A sync method failing with a Disclose variant.
    #[tool]
    fn method_disclose(&self) -> Result<(), OrderError> {
        Err(OrderError::Database(dsn()))
    }
}

/// The full error chain, as the caller sees it: every `Display` from the top down.
fn chain(err: &(dyn StdError + 'static)) -> String {
    let mut out = vec![err.to_string()];
    let mut next = err.source();
    while let Some(error) = next {
        out.push(error.to_string());
        next = error.source();
    }
    out.join(" <- ")
}

async fn failure_of(tool: &dyn Tool) -> ToolError {
    let err = tool
        .call(json!({}), ToolContext::default())
        .await
        .expect_err("the tool should fail");
    assert!(
        !err.is_argument(),
        "{}: an argument error",
        tool.definition().name
    );
    err
}

/// Checks the disclosure rules for one failing tool; `message_holds_canary` says whether the
/// error's own message (not only a source) holds it.
async fn check(tool: &dyn Tool, message_holds_canary: bool) {
    let name = &tool.definition().name;
    let err = failure_of(tool).await;
    let ToolError::Failed(failure) = &err else {
        unreachable!()
    };

    // The model never sees it by default.
    let shown = err.model_text(name, false);
    assert!(
        !shown.contains(CANARY),
        "{name}: shown to the model: {shown}"
    );
    assert_eq!(
        shown,
        format!("Tool '{name}' failed with {}", failure.kind())
    );

    // Nor does a `Display` that might be logged or forwarded.
    for display in [err.to_string(), failure.to_string()] {
        assert!(!display.contains(CANARY), "{name}: in Display: {display}");
    }
    assert!(!failure.kind().contains(CANARY), "{name}: in the kind");

    // The caller keeps all of it.
    assert!(
        chain(&**failure.error()).contains(DSN),
        "{name}: lost: {}",
        chain(&**failure.error())
    );
    assert!(chain(&err).contains(DSN), "{name}: lost from source()");
    assert!(format!("{err:?}").contains(DSN), "{name}: lost from Debug");

    // The opt-in shows the error's own message, and only that.
    let opted_in = err.model_text(name, true);
    assert_eq!(
        opted_in,
        format!("{shown}: {}", failure.error()),
        "{name}: opt-in"
    );
    assert_eq!(
        opted_in.contains(CANARY),
        message_holds_canary,
        "{name}: {opted_in}"
    );
}

#[tokio::test]
async fn a_plain_error_type_keeps_its_secret() {
    check(&Plain, true).await;
}

#[tokio::test]
async fn a_disclose_variant_keeps_its_secret() {
    check(&DiscloseVariant, true).await;
    check(&DiscloseKind, true).await;
}

#[tokio::test]
async fn an_io_error_keeps_its_secret() {
    check(&IoError, true).await;
}

#[tokio::test]
async fn a_boxed_error_keeps_its_secret() {
    check(&Boxed, true).await;
    check(&BoxedConcrete, true).await;
}

#[tokio::test]
async fn a_failure_built_by_hand_keeps_its_secret() {
    check(&FailureByHand, true).await;
    check(&ToolErrorByHand, true).await;
}

#[tokio::test]
async fn a_secret_in_a_source_stays_there_even_with_the_opt_in() {
    check(&InSource, false).await;
    check(&InDiscloseSource, false).await;
}

#[tokio::test]
async fn methods_keep_their_secrets() {
    for tool in Arc::new(Warehouse).tools() {
        check(&*tool, true).await;
    }
}

#[tokio::test]
async fn the_model_sees_the_kind_only() {
    let cases: [(&dyn Tool, &str); 10] = [
        (&Plain, "DbError"),
        (&DiscloseVariant, "OrderError::Database"),
        (&DiscloseKind, "Unavailable"),
        (&IoError, "io::Error"),
        (&Boxed, "Error"),
        (&BoxedConcrete, "DbError"),
        (&FailureByHand, "Database"),
        (&ToolErrorByHand, "DbError"),
        (&InSource, "LookupFailed"),
        (&InDiscloseSource, "SyncFailed"),
    ];
    for (tool, kind) in cases {
        let name = &tool.definition().name;
        assert_eq!(
            failure_of(tool).await.model_text(name, false),
            format!("Tool '{name}' failed with {kind}")
        );
    }
}

#[test]
fn an_argument_variant_is_shown_because_the_model_wrote_it() {
    // The counterpart: an argument error echoes the model's own input, by design.
    let err = ToolError::from_disclose(OrderError::NotFound("ORD-9".into()));
    assert_eq!(
        err.model_text("lookup", false),
        "Invalid arguments for tool 'lookup': no order ORD-9"
    );
}

/// A `Failure` through `anyhow` shows what it shows plain: its kind, not the argument inside.
#[tokio::test]
async fn a_failure_through_anyhow_hides_the_argument_error_inside_it() {
    let through_anyhow = CustomerSummary
        .call(json!({}), ToolContext::default())
        .await
        .expect_err("the inner lookup fails");
    let plain = CustomerSummaryPlain
        .call(json!({}), ToolContext::default())
        .await
        .expect_err("the inner lookup fails");
    for include in [false, true] {
        assert_eq!(
            through_anyhow.model_text("summary", include),
            plain.model_text("summary", include),
            "include_error_message({include})"
        );
    }
    assert_eq!(
        through_anyhow.model_text("summary", false),
        "Tool 'summary' failed with InternalLookup"
    );
    assert!(chain(&through_anyhow).contains(DSN), "the caller lost it");

    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "customer_summary", json!({})),
        ModelResponse::text("The lookup failed."),
    ]);
    let result = Agent::builder(model.clone())
        .tool(CustomerSummary)
        .failure_options(ToolFailureOptions::default())
        .build()
        .unwrap()
        .run("Summarise the customer.")
        .await
        .unwrap();
    let [failure] = &result.tool_failures[..] else {
        panic!("one failure: {:?}", result.tool_failures)
    };
    assert_eq!(failure.kind, "InternalLookup");
    assert!(failure.error_chain().contains(DSN), "the caller lost it");
    let seen = [
        serde_json::to_string(&model.requests()).unwrap(),
        format!("{:?}", model.requests()),
        serde_json::to_string(&result.messages).unwrap(),
        serde_json::to_string(&result.trajectory).unwrap(),
        failure.shown_to_model.clone(),
    ];
    for text in seen {
        assert!(!text.contains(CANARY), "the model was shown it: {text}");
    }
}
