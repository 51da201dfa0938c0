//! The idempotent-charge example, run as a test: the charge cut off after the gateway took it
//! is found by its key when the run resumes, and the card is charged once.

#[allow(dead_code)]
#[path = "../examples/idempotent_charge.rs"]
mod idempotent_charge;

use idempotent_charge::{GATEWAY, cut_off, resumed};
use reticent::failures::EffectOutcome;
use reticent::tool::Reconciled;

#[tokio::test]
async fn a_charge_cut_off_after_it_was_taken_is_not_taken_again() {
    let saved = cut_off().await;
    assert_eq!(GATEWAY.lock().unwrap().len(), 1);
    let done = resumed(&saved).await;
    assert_eq!(done.output, "ORD-1042 is paid.");
    assert_eq!(GATEWAY.lock().unwrap().len(), 1, "charged once");
    assert_eq!(done.effects[0].outcome, EffectOutcome::Applied);
    assert!(matches!(
        done.effects[0].reconciled,
        Some(Reconciled::Applied(_))
    ));
}
