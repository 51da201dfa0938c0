use reticent::{Disclose, Disclosure, Tool, ToolContext, failures::RetryHint};
use serde_json::json;

/// Transient unless a variant says otherwise.
#[derive(Debug, thiserror::Error, Disclose)]
#[disclose(transient)]
enum GatewayError {
    #[error("gateway unavailable: {0}")]
    Unavailable(String),
    #[error("card declined: {0}")]
    #[disclose(permanent)]
    Declined(String),
    #[error("throttled by {0}")]
    #[disclose(kind = "RateLimited", transient)]
    Throttled(String),
    #[error("no card {0}; card ids look like card_1234")]
    #[disclose(argument, permanent)]
    UnknownCard(String),
    #[error("the fraud check is down: {0}")]
    #[disclose(fatal)]
    FraudCheckDown(String),
}

/// Fatal as a whole, with a hint.
#[derive(Debug, thiserror::Error, Disclose)]
#[error("the audit log is full")]
#[disclose(fatal, permanent)]
struct AuditLogFull;

/// Hints set in separate attributes.
#[derive(Debug, thiserror::Error, Disclose)]
enum MailError {
    #[error("relay down")]
    #[disclose(kind = "RelayDown")]
    #[disclose(transient)]
    RelayDown,
}

/// A generic error with hints: generic over the replica's error, which only a variant that is
/// not an argument error holds.
#[derive(Debug, thiserror::Error, Disclose)]
enum LookupError<E: std::error::Error + 'static> {
    #[error("no record {0:?}")]
    #[disclose(argument, permanent)]
    NotFound(u32),
    #[error("replica lagging")]
    #[disclose(transient)]
    Lagging(#[source] E),
}

/// An empty error type.
#[derive(Debug, thiserror::Error, Disclose)]
#[disclose(transient)]
enum Never {}

/// Charge a card.
#[reticent::tool]
fn charge_card(case: String) -> Result<(), GatewayError> {
    match case.as_str() {
        "down" => Err(GatewayError::Unavailable("pay-7".into())),
        "fraud" => Err(GatewayError::FraudCheckDown("pay-7".into())),
        _ => Err(GatewayError::UnknownCard(case)),
    }
}

fn main() {
    let hint = |e: GatewayError| e.retry_hint();
    assert_eq!(
        hint(GatewayError::Unavailable(String::new())),
        Some(RetryHint::Transient)
    );
    assert_eq!(
        hint(GatewayError::Declined(String::new())),
        Some(RetryHint::Permanent)
    );
    assert_eq!(
        hint(GatewayError::Throttled(String::new())),
        Some(RetryHint::Transient)
    );
    assert_eq!(
        hint(GatewayError::UnknownCard(String::new())),
        Some(RetryHint::Permanent)
    );
    assert_eq!(
        hint(GatewayError::FraudCheckDown(String::new())),
        Some(RetryHint::Transient)
    );
    assert!(GatewayError::FraudCheckDown(String::new()).is_fatal());
    assert!(!GatewayError::Unavailable(String::new()).is_fatal());
    assert_eq!(
        GatewayError::Throttled(String::new()).disclosure(),
        Disclosure::Kind("RateLimited")
    );

    assert_eq!(AuditLogFull.retry_hint(), Some(RetryHint::Permanent));
    assert!(AuditLogFull.is_fatal());
    assert_eq!(AuditLogFull.disclosure(), Disclosure::Kind("AuditLogFull"));

    assert_eq!(
        MailError::RelayDown.retry_hint(),
        Some(RetryHint::Transient)
    );
    assert_eq!(
        MailError::RelayDown.disclosure(),
        Disclosure::Kind("RelayDown")
    );
    assert!(!MailError::RelayDown.is_fatal());

    assert_eq!(
        LookupError::<std::io::Error>::NotFound(7).retry_hint(),
        Some(RetryHint::Permanent)
    );
    assert_eq!(
        LookupError::Lagging(std::io::Error::other("replica 2 at 10.0.0.9")).retry_hint(),
        Some(RetryHint::Transient)
    );

    let _: Option<Never> = None;

    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let call = |case: &str| {
        rt.block_on(ChargeCard.call(json!({"case": case}), ToolContext::default()))
            .unwrap_err()
    };
    let down = call("down");
    assert!(!down.is_fatal());
    assert_eq!(
        down.model_text("charge_card", false),
        "Tool 'charge_card' failed with GatewayError::Unavailable (transient: retrying later may succeed)"
    );
    assert!(call("fraud").is_fatal());
    assert_eq!(
        call("card_9").model_text("charge_card", false),
        "Invalid arguments for tool 'charge_card': no card card_9; card ids look like card_1234 (permanent: retrying the same call will not help)"
    );
}
