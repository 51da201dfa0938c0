//! What the model is told when a tool fails, for every kind of error a tool can return, and
//! what the caller keeps.

use std::error::Error as StdError;
use std::sync::Arc;

const MAX_MESSAGE_LEN: usize = reticent::ToolError::MAX_MESSAGE_LEN;
use reticent::{
    ArgumentError, Disclose, Disclosure, Failure, Tool, ToolContext, ToolError, Toolbox,
    failures::BoxError,
};
use serde_json::{Value, json};

// ---- error types ---------------------------------------------------------------------------

/// A plain error type: the model sees its name.
#[derive(Debug, thiserror::Error)]
#[error("gateway returned 503 for merchant 4411")]
struct GatewayError;

#[derive(Debug, thiserror::Error, Disclose)]
enum OrderError {
    #[error("no order {0}; order ids look like ORD-1042")]
    #[disclose(argument)]
    NotFound(String),
    #[error("database unavailable: {0}")]
    Database(String),
    #[error("rate limited for {seconds}s")]
    #[disclose(kind = "RateLimited")]
    Throttled { seconds: u64 },
    #[error("query failed")]
    Query(#[source] std::io::Error),
}

/// A type-level kind replaces the type's name in every variant's kind.
#[derive(Debug, thiserror::Error, Disclose)]
#[disclose(kind = "Payments")]
enum PaymentError {
    #[error("card declined by issuer")]
    Declined,
    #[error("fraud check pending")]
    #[disclose(kind = "FraudHold")]
    Fraud,
    #[error("card numbers have 16 digits")]
    #[disclose(argument)]
    BadCard,
}

#[derive(Debug, thiserror::Error, Disclose)]
#[error("inventory service timed out")]
struct InventoryTimeout;

#[derive(Debug, thiserror::Error, Disclose)]
#[error("quota of {0} calls exceeded")]
#[disclose(kind = "QuotaExceeded")]
struct Quota(u32);

#[derive(Debug, thiserror::Error, Disclose)]
#[error("`{field}` must be {rule}")]
#[disclose(argument)]
struct Invalid {
    field: &'static str,
    rule: &'static str,
}

/// A generic plain error type.
#[derive(Debug, thiserror::Error)]
#[error("wrapped: {0}")]
struct Wrapper<T: std::fmt::Debug + std::fmt::Display>(T);

/// A generic `Disclose` type.
#[derive(Debug, thiserror::Error, Disclose)]
enum Remote<E: StdError + Send + Sync + 'static> {
    #[error("remote call failed")]
    Failed(#[source] E),
    #[error("bad request: {0}")]
    #[disclose(argument)]
    BadRequest(String),
}

mod billing {
    /// A type literally named `Error` keeps its module's name.
    #[derive(Debug, thiserror::Error)]
    #[error("ledger locked")]
    pub struct Error;
}

// ---- tools ---------------------------------------------------------------------------------

fn order_error(case: &str) -> OrderError {
    match case {
        "not_found" => OrderError::NotFound("42".into()),
        "database" => OrderError::Database("pool exhausted".into()),
        "throttled" => OrderError::Throttled { seconds: 30 },
        _ => OrderError::Query(std::io::Error::other("socket closed")),
    }
}

/// Fails in the way `case` names.
#[reticent::tool]
async fn order_tool(case: String) -> Result<String, OrderError> {
    Err(order_error(&case))
}

/// Fails in the way `case` names.
#[reticent::tool]
fn payment_tool(case: String) -> Result<(), PaymentError> {
    Err(match case.as_str() {
        "declined" => PaymentError::Declined,
        "fraud" => PaymentError::Fraud,
        _ => PaymentError::BadCard,
    })
}

/// Fails with a plain error type.
#[reticent::tool]
async fn charge_card() -> Result<String, GatewayError> {
    Err(GatewayError)
}

/// Fails with an `ArgumentError`.
#[reticent::tool]
fn book_room(date: String) -> Result<String, ArgumentError> {
    Err(ArgumentError::new(format!(
        "`{date}` is not a date; dates look like 2024-05-01"
    )))
}

/// Fails with `std::io::Error`.
#[reticent::tool]
fn read_file(path: String) -> Result<String, std::io::Error> {
    Err(std::io::Error::new(
        std::io::ErrorKind::NotFound,
        format!("{path}: no such file"),
    ))
}

/// Fails through the `std::io::Result` alias.
#[reticent::tool]
async fn write_file(path: String) -> std::io::Result<()> {
    Err(std::io::Error::other(format!("{path}: disk full")))
}

/// Fails with `serde_json::Error`.
#[reticent::tool]
fn parse_config(text: String) -> Result<Value, serde_json::Error> {
    serde_json::from_str(&text)
}

/// Fails with a type named `Error`.
#[reticent::tool]
fn post_ledger() -> Result<(), billing::Error> {
    Err(billing::Error)
}

/// Fails with Disclose structs.
#[reticent::tool]
fn check_stock(sku: String) -> Result<u32, InventoryTimeout> {
    let _ = sku;
    Err(InventoryTimeout)
}

/// Fails with a Disclose struct that has a kind.
#[reticent::tool]
fn call_api() -> Result<(), Quota> {
    Err(Quota(1000))
}

/// Fails with a Disclose struct marked as the model's fault.
#[reticent::tool]
fn set_limit(limit: i64) -> Result<(), Invalid> {
    let _ = limit;
    Err(Invalid {
        field: "limit",
        rule: "positive",
    })
}

/// Fails with a generic error type.
#[reticent::tool]
fn wrapped() -> Result<(), Wrapper<String>> {
    Err(Wrapper("inner detail".into()))
}

/// Fails with a generic Disclose type.
#[reticent::tool]
fn call_remote(bad: bool) -> Result<(), Remote<GatewayError>> {
    Err(if bad {
        Remote::BadRequest("`bad` must be false".into())
    } else {
        Remote::Failed(GatewayError)
    })
}

/// Fails with a boxed error.
#[reticent::tool]
fn boxed_dyn() -> Result<(), BoxError> {
    Err("connection reset by peer".into())
}

/// Fails with `Box<dyn Error + Send + Sync>` written out.
#[reticent::tool]
fn boxed_dyn_written_out() -> Result<(), Box<dyn StdError + Send + Sync>> {
    Err(Box::new(GatewayError))
}

/// Fails with a boxed concrete error.
#[reticent::tool]
fn boxed_plain() -> Result<(), Box<GatewayError>> {
    Err(Box::new(GatewayError))
}

/// Fails with a boxed Disclose error.
#[reticent::tool]
fn boxed_disclose(not_found: bool) -> Result<(), Box<OrderError>> {
    Err(Box::new(if not_found {
        OrderError::NotFound("7".into())
    } else {
        OrderError::Database("replica lag".into())
    }))
}

/// Fails with a shared Disclose error.
#[reticent::tool]
fn shared_disclose() -> Result<(), Arc<OrderError>> {
    Err(Arc::new(OrderError::Throttled { seconds: 5 }))
}

/// Returns `ToolError` directly.
#[reticent::tool]
fn direct_tool_error(argument: bool) -> Result<(), ToolError> {
    Err(if argument {
        ArgumentError::new("`argument` was true").into()
    } else {
        Failure::new("Upstream", GatewayError).into()
    })
}

/// Returns `Failure` directly.
#[reticent::tool]
async fn direct_failure() -> Result<(), Failure> {
    Err(Failure::new("Upstream", "upstream said no"))
}

/// Returns an output that cannot be JSON.
#[reticent::tool]
fn bad_output() -> std::collections::HashMap<(u8, u8), u8> {
    std::collections::HashMap::from([((1, 2), 3)])
}

/// Fails with a message of `len` bytes.
#[reticent::tool]
fn long_message(len: usize, argument: bool) -> Result<(), ToolError> {
    let message = "x".repeat(len);
    Err(if argument {
        ArgumentError::new(message).into()
    } else {
        ToolError::from_error(std::io::Error::other(message))
    })
}

async fn fail(tool: &dyn Tool, args: Value) -> ToolError {
    match tool.call(args, ToolContext::default()).await {
        Ok(out) => panic!("`{}` returned {out}", tool.definition().name),
        Err(err) => err,
    }
}

/// The model's text for a failing call, without and with the messages opt-in.
async fn texts(tool: &dyn Tool, args: Value) -> (String, String) {
    let err = fail(tool, args).await;
    let name = &tool.definition().name;
    (err.model_text(name, false), err.model_text(name, true))
}

async fn model_text(tool: &dyn Tool, args: Value) -> String {
    texts(tool, args).await.0
}

fn failure(err: &ToolError) -> &Failure {
    match err {
        ToolError::Failed(failure) => failure,
        ToolError::Argument(e) => panic!("an argument error: {e}"),
    }
}

// ---- argument errors -----------------------------------------------------------------------

#[tokio::test]
async fn undecodable_arguments_show_the_message() {
    assert_eq!(
        model_text(&BookRoom, json!({"date": 5})).await,
        "Invalid arguments for tool 'book_room': argument `date`: invalid type: integer `5`, expected a string"
    );
}

#[tokio::test]
async fn an_argument_error_shows_its_message() {
    let (text, with_messages) = texts(&BookRoom, json!({"date": "tomorrow"})).await;
    assert_eq!(
        text,
        "Invalid arguments for tool 'book_room': `tomorrow` is not a date; dates look like 2024-05-01"
    );
    // The opt-in changes nothing for the model's own mistakes.
    assert_eq!(with_messages, text);
}

#[tokio::test]
async fn an_argument_variant_shows_its_display() {
    assert_eq!(
        model_text(&OrderTool, json!({"case": "not_found"})).await,
        "Invalid arguments for tool 'order_tool': no order 42; order ids look like ORD-1042"
    );
    assert_eq!(
        model_text(&PaymentTool, json!({"case": "bad_card"})).await,
        "Invalid arguments for tool 'payment_tool': card numbers have 16 digits"
    );
    assert_eq!(
        model_text(&SetLimit, json!({"limit": -1})).await,
        "Invalid arguments for tool 'set_limit': `limit` must be positive"
    );
    assert_eq!(
        model_text(&CallRemote, json!({"bad": true})).await,
        "Invalid arguments for tool 'call_remote': bad request: `bad` must be false"
    );
}

#[tokio::test]
async fn an_argument_variant_keeps_the_typed_error() {
    let err = fail(&OrderTool, json!({"case": "not_found"})).await;
    let ToolError::Argument(argument) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        argument.message(),
        "no order 42; order ids look like ORD-1042"
    );
    let typed = argument.error().unwrap().downcast_ref::<OrderError>();
    assert!(matches!(typed, Some(OrderError::NotFound(id)) if id == "42"));
    assert!(err.source().unwrap().is::<OrderError>());
    assert_eq!(err.kind(), "argument");
    assert_eq!(err.kind(), ArgumentError::KIND);
}

// ---- failures ------------------------------------------------------------------------------

#[tokio::test]
async fn a_plain_error_type_shows_its_name() {
    let (text, with_messages) = texts(&ChargeCard, json!({})).await;
    assert_eq!(text, "Tool 'charge_card' failed with GatewayError");
    assert_eq!(
        with_messages,
        "Tool 'charge_card' failed with GatewayError: gateway returned 503 for merchant 4411"
    );
}

#[tokio::test]
async fn io_errors_show_io_error() {
    let (text, with_messages) = texts(&ReadFile, json!({"path": "/srv/app.toml"})).await;
    assert_eq!(text, "Tool 'read_file' failed with io::Error");
    assert_eq!(
        with_messages,
        "Tool 'read_file' failed with io::Error: /srv/app.toml: no such file"
    );
    assert_eq!(
        model_text(&WriteFile, json!({"path": "/srv/out"})).await,
        "Tool 'write_file' failed with io::Error"
    );
}

#[tokio::test]
async fn a_type_named_error_keeps_its_parent() {
    assert_eq!(
        model_text(&ParseConfig, json!({"text": "{"})).await,
        "Tool 'parse_config' failed with serde_json::Error"
    );
    assert_eq!(
        model_text(&PostLedger, json!({})).await,
        "Tool 'post_ledger' failed with billing::Error"
    );
}

#[tokio::test]
async fn a_disclose_variant_shows_type_and_variant() {
    let (text, with_messages) = texts(&OrderTool, json!({"case": "database"})).await;
    assert_eq!(text, "Tool 'order_tool' failed with OrderError::Database");
    assert_eq!(
        with_messages,
        "Tool 'order_tool' failed with OrderError::Database: database unavailable: pool exhausted"
    );
    assert_eq!(
        model_text(&OrderTool, json!({"case": "query"})).await,
        "Tool 'order_tool' failed with OrderError::Query"
    );
}

#[tokio::test]
async fn a_variant_kind_replaces_type_and_variant() {
    assert_eq!(
        model_text(&OrderTool, json!({"case": "throttled"})).await,
        "Tool 'order_tool' failed with RateLimited"
    );
    assert_eq!(
        model_text(&PaymentTool, json!({"case": "fraud"})).await,
        "Tool 'payment_tool' failed with FraudHold"
    );
}

#[tokio::test]
async fn a_type_kind_replaces_the_type_name() {
    assert_eq!(
        model_text(&PaymentTool, json!({"case": "declined"})).await,
        "Tool 'payment_tool' failed with Payments::Declined"
    );
}

#[tokio::test]
async fn a_disclose_struct_shows_its_name_or_kind() {
    assert_eq!(
        model_text(&CheckStock, json!({"sku": "A1"})).await,
        "Tool 'check_stock' failed with InventoryTimeout"
    );
    assert_eq!(
        model_text(&CallApi, json!({})).await,
        "Tool 'call_api' failed with QuotaExceeded"
    );
}

#[tokio::test]
async fn a_generic_error_type_is_named_without_its_arguments() {
    assert_eq!(
        model_text(&Wrapped, json!({})).await,
        "Tool 'wrapped' failed with Wrapper"
    );
    assert_eq!(
        model_text(&CallRemote, json!({"bad": false})).await,
        "Tool 'call_remote' failed with Remote::Failed"
    );
}

#[test]
fn disclose_is_derived_as_declared() {
    assert_eq!(
        OrderError::NotFound("1".into()).disclosure(),
        Disclosure::Argument
    );
    assert_eq!(
        OrderError::Database("x".into()).disclosure(),
        Disclosure::Kind("OrderError::Database")
    );
    assert_eq!(
        OrderError::Throttled { seconds: 1 }.disclosure(),
        Disclosure::Kind("RateLimited")
    );
    assert_eq!(
        PaymentError::Declined.disclosure(),
        Disclosure::Kind("Payments::Declined")
    );
    assert_eq!(
        InventoryTimeout.disclosure(),
        Disclosure::Kind("InventoryTimeout")
    );
    assert_eq!(Quota(1).disclosure(), Disclosure::Kind("QuotaExceeded"));
    assert_eq!(
        Invalid {
            field: "a",
            rule: "b"
        }
        .disclosure(),
        Disclosure::Argument
    );
    assert_eq!(
        Remote::<GatewayError>::Failed(GatewayError).disclosure(),
        Disclosure::Kind("Remote::Failed")
    );
}

#[tokio::test]
async fn a_boxed_dyn_error_shows_error() {
    let (text, with_messages) = texts(&BoxedDyn, json!({})).await;
    assert_eq!(text, "Tool 'boxed_dyn' failed with Error");
    assert_eq!(
        with_messages,
        "Tool 'boxed_dyn' failed with Error: connection reset by peer"
    );
    assert_eq!(
        model_text(&BoxedDynWrittenOut, json!({})).await,
        "Tool 'boxed_dyn_written_out' failed with Error"
    );
    // The boxed error is still there for the caller.
    let err = fail(&BoxedDynWrittenOut, json!({})).await;
    assert!(
        failure(&err)
            .error()
            .downcast_ref::<GatewayError>()
            .is_some()
    );
}

#[tokio::test]
async fn a_boxed_error_is_disclosed_as_the_error_it_holds() {
    assert_eq!(
        model_text(&BoxedPlain, json!({})).await,
        "Tool 'boxed_plain' failed with GatewayError"
    );
    assert_eq!(
        model_text(&BoxedDisclose, json!({"not_found": false})).await,
        "Tool 'boxed_disclose' failed with OrderError::Database"
    );
    assert_eq!(
        model_text(&BoxedDisclose, json!({"not_found": true})).await,
        "Invalid arguments for tool 'boxed_disclose': no order 7; order ids look like ORD-1042"
    );
    assert_eq!(
        model_text(&SharedDisclose, json!({})).await,
        "Tool 'shared_disclose' failed with RateLimited"
    );
}

#[tokio::test]
async fn a_tool_error_returned_directly_is_kept_as_is() {
    assert_eq!(
        model_text(&DirectToolError, json!({"argument": true})).await,
        "Invalid arguments for tool 'direct_tool_error': `argument` was true"
    );
    let (text, with_messages) = texts(&DirectToolError, json!({"argument": false})).await;
    assert_eq!(text, "Tool 'direct_tool_error' failed with Upstream");
    assert_eq!(
        with_messages,
        "Tool 'direct_tool_error' failed with Upstream: gateway returned 503 for merchant 4411"
    );
}

#[tokio::test]
async fn a_failure_returned_directly_is_kept_as_is() {
    let (text, with_messages) = texts(&DirectFailure, json!({})).await;
    assert_eq!(text, "Tool 'direct_failure' failed with Upstream");
    assert_eq!(
        with_messages,
        "Tool 'direct_failure' failed with Upstream: upstream said no"
    );
}

#[tokio::test]
async fn an_output_that_is_not_json_is_a_failure() {
    let err = fail(&BadOutput, json!({})).await;
    assert_eq!(
        err.model_text("bad_output", false),
        "Tool 'bad_output' failed with OutputError"
    );
    assert!(err.source().unwrap().to_string().contains("serialized"));
}

// ---- cutting messages ----------------------------------------------------------------------

#[tokio::test]
async fn with_the_opt_in_a_long_message_is_cut() {
    let (text, with_messages) =
        texts(&LongMessage, json!({"len": 10_000, "argument": false})).await;
    assert_eq!(text, "Tool 'long_message' failed with io::Error");
    let prefix = "Tool 'long_message' failed with io::Error: ";
    assert!(with_messages.starts_with(prefix), "{with_messages}");
    assert!(
        with_messages.len() <= prefix.len() + MAX_MESSAGE_LEN,
        "{} bytes",
        with_messages.len()
    );
    assert!(with_messages.contains(" bytes cut) "), "{with_messages}");
}

#[tokio::test]
async fn a_message_at_the_limit_is_not_cut() {
    let (_, with_messages) = texts(
        &LongMessage,
        json!({"len": MAX_MESSAGE_LEN, "argument": false}),
    )
    .await;
    assert_eq!(
        with_messages,
        format!(
            "Tool 'long_message' failed with io::Error: {}",
            "x".repeat(MAX_MESSAGE_LEN)
        )
    );
}

#[tokio::test]
async fn a_long_argument_message_is_cut() {
    let text = model_text(&LongMessage, json!({"len": 10_000, "argument": true})).await;
    let prefix = "Invalid arguments for tool 'long_message': ";
    assert!(text.starts_with(prefix), "{text}");
    assert!(text.len() <= prefix.len() + MAX_MESSAGE_LEN, "{text}");
    assert!(text.contains(" bytes cut) "), "{text}");
}

#[test]
fn a_long_tool_name_is_cut() {
    let name = "n".repeat(10_000);
    let err = ToolError::from_error(GatewayError);
    let text = err.model_text(&name, false);
    assert!(text.len() < 200, "{text}");
    assert!(text.ends_with("' failed with GatewayError"), "{text}");
}

#[test]
fn cutting_respects_character_boundaries() {
    let err = ToolError::Argument(ArgumentError::new("é".repeat(2000)));
    let text = err.model_text("t", true);
    // A `String` is always valid UTF-8: reaching here without a panic is the point, and the
    // kept characters are whole.
    assert!(text.contains("éé"), "{text}");
    assert!(text.len() < 600, "{text}");
}

// ---- what the caller keeps -----------------------------------------------------------------

#[tokio::test]
async fn a_failure_keeps_its_kind_and_the_full_error() {
    let err = fail(&ChargeCard, json!({})).await;
    let failure = failure(&err);
    assert_eq!(failure.kind(), "GatewayError");
    assert_eq!(err.kind(), "GatewayError");
    assert!(!err.is_argument());
    assert!(failure.error().is::<GatewayError>());
    assert_eq!(
        failure.error().to_string(),
        "gateway returned 503 for merchant 4411"
    );
}

#[tokio::test]
async fn the_source_chain_reaches_the_root_cause() {
    let err = fail(&OrderTool, json!({"case": "query"})).await;
    let mut chain = Vec::new();
    let mut next: Option<&(dyn StdError + 'static)> = err.source();
    while let Some(error) = next {
        chain.push(error.to_string());
        next = error.source();
    }
    assert_eq!(chain, ["query failed", "socket closed"]);
    let failure = failure(&err);
    assert!(failure.source().unwrap().is::<OrderError>());
    assert_eq!(failure.clone().into_error().to_string(), "query failed");
}

#[tokio::test]
async fn display_names_the_kind_and_never_the_message() {
    let err = fail(&OrderTool, json!({"case": "database"})).await;
    assert_eq!(err.to_string(), "tool failed with OrderError::Database");
    assert_eq!(
        failure(&err).to_string(),
        "tool failed with OrderError::Database"
    );
    assert!(!err.to_string().contains("pool exhausted"));
    // Debug is for the developer and has everything.
    assert!(format!("{err:?}").contains("pool exhausted"));
}

#[test]
fn classification_by_hand_matches_the_wrapper() {
    let err = ToolError::from_disclose(OrderError::Database("x".into()));
    assert_eq!(
        err.model_text("t", false),
        "Tool 't' failed with OrderError::Database"
    );
    let err = ToolError::from_disclose(OrderError::NotFound("9".into()));
    assert_eq!(
        err.model_text("t", false),
        "Invalid arguments for tool 't': no order 9; order ids look like ORD-1042"
    );
    let err = ToolError::from_error(std::io::Error::other("x"));
    assert_eq!(err.model_text("t", false), "Tool 't' failed with io::Error");
    let failure = Failure::from_error(GatewayError);
    assert_eq!(failure.kind(), "GatewayError");
    let err: ToolError = ArgumentError::new("m").into();
    assert!(err.is_argument());
}

// ---- every kind of tool discloses the same -------------------------------------------------

/// Fails with `OrderError`, sync.
#[reticent::tool]
fn order_tool_sync(case: String) -> Result<String, OrderError> {
    Err(order_error(&case))
}

struct Shop;

#[reticent::tools]
impl Shop {
    /// Fails with `OrderError`, async method.
    #[tool]
    async fn order_method(&self, case: String) -> Result<String, OrderError> {
        Err(order_error(&case))
    }

    /// Fails with `OrderError`, sync method.
    #[tool]
    fn order_method_sync(&self, case: String) -> Result<String, OrderError> {
        Err(order_error(&case))
    }

    /// Fails with a plain error type.
    #[tool]
    fn charge_method(&self) -> Result<String, GatewayError> {
        Err(GatewayError)
    }

    /// Fails with `std::io::Result`.
    #[tool]
    async fn write_method(&self, path: String) -> std::io::Result<()> {
        write_file(path).await
    }
}

#[tokio::test]
async fn sync_tools_and_methods_disclose_like_async_functions() {
    let shop = Arc::new(Shop).tools();
    let order_tools: [&dyn Tool; 4] = [&OrderTool, &OrderToolSync, &*shop[0], &*shop[1]];
    for case in ["not_found", "database", "throttled", "query"] {
        let mut seen = Vec::new();
        for tool in order_tools {
            let (text, with_messages) = texts(tool, json!({"case": case})).await;
            let name = &tool.definition().name;
            seen.push((
                text.replace(name.as_str(), "TOOL"),
                with_messages.replace(name.as_str(), "TOOL"),
            ));
        }
        assert!(
            seen.windows(2).all(|pair| pair[0] == pair[1]),
            "{case}: {seen:#?}"
        );
    }
    assert_eq!(
        model_text(&*shop[2], json!({})).await,
        "Tool 'charge_method' failed with GatewayError"
    );
    assert_eq!(
        model_text(&*shop[3], json!({"path": "/srv/out"})).await,
        "Tool 'write_method' failed with io::Error"
    );
}
