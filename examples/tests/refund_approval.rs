//! The refund-approval example, run as a test: the run stops before the refund, the saved
//! state resumes in a second agent, and the refund is issued once when approved and never when
//! rejected.

#[allow(dead_code)]
#[path = "../examples/refund_approval.rs"]
mod refund_approval;

use std::sync::Arc;

use refund_approval::{Scripted, in_process, report};
use reticent::{StopReason, agent::PendingReason, failures::EffectOutcome};
use reticent_examples::support_desk::SupportDesk;

#[tokio::test]
async fn an_approved_refund_is_issued_once_after_the_run_resumes() {
    let desk = Arc::new(SupportDesk::new());
    let (paused, saved, done) = in_process(Arc::new(Scripted), Arc::clone(&desk), true)
        .await
        .unwrap();
    assert_eq!(paused.stop_reason, StopReason::AwaitingApproval);
    assert_eq!(paused.pending.len(), 1);
    assert_eq!(paused.pending[0].tool, "issue_refund");
    assert_eq!(paused.pending[0].reason, PendingReason::Approval);
    assert!(saved.contains("\"issue_refund\""));

    assert_eq!(done.stop_reason, StopReason::Completed);
    assert_eq!(
        done.output,
        "Your refund of 129.00 for ORD-1042 is on its way to your card."
    );
    assert_eq!(desk.refunds_issued(), 1);
    assert_eq!(done.effects.len(), 1);
    assert_eq!(done.effects[0].outcome, EffectOutcome::Applied);
    assert!(report(&done).contains("[call_2] ok: refunded 12900 cents on ORD-1042"));
}

#[tokio::test]
async fn a_rejected_refund_is_never_issued_and_the_model_is_told() {
    let desk = Arc::new(SupportDesk::new());
    let (_, _, done) = in_process(Arc::new(Scripted), Arc::clone(&desk), false)
        .await
        .unwrap();
    assert_eq!(desk.refunds_issued(), 0);
    assert!(report(&done).contains("[call_2] error: Tool 'issue_refund' was not approved"));
    assert_eq!(done.effects[0].outcome, EffectOutcome::Failed);
    assert!(done.output.starts_with("I couldn't issue the refund"));
}
