//! A `pattern` whose match cannot finish, in an agent with default settings:
//! `^((?!\d)\w+\s?)+$` against 40 letters and a `!`. The value is refused as one that could not
//! be checked, and the tool does not run (it ran with the value before: the engine gave up,
//! and the outcome was dropped). A call of 2,000 such strings is refused by the check's budget
//! (98 s of matching in a release build before, where the call's time limit could not stop
//! it), and a costly check is made where the call's time limit covers it.

use std::sync::Arc;
use std::time::Duration;

use reticent::{Agent, AgentResult, ModelResponse, ScriptedModel, ToolFailureOptions};
use reticent_tests::pattern::{GAVE_UP, Names, evil_string, evil_strings, guarded};
use reticent_tests::transcript::shown_texts;
use serde_json::{Value, json};

/// A hang guard only: the checks below take a second or two in a debug build.
const GUARD: Duration = Duration::from_secs(120);

/// Runs one call of `tool` with `arguments` in an agent built as `configure` says.
async fn run(
    names: &Arc<Names>,
    tool: &str,
    arguments: Value,
    configure: impl FnOnce(reticent::AgentBuilder) -> reticent::AgentBuilder,
) -> AgentResult {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", tool, arguments),
        ModelResponse::text("done"),
    ]);
    let agent = configure(Agent::builder(model).toolbox(Arc::clone(names)))
        .build()
        .unwrap();
    agent.run("go").await.unwrap()
}

/// Proves: a value the engine gives up on is refused with an argument error that says it could
/// not be checked against the pattern, and the tool never runs.
#[test]
fn a_value_the_pattern_cannot_be_checked_against_is_refused_and_the_tool_does_not_run() {
    guarded(GUARD, async {
        let names = Arc::new(Names::default());
        let result = run(&names, "greet", json!({"name": evil_string()}), |b| b).await;
        assert_eq!(
            shown_texts(&result.messages)[0],
            format!("Invalid arguments for tool 'greet': argument `name`: {GAVE_UP}")
        );
        assert_eq!(
            names.runs(),
            0,
            "the tool ran with a value that was not checked"
        );
        let failure = &result.tool_failures[0];
        assert_eq!(failure.kind, "argument");
        // a name it can check is checked as any: refused when it does not match, run when it does
        let result = run(&names, "greet", json!({"name": "4ever"}), |b| b).await;
        assert!(
            shown_texts(&result.messages)[0]
                .ends_with("\"4ever\" does not match the pattern \"^((?!\\\\d)\\\\w+\\\\s?)+$\""),
            "{:?}",
            shown_texts(&result.messages)
        );
        let result = run(&names, "greet", json!({"name": "Ada Lovelace"}), |b| b).await;
        assert_eq!(shown_texts(&result.messages)[0], "hello Ada Lovelace");
        assert_eq!(names.runs(), 1);
    });
}

/// Proves: 2,000 distinct strings the engine gives up on are refused within the check's bound,
/// and the tool never runs.
#[test]
fn many_strings_are_refused_within_the_checks_bound() {
    guarded(GUARD, async {
        let names = Arc::new(Names::default());
        let arguments = json!({"names": evil_strings(2000)});
        let result = run(&names, "greet_all", arguments, |b| b).await;
        assert_eq!(
            shown_texts(&result.messages)[0],
            format!("Invalid arguments for tool 'greet_all': argument `names[0]`: {GAVE_UP}")
        );
        assert_eq!(names.runs(), 0);
        assert_eq!(result.tool_failures[0].kind, "argument");
    });
}

/// Proves: a costly check is made where the call's time limit covers it: the limit stops the
/// call while the check goes on (on the blocking pool, within its bound), and the tool never
/// runs.
#[test]
fn the_calls_time_limit_covers_a_costly_check() {
    guarded(GUARD, async {
        let names = Arc::new(Names::default());
        let arguments = json!({"names": evil_strings(2000)});
        let limit = Duration::from_millis(20);
        let result = run(&names, "greet_all", arguments, |b| {
            b.failure_options(ToolFailureOptions::default().timeout(Some(limit)))
        })
        .await;
        let failure = &result.tool_failures[0];
        assert_eq!(failure.kind, "timeout");
        assert!(failure.timed_out);
        assert_eq!(names.runs(), 0);
    });
}
