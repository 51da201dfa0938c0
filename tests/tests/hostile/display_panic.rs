//! An error type whose `Display` panics is the developer's bug, but formatting it happens
//! outside the tool's call (for the caller's record, the span, and the opt-in message): the
//! run must go on and say what happened.

use std::fmt;

use reticent::{Agent, ModelResponse, ScriptedModel, StopReason, ToolFailureOptions};
use serde_json::json;

#[derive(Debug)]
struct HauntedError;

impl fmt::Display for HauntedError {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        panic!("Display of HauntedError is broken")
    }
}

impl std::error::Error for HauntedError {}

/// Always fails with an error that cannot be displayed.
#[reticent::tool]
fn haunted() -> Result<String, HauntedError> {
    Err(HauntedError)
}

async fn run(include_error_message: bool) -> reticent::AgentResult {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "haunted", json!({})),
        ModelResponse::text("The tool failed."),
    ]);
    Agent::builder(model)
        .tool(Haunted)
        .failure_options(ToolFailureOptions::default().include_error_message(include_error_message))
        .build()
        .unwrap()
        .run("go")
        .await
        .expect("the run goes on")
}

#[tokio::test]
async fn a_panicking_display_does_not_end_the_run() {
    for include_error_message in [false, true] {
        let result = run(include_error_message).await;
        assert_eq!(result.stop_reason, StopReason::Completed);
        assert_eq!(result.output, "The tool failed.");
        let failure = &result.tool_failures[0];
        assert_eq!(failure.kind, "HauntedError");
        assert_eq!(
            failure.error_chain(),
            "(the error's Display implementation panicked)"
        );
        let expected = if include_error_message {
            "Tool 'haunted' failed with HauntedError: (the error's Display implementation panicked)"
        } else {
            "Tool 'haunted' failed with HauntedError"
        };
        assert_eq!(failure.shown_to_model, expected);
    }
}
