//! `Tool::call_text_output`: the output written straight to text, as an MCP server sends a
//! result's text content. Whatever the tool returns, it is `call` with the output then shown as
//! text (a string as it is, anything else as compact JSON): the same text, the same failures,
//! the same refusals — for `#[tool]` fns sync and async, `#[tools]` methods, and tools written
//! by hand (the trait's provided method).

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::FutureExt;
use reticent::{Disclose, Tool, ToolContext, ToolDefinition, ToolError, Toolbox, tool::ToolFuture};
use serde::Serialize;
use serde_json::{Value, json};

const CANARY: &str = "CANARY-7e3c-postgres://admin:hunter2@10.0.0.7/prod";

#[derive(Debug, Serialize)]
struct Booking {
    id: String,
    nights: u32,
    notes: Option<String>,
}

#[derive(Debug, Serialize)]
struct Dsn {
    dsn: String,
}

#[derive(Debug, thiserror::Error, Disclose)]
enum BookingError {
    #[error("no room {0}; rooms look like R-12")]
    #[disclose(argument)]
    NoRoom(String),
    #[error("the ledger at {0} refused")]
    Ledger(String),
}

/// A struct.
#[reticent::tool]
fn book(nights: u32) -> Booking {
    Booking {
        id: "B-1".into(),
        nights,
        notes: Some("quiet \"room\"\n".into()),
    }
}

/// A string, with characters JSON escapes.
#[reticent::tool]
async fn greet(name: String) -> String {
    format!("hello \"{name}\"\n\u{1F600}")
}

/// Nothing.
#[reticent::tool]
fn forget(_id: String) {}

/// A number, through an alias of `Result`.
type Outcome<T> = Result<T, BookingError>;

/// A number, or a failure of the kind asked for.
#[reticent::tool]
async fn count(
    /// `ok`, `argument` or `ledger`.
    how: String,
) -> Outcome<u64> {
    match how.as_str() {
        "ok" => Ok(7),
        "argument" => Err(BookingError::NoRoom("R-x".into())),
        _ => Err(BookingError::Ledger(CANARY.into())),
    }
}

/// A `Result` deeper in the output, the secret in its error.
#[reticent::tool]
fn nested() -> Vec<Result<u8, Dsn>> {
    vec![Ok(1), Err(Dsn { dsn: CANARY.into() })]
}

/// A map whose keys are not strings: it cannot be written as JSON.
#[reticent::tool]
fn keyed() -> BTreeMap<(u8, u8), u8> {
    BTreeMap::from([((1, 2), 3)])
}

/// A toolbox.
struct Desk {
    prefix: String,
}

#[reticent::tools]
impl Desk {
    /// A method.
    #[tool]
    async fn label(&self, n: u32) -> String {
        format!("{}-{n}", self.prefix)
    }

    /// A method with a struct output.
    #[tool]
    fn room(&self, nights: u32) -> Result<Booking, BookingError> {
        Ok(Booking {
            id: self.prefix.clone(),
            nights,
            notes: None,
        })
    }
}

/// A tool written by hand: `call_text_output` is the trait's provided method.
struct HandWritten(ToolDefinition);

impl Tool for HandWritten {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }

    fn call(&self, args: Value, _cx: ToolContext) -> ToolFuture<'_> {
        ToolFuture::new(async move {
            match args.get("say") {
                Some(say) => Ok(say.clone()),
                None => Err(ToolError::from(reticent::ArgumentError::new(
                    "`say` is required",
                ))),
            }
        })
    }
}

fn cx() -> ToolContext {
    ToolContext::new("call-1", "tool")
}

/// What `call` gives, with the output shown as text; the failure as the model would see it.
fn via_value(tool: &dyn Tool, args: &Value) -> Result<String, String> {
    match tool.call(args.clone(), cx()).now_or_never().expect("ready") {
        Ok(Value::String(text)) => Ok(text),
        Ok(other) => Ok(serde_json::to_string(&other).unwrap()),
        Err(error) => Err(shown(tool, error)),
    }
}

fn via_text(tool: &dyn Tool, args: &Value) -> Result<String, String> {
    tool.call_text_output(args.clone(), cx())
        .now_or_never()
        .expect("ready")
        .map_err(|error| shown(tool, error))
}

fn shown(tool: &dyn Tool, error: ToolError) -> String {
    format!(
        "{} | {} | fatal={}",
        error.model_text(&tool.definition().name, false),
        error.kind(),
        error.is_fatal()
    )
}

#[test]
fn the_text_is_calls_output_shown_as_text() {
    let desk: Vec<Arc<dyn Tool>> = Arc::new(Desk { prefix: "D".into() }).tools();
    let hand = HandWritten(ToolDefinition::new(
        "hand",
        "Says what it is told.",
        json!({"type": "object"}),
    ));
    let cases: Vec<(&dyn Tool, Value, Result<&str, ()>)> = vec![
        (
            &Book,
            json!({"nights": 2}),
            Ok(r#"{"id":"B-1","nights":2,"notes":"quiet \"room\"\n"}"#),
        ),
        (
            &Greet,
            json!({"name": "Ada"}),
            Ok("hello \"Ada\"\n\u{1F600}"),
        ),
        (&Forget, json!({"_id": "x"}), Ok("null")),
        (&Count, json!({"how": "ok"}), Ok("7")),
        (&*desk[0], json!({"n": 4}), Ok("D-4")),
        (
            &*desk[1],
            json!({"nights": 1}),
            Ok(r#"{"id":"D","nights":1,"notes":null}"#),
        ),
        (&hand, json!({"say": "hi"}), Ok("hi")),
        (&hand, json!({"say": {"a": [1, 2]}}), Ok(r#"{"a":[1,2]}"#)),
        // failures: the same as `call`'s
        (&Count, json!({"how": "argument"}), Err(())),
        (&Count, json!({"how": "ledger"}), Err(())),
        (&Book, json!({"nights": "two"}), Err(())),
        (&Book, json!({}), Err(())),
        (&Book, json!([1]), Err(())),
        (&Greet, json!({"name": "Ada", "extra": 1}), Err(())),
        (&Nested, json!({}), Err(())),
        (&Keyed, json!({}), Err(())),
        (&hand, json!({}), Err(())),
    ];
    for (tool, args, expected) in cases {
        let name = &tool.definition().name;
        let text = via_text(tool, &args);
        assert_eq!(text, via_value(tool, &args), "{name} {args}");
        match expected {
            Ok(expected) => assert_eq!(text.as_deref(), Ok(expected), "{name} {args}"),
            Err(()) => assert!(text.is_err(), "{name} {args}: {text:?}"),
        }
    }
}

#[test]
fn failures_as_text_withhold_what_call_withholds() {
    let ledger = via_text(&Count, &json!({"how": "ledger"})).unwrap_err();
    assert_eq!(
        ledger,
        "Tool 'count' failed with BookingError::Ledger | BookingError::Ledger | fatal=false"
    );
    let argument = via_text(&Count, &json!({"how": "argument"})).unwrap_err();
    assert!(
        argument.contains("no room R-x; rooms look like R-12"),
        "{argument}"
    );

    // A `Result` in the output is refused before any of it is written: nothing of the
    // secret, and the caller's error says why.
    let error = Nested
        .call_text_output(json!({}), cx())
        .now_or_never()
        .unwrap()
        .unwrap_err();
    assert!(error.is_fatal());
    assert_eq!(error.kind(), "OutputError");
    let ToolError::Failed(failure) = &error else {
        panic!("an output error is a failure: {error:?}")
    };
    let output_error = failure
        .error()
        .downcast_ref::<reticent::failures::OutputError>()
        .expect("an OutputError");
    assert!(output_error.holds_result());
    for text in [
        error.model_text("nested", false),
        error.model_text("nested", true),
        format!("{error:?}"),
    ] {
        assert!(!text.contains("CANARY"), "{text}");
    }
}
