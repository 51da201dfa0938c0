//! Retry hints: `#[disclose(transient)]` and `#[disclose(permanent)]` (on a type or a
//! variant, the variant's winning) and `with_hint` on a hand-built `Failure` or
//! `ArgumentError` add a fixed text to the model's line. Timeouts and exact repeats carry their
//! own fixed texts. A hint is literal text chosen at compile time: the error's message never
//! comes with it.

use std::time::Duration;

use reticent::{
    Agent, ArgumentError, Disclose, Failure, ModelResponse, ScriptedModel, ToolCall, ToolError,
    ToolFailureOptions, failures::RetryHint,
};
use reticent_tests::transcript::{last_tool_result, tool_results};
use serde_json::json;

const CANARY: &str = "CANARY-5e1d";

const TRANSIENT: &str = "(transient: retrying later may succeed)";
const PERMANENT: &str = "(permanent: retrying the same call will not help)";

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum GatewayError {
    #[error("gateway 503 from pay-7.internal, token {0}")]
    #[disclose(transient)]
    Unavailable(String),
    #[error("card {0} declined: stolen")]
    #[disclose(permanent)]
    Declined(String),
    #[error("gateway answered {0}")]
    Protocol(String),
    #[error("no card {0}; card ids look like card_1234")]
    #[disclose(argument, permanent)]
    UnknownCard(String),
}

/// Every variant is transient unless it says otherwise.
#[derive(Debug, thiserror::Error, reticent::Disclose)]
#[disclose(transient)]
enum ShippingError {
    #[error("carrier api down: {0}")]
    CarrierDown(String),
    #[error("address {0} is not deliverable")]
    #[disclose(permanent)]
    Undeliverable(String),
    #[error("carrier throttled us: {0}")]
    #[disclose(kind = "RateLimited")]
    Throttled(String),
}

/// A struct error with a hint.
#[derive(Debug, thiserror::Error, reticent::Disclose)]
#[error("mail relay {0} refused the connection")]
#[disclose(transient)]
struct RelayUnavailable(String);

/// Charge a card.
#[reticent::tool]
fn charge_card(
    /// What should go wrong.
    case: String,
) -> Result<String, GatewayError> {
    let secret = format!("secret {CANARY}");
    match case.as_str() {
        "unavailable" => Err(GatewayError::Unavailable(secret)),
        "declined" => Err(GatewayError::Declined(secret)),
        "protocol" => Err(GatewayError::Protocol(secret)),
        "unknown_card" => Err(GatewayError::UnknownCard("card_9".into())),
        _ => Ok("charged".into()),
    }
}

/// Ship a parcel.
#[reticent::tool]
fn ship(
    /// What should go wrong.
    case: String,
) -> Result<String, ShippingError> {
    let secret = format!("secret {CANARY}");
    match case.as_str() {
        "down" => Err(ShippingError::CarrierDown(secret)),
        "undeliverable" => Err(ShippingError::Undeliverable(secret)),
        _ => Err(ShippingError::Throttled(secret)),
    }
}

/// Send an email.
#[reticent::tool]
fn send_email() -> Result<(), RelayUnavailable> {
    Err(RelayUnavailable(format!("smtp://{CANARY}@relay")))
}

#[derive(Debug, thiserror::Error)]
#[error("ledger lock held by job {0}")]
struct LockHeld(String);

/// Post to the ledger; builds its errors by hand.
#[reticent::tool]
fn post_ledger(
    /// What should go wrong.
    case: String,
) -> Result<String, ToolError> {
    match case.as_str() {
        "locked" => Err(Failure::new("LedgerLocked", LockHeld(CANARY.into()))
            .with_hint(RetryHint::Transient)
            .into()),
        "closed" => Err(Failure::from_error(LockHeld(CANARY.into()))
            .with_hint(RetryHint::Permanent)
            .into()),
        _ => Err(
            ArgumentError::new("the period is closed; post to the next period")
                .with_hint(RetryHint::Permanent)
                .into(),
        ),
    }
}

/// Take a minute.
#[reticent::tool]
async fn settle() -> String {
    tokio::time::sleep(Duration::from_secs(60)).await;
    "settled".into()
}

fn call(id: &str, tool: &str, case: &str) -> ToolCall {
    ToolCall::new(id, tool, json!({ "case": case }))
}

/// Runs one turn of `calls` and returns what the model was shown for each, in order.
async fn shown(calls: Vec<ToolCall>, options: ToolFailureOptions) -> Vec<String> {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(calls),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(ChargeCard)
        .tool(Ship)
        .tool(SendEmail)
        .tool(PostLedger)
        .failure_options(options)
        .max_consecutive_failures(100)
        .build()
        .unwrap();
    let result = agent.run("go").await.unwrap();
    // What the model was sent is what the result and each failure record.
    let sent: Vec<String> = tool_results(&model.requests()[1].messages)
        .into_iter()
        .map(|r| r.content.clone())
        .collect();
    let recorded: Vec<String> = result
        .tool_failures
        .iter()
        .map(|f| f.shown_to_model.clone())
        .collect();
    assert_eq!(sent, recorded);
    sent
}

#[tokio::test]
async fn variant_hints_are_appended_exactly_as_declared() {
    let shown = shown(
        vec![
            call("c1", "charge_card", "unavailable"),
            call("c2", "charge_card", "declined"),
            call("c3", "charge_card", "protocol"),
            call("c4", "charge_card", "unknown_card"),
        ],
        ToolFailureOptions::default(),
    )
    .await;
    assert_eq!(
        shown,
        [
            format!("Tool 'charge_card' failed with GatewayError::Unavailable {TRANSIENT}"),
            format!("Tool 'charge_card' failed with GatewayError::Declined {PERMANENT}"),
            // No hint declared, none shown.
            "Tool 'charge_card' failed with GatewayError::Protocol".to_owned(),
            // An argument error keeps its message, and takes a hint too.
            format!(
                "Invalid arguments for tool 'charge_card': no card card_9; card ids look like \
                 card_1234 {PERMANENT}"
            ),
        ]
    );
    for text in &shown {
        assert!(!text.contains(CANARY), "{text}");
    }
}

#[tokio::test]
async fn a_type_hint_applies_to_every_variant_that_does_not_declare_its_own() {
    let shown = shown(
        vec![
            call("c1", "ship", "down"),
            call("c2", "ship", "undeliverable"),
            call("c3", "ship", "throttled"),
            ToolCall::new("c4", "send_email", json!({})),
        ],
        ToolFailureOptions::default(),
    )
    .await;
    assert_eq!(
        shown,
        [
            format!("Tool 'ship' failed with ShippingError::CarrierDown {TRANSIENT}"),
            format!("Tool 'ship' failed with ShippingError::Undeliverable {PERMANENT}"),
            format!("Tool 'ship' failed with RateLimited {TRANSIENT}"),
            format!("Tool 'send_email' failed with RelayUnavailable {TRANSIENT}"),
        ]
    );
}

#[tokio::test]
async fn hand_built_failures_and_argument_errors_take_hints() {
    let shown = shown(
        vec![
            call("c1", "post_ledger", "locked"),
            call("c2", "post_ledger", "closed"),
            call("c3", "post_ledger", "argument"),
        ],
        ToolFailureOptions::default(),
    )
    .await;
    assert_eq!(
        shown,
        [
            format!("Tool 'post_ledger' failed with LedgerLocked {TRANSIENT}"),
            format!("Tool 'post_ledger' failed with LockHeld {PERMANENT}"),
            format!(
                "Invalid arguments for tool 'post_ledger': the period is closed; post to the next \
                 period {PERMANENT}"
            ),
        ]
    );
}

#[tokio::test]
async fn with_include_error_message_the_hint_comes_before_the_message() {
    let shown = shown(
        vec![call("c1", "charge_card", "unavailable")],
        ToolFailureOptions::default().include_error_message(true),
    )
    .await;
    // The message is there only because the caller opted in; the hint stays fixed text.
    assert_eq!(
        shown,
        [format!(
            "Tool 'charge_card' failed with GatewayError::Unavailable {TRANSIENT}: gateway 503 \
             from pay-7.internal, token secret {CANARY}"
        )]
    );
}

#[tokio::test]
async fn the_caller_keeps_the_whole_error_beside_the_hinted_line() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "charge_card", json!({"case": "unavailable"})),
        ModelResponse::text("The gateway is down; try again later."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(ChargeCard)
        .build()
        .unwrap();

    let result = agent.run("Charge").await.unwrap();

    let failure = &result.tool_failures[0];
    assert_eq!(failure.kind, "GatewayError::Unavailable");
    let error = failure.error.downcast_ref::<GatewayError>().unwrap();
    assert!(matches!(error, GatewayError::Unavailable(token) if token.contains(CANARY)));
    // Nothing the model was sent holds the message.
    for request in model.requests() {
        let sent = serde_json::to_string(&request).unwrap();
        assert!(!sent.contains(CANARY), "{sent}");
    }
}

#[test]
fn the_derived_hints_are_on_the_disclose_trait_and_on_tool_error() {
    let unavailable = GatewayError::Unavailable(CANARY.into());
    assert_eq!(unavailable.retry_hint(), Some(RetryHint::Transient));
    assert_eq!(
        GatewayError::Declined(CANARY.into()).retry_hint(),
        Some(RetryHint::Permanent)
    );
    assert_eq!(GatewayError::Protocol(CANARY.into()).retry_hint(), None);
    assert_eq!(
        ShippingError::Throttled(CANARY.into()).retry_hint(),
        Some(RetryHint::Transient)
    );
    assert_eq!(
        RelayUnavailable(CANARY.into()).retry_hint(),
        Some(RetryHint::Transient)
    );
    // A boxed error is disclosed as the error it holds, hint included.
    assert_eq!(
        Box::new(GatewayError::Declined(CANARY.into())).retry_hint(),
        Some(RetryHint::Permanent)
    );

    let error = ToolError::from_disclose(unavailable);
    assert_eq!(error.retry_hint(), Some(RetryHint::Transient));
    assert!(!error.is_fatal());
    assert_eq!(
        error.model_text("charge_card", false),
        format!("Tool 'charge_card' failed with GatewayError::Unavailable {TRANSIENT}")
    );
    let argument = ToolError::from_disclose(GatewayError::UnknownCard("card_9".into()));
    assert!(argument.is_argument());
    assert_eq!(argument.retry_hint(), Some(RetryHint::Permanent));

    assert_eq!(
        RetryHint::Transient.text(),
        "transient: retrying later may succeed"
    );
    assert_eq!(
        RetryHint::Permanent.text(),
        "permanent: retrying the same call will not help"
    );
}

#[tokio::test]
async fn an_exact_repeat_is_told_it_failed_again_and_which_call_it_repeats() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "charge_card", json!({"case": "unavailable"})),
        ModelResponse::tool_call("c2", "charge_card", json!({"case": "unavailable"})),
        ModelResponse::text("The gateway is still down."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(ChargeCard)
        .build()
        .unwrap();

    agent.run("Charge").await.unwrap();

    let requests = model.requests();
    assert_eq!(
        last_tool_result(&requests[1]).content,
        format!("Tool 'charge_card' failed with GatewayError::Unavailable {TRANSIENT}")
    );
    assert_eq!(
        last_tool_result(&requests[2]).content,
        "Tool 'charge_card' failed again the same way as call 'c1' with the same arguments"
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_says_how_long_the_tool_had_and_that_its_effect_is_unknown() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "settle", json!({})),
        ModelResponse::text("Settlement may or may not have happened."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(Settle)
        .failure_options(ToolFailureOptions::default().timeout(Duration::from_secs(5)))
        .build()
        .unwrap();

    let result = agent.run("Settle").await.unwrap();

    let text =
        "Tool 'settle' timed out after 5s and was stopped; whether it took effect is unknown";
    assert_eq!(last_tool_result(&model.requests()[1]).content, text);
    assert_eq!(result.tool_failures[0].shown_to_model, text);
    assert!(result.tool_failures[0].timed_out);
}
