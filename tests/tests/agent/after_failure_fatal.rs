//! Fatal failures: `#[disclose(fatal)]` (on a type or a variant) and `Failure::fatal` end the
//! run with `AgentError::ToolFailed` even under `ReportToModel`, and so does a harness fault: a
//! tool output that cannot be serialized.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use reticent::{
    Agent, AgentError, AgentEvent, Disclose, Failure, ModelResponse, ScriptedModel, ToolCall,
    ToolError, ToolFailureMode, failures::EffectOutcome,
};
use reticent_tests::spans::capture_spans;
use reticent_tests::transcript::tool_results;
use serde_json::json;

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum PolicyError {
    #[error("policy engine at opa.internal:8181 is unreachable")]
    #[disclose(fatal)]
    EngineDown,
    #[error("amount {0} is over the daily limit")]
    OverLimit(u64),
    #[error("the sanctions list could not be loaded: {0}")]
    #[disclose(fatal, permanent)]
    SanctionsUnavailable(String),
}

/// Every variant is fatal.
#[derive(Debug, thiserror::Error, reticent::Disclose)]
#[disclose(fatal)]
enum AuditError {
    #[error("the audit log is full")]
    LogFull,
}

/// Check a payment against policy.
#[reticent::tool(read_only)]
fn check_policy(amount_cents: u64) -> Result<String, PolicyError> {
    match amount_cents {
        0 => Err(PolicyError::EngineDown),
        1 => Err(PolicyError::SanctionsUnavailable("s3://lists/2024".into())),
        n if n > 10_000 => Err(PolicyError::OverLimit(n)),
        _ => Ok("allowed".into()),
    }
}

/// Write the audit log.
#[reticent::tool]
fn audit() -> Result<(), AuditError> {
    Err(AuditError::LogFull)
}

/// Lock the account; builds a fatal failure by hand.
#[reticent::tool]
fn lock_account() -> Result<(), Failure> {
    Err(Failure::new("LockLost", std::io::Error::other("lease expired")).fatal())
}

/// Count transfers between pairs of accounts.
#[reticent::tool]
fn pair_counts() -> HashMap<(u8, u8), u8> {
    HashMap::from([((1, 2), 3)])
}

/// Say hello.
#[reticent::tool(read_only)]
fn hello() -> String {
    "hello".into()
}

fn agent(model: &ScriptedModel) -> reticent::AgentBuilder {
    Agent::builder(model.clone())
        .tool(CheckPolicy)
        .tool(Audit)
        .tool(LockAccount)
        .tool(PairCounts)
        .tool(Hello)
}

#[tokio::test]
async fn a_fatal_variant_ends_a_report_to_model_run() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "check_policy", json!({"amount_cents": 0})),
        ModelResponse::text("never requested"),
    ]);
    let agent = agent(&model)
        .failure_mode(ToolFailureMode::ReportToModel)
        .build()
        .unwrap();

    let error = agent.run("Pay").await.unwrap_err();

    assert_eq!(
        error.to_string(),
        "the tool `check_policy` failed with PolicyError::EngineDown (call c1)"
    );
    let AgentError::ToolFailed { failure, partial } = error else {
        panic!("expected ToolFailed, got {error:?}");
    };
    assert_eq!(failure.kind, "PolicyError::EngineDown");
    assert!(failure.error.downcast_ref::<PolicyError>().is_some());
    // The model is not called again, and the partial transcript ends with the result it would
    // have been shown.
    assert_eq!(model.requests().len(), 1);
    assert_eq!(partial.turns, 1);
    assert_eq!(partial.tool_failures.len(), 1);
    let results = tool_results(&partial.messages);
    assert_eq!(results.len(), 1);
    assert_eq!(
        results[0].content,
        "Tool 'check_policy' failed with PolicyError::EngineDown"
    );
    assert!(results[0].is_error);
}

#[tokio::test]
async fn a_variant_that_is_not_fatal_is_reported_to_the_model() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "check_policy", json!({"amount_cents": 50_000})),
        ModelResponse::text("That is over the daily limit."),
    ]);

    let result = agent(&model).build().unwrap().run("Pay").await.unwrap();

    assert_eq!(result.output, "That is over the daily limit.");
    assert_eq!(result.tool_failures[0].kind, "PolicyError::OverLimit");
}

#[tokio::test]
async fn a_fatal_type_a_fatal_variant_with_a_hint_and_a_hand_built_fatal_failure_all_end_the_run() {
    for (tool, args, kind, shown) in [
        (
            "audit",
            json!({}),
            "AuditError::LogFull",
            "Tool 'audit' failed with AuditError::LogFull",
        ),
        (
            "check_policy",
            json!({"amount_cents": 1}),
            "PolicyError::SanctionsUnavailable",
            "Tool 'check_policy' failed with PolicyError::SanctionsUnavailable (permanent: \
             retrying the same call will not help)",
        ),
        (
            "lock_account",
            json!({}),
            "LockLost",
            "Tool 'lock_account' failed with LockLost",
        ),
    ] {
        let model = ScriptedModel::new(vec![
            ModelResponse::tool_call("c1", tool, args),
            ModelResponse::text("never requested"),
        ]);

        let error = agent(&model).build().unwrap().run("Go").await.unwrap_err();

        let AgentError::ToolFailed { failure, .. } = error else {
            panic!("{tool}: expected ToolFailed, got {error:?}");
        };
        assert_eq!(failure.kind, kind);
        assert_eq!(failure.shown_to_model, shown);
        assert_eq!(model.requests().len(), 1, "{tool}");
    }
}

#[tokio::test]
async fn the_other_calls_of_the_fatal_turn_are_recorded() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new("c1", "hello", json!({})),
            ToolCall::new("c2", "audit", json!({})),
            ToolCall::new("c3", "check_policy", json!({"amount_cents": 0})),
        ]),
        ModelResponse::text("never requested"),
    ]);

    let error = agent(&model).build().unwrap().run("Go").await.unwrap_err();

    let AgentError::ToolFailed { failure, partial } = error else {
        panic!("expected ToolFailed, got {error:?}");
    };
    // The first fatal failure in call order ends the run; the second is recorded beside it.
    assert_eq!(failure.call_id, "c2");
    let failed: Vec<&str> = partial
        .tool_failures
        .iter()
        .map(|f| f.call_id.as_str())
        .collect();
    assert_eq!(failed, ["c2", "c3"]);
    let results: Vec<&str> = tool_results(&partial.messages)
        .iter()
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(results, ["c1", "c2", "c3"]);
    assert_eq!(partial.effects.len(), 1);
    assert_eq!(partial.effects[0].outcome, EffectOutcome::Failed);
}

#[tokio::test]
async fn an_output_that_cannot_be_serialized_ends_the_run_loudly() {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "pair_counts", json!({})),
        ModelResponse::text("never requested"),
    ]);

    let error = agent(&model)
        .build()
        .unwrap()
        .run("Count")
        .await
        .unwrap_err();

    let AgentError::ToolFailed { failure, partial } = error else {
        panic!("expected ToolFailed, got {error:?}");
    };
    assert_eq!(failure.kind, "OutputError");
    assert_eq!(
        failure.shown_to_model,
        "Tool 'pair_counts' failed with OutputError"
    );
    // The caller is told what went wrong.
    assert_eq!(
        failure.error_chain(),
        "the tool's output could not be serialized to JSON: key must be a string"
    );
    assert_eq!(model.requests().len(), 1);
    // The tool's body ran to completion: whatever it did, it did.
    assert_eq!(partial.effects.len(), 1);
    assert_eq!(partial.effects[0].outcome, EffectOutcome::Applied);
}

#[tokio::test]
async fn a_fatal_failure_is_on_the_stream_and_fails_the_run_span() {
    let (spans, _guard) = capture_spans();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "audit", json!({})),
        ModelResponse::text("never requested"),
    ]);
    let agent = agent(&model).build().unwrap();

    let events: Vec<AgentEvent> = agent.run_stream("Go").collect().await;

    let failed: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolFailed(failure) => Some(failure.kind.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(failed, ["AuditError::LogFull"]);
    assert!(matches!(
        events.last(),
        Some(AgentEvent::Finished(Err(AgentError::ToolFailed { .. })))
    ));
    let run = spans.one("invoke_agent");
    assert_eq!(run.field("otel.status_code"), Some("ERROR"));
    assert_eq!(run.field("error.type"), Some("tool_failed"));
}

#[test]
fn fatal_is_on_the_disclose_trait_and_on_tool_error() {
    assert!(PolicyError::EngineDown.is_fatal());
    assert!(!PolicyError::OverLimit(1).is_fatal());
    assert!(AuditError::LogFull.is_fatal());
    assert!(Arc::new(AuditError::LogFull).is_fatal());
    assert!(ToolError::from_disclose(PolicyError::EngineDown).is_fatal());
    assert!(!ToolError::from_disclose(PolicyError::OverLimit(1)).is_fatal());
    let failure = Failure::from_error(std::io::Error::other("x"));
    assert!(!failure.is_fatal());
    assert!(failure.fatal().is_fatal());
}
