//! Hostile inputs, table-driven: arguments and provider responses built to break the loop.
//! Every one must end in a clear result (an answer, or an error whose text says what was
//! wrong), within a time limit, and every text the model is shown must stay short.
//!
//! Duplicate keys (`{"count":1,"count":2}`): JSON leaves them undefined and `serde_json` keeps
//! the last, which reticent does on every path: the agent's parse of raw argument text, the
//! OpenAI provider's parse of `function.arguments`, and the Anthropic provider's parse of the
//! body. The tool sees `count = 2`, and a duplicate whose last value is wrong is refused for
//! that value, so the model is told what the tool actually read.
//!
//! Duplicate call ids in one turn: every call runs and is answered under the id it came with,
//! in call order, and each failure is recorded once. Arguments nested deeper than 128 levels
//! are refused whether they come as text or as a value built in memory, which the loop cuts
//! one level past the limit when the response arrives, so that nothing recurses through it.

use std::time::Duration;

use reticent::providers::__fuzz::{parse_anthropic, parse_openai};
use reticent::providers::anthropic::Anthropic;
use reticent::providers::openai::OpenAi;
use reticent::{
    Agent, AgentResult, Message, Model, ModelRequest, ModelResponse, ScriptedModel, ToolCall,
    ToolResult,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// No case may take longer than this: a case that does has hung.
const LIMIT: Duration = Duration::from_secs(20);

const EIGHT_MIB: usize = 8 << 20;

/// The longest text the model may be shown about one call, besides the tool's name.
const MAX_SHOWN: usize = 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Window {
    from: u32,
    to: u32,
}

/// Decode one of every kind of parameter and say what was decoded, briefly.
#[reticent::tool]
#[allow(clippy::too_many_arguments)]
fn probe(
    /// Free text.
    text: Option<String>,
    /// A small count.
    count: Option<u32>,
    /// A signed 64-bit number.
    big: Option<i64>,
    /// A ratio.
    ratio: Option<f64>,
    /// A flag.
    flag: Option<bool>,
    /// Labels.
    tags: Option<Vec<String>>,
    /// A range.
    window: Option<Window>,
) -> String {
    let mut out = Vec::new();
    if let Some(text) = text {
        out.push(format!("text: {} bytes", text.len()));
    }
    if let Some(count) = count {
        out.push(format!("count={count}"));
    }
    if let Some(big) = big {
        out.push(format!("big={big}"));
    }
    if let Some(ratio) = ratio {
        out.push(format!("ratio={ratio:e}"));
    }
    if let Some(flag) = flag {
        out.push(format!("flag={flag}"));
    }
    if let Some(tags) = tags {
        out.push(format!("tags: {}", tags.len()));
    }
    if let Some(Window { from, to }) = window {
        out.push(format!("window={from}..{to}"));
    }
    if out.is_empty() {
        "nothing".to_owned()
    } else {
        out.join(", ")
    }
}

// ---- helpers ---------------------------------------------------------------------------------

/// Runs one agent turn with `calls` and a final answer, within [`LIMIT`].
async fn run_calls(calls: Vec<ToolCall>) -> AgentResult {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(calls),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(Probe)
        .build()
        .expect("the agent builds");
    tokio::time::timeout(LIMIT, agent.run("go"))
        .await
        .expect("the run hung")
        .expect("a bad call does not end the run")
}

/// Runs `run_calls` on a thread of its own with the standard 2 MiB stack, so that a value
/// that exhausts the stack fails the test instead of hiding in the harness's headroom.
fn run_calls_on_small_stack(calls: Vec<ToolCall>) -> AgentResult {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .unwrap()
                .block_on(run_calls(calls))
        })
        .unwrap()
        .join()
        .expect("the run panicked or overflowed its stack")
}

fn tool_results(result: &AgentResult) -> Vec<&ToolResult> {
    result
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some(r),
            _ => None,
        })
        .collect()
}

/// Asserts that a text shown to the model about a call of `tool` is short.
fn assert_bounded(case: &str, text: &str, tool: &str) {
    assert!(
        text.len() < MAX_SHOWN + tool.len(),
        "{case}: the model was shown {} bytes",
        text.len()
    );
}

/// A string of `n` bytes of `A`.
fn huge(n: usize) -> String {
    "A".repeat(n)
}

/// `depth` arrays one inside the other, built without recursion.
fn nested_arrays(depth: usize) -> Value {
    let mut value = json!("bottom");
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

/// `{key: value}`, built without `json!`, which would walk `value` recursively.
fn object(key: &str, value: Value) -> Value {
    Value::Object(Map::from_iter([(key.to_owned(), value)]))
}

/// Raw argument text, as a provider hands over text it could not parse.
fn text(raw: impl Into<String>) -> Value {
    Value::String(raw.into())
}

// ---- arguments -------------------------------------------------------------------------------

/// What the model must be shown for a call.
enum Shown {
    /// The tool ran and answered exactly this.
    Answer(&'static str),
    /// The call was refused; the text holds every fragment.
    Refused(&'static [&'static str]),
}

struct Case {
    name: &'static str,
    tool: String,
    arguments: Value,
    shown: Shown,
}

fn case(name: &'static str, arguments: Value, shown: Shown) -> Case {
    Case {
        name,
        tool: "probe".to_owned(),
        arguments,
        shown,
    }
}

#[rustfmt::skip] // one case a line
fn argument_cases() -> Vec<Case> {
    use Shown::{Answer, Refused};
    const NOT_JSON: &str = "Invalid arguments for tool 'probe': the arguments are not valid JSON";
    let mut cases = vec![
        // ---- invalid JSON text
        case("truncated text", text(r#"{"count": "#), Refused(&[NOT_JSON, "EOF while parsing"])),
        case("prose", text("count is seven"), Refused(&[NOT_JSON, "expected value", "send a JSON object"])),
        case("trailing garbage", text(r#"{"count": 1} x"#), Refused(&[NOT_JSON, "trailing characters"])),
        case("single quotes", text("{'count': 1}"), Refused(&[NOT_JSON, "key must be a string"])),
        case("empty text", text(""), Refused(&[NOT_JSON, "EOF while parsing a value"])),
        case("text of an array", text("[1, 2]"), Refused(&["arguments must be a JSON object, got an array"])),
        case("text of a string", text(r#""{\"count\": 1}""#), Refused(&["arguments must be a JSON object, got a string"])),
        case("valid text", text(r#"{"count": 7}"#), Answer("count=7")),
        // ---- not an object
        case("a number", json!(7), Refused(&["arguments must be a JSON object, got a number"])),
        case("a boolean", json!(true), Refused(&["arguments must be a JSON object, got a boolean"])),
        case("an array", json!([{"count": 1}]), Refused(&["arguments must be a JSON object, got an array"])),
        case("null", Value::Null, Answer("nothing")),
        // ---- wrong types
        case("string for u32", json!({"count": "seven"}), Refused(&["argument `count`: invalid type: string \"seven\", expected u32"])),
        case("float for u32", json!({"count": 1.5}), Refused(&["argument `count`: invalid type: floating point `1.5`, expected u32"])),
        case("negative u32", json!({"count": -1}), Refused(&["argument `count`: invalid value: integer `-1`, expected u32"])),
        case("number for bool", json!({"flag": 1}), Refused(&["argument `flag`: invalid type: integer `1`, expected a boolean"])),
        case("object for string", json!({"text": {"a": 1}}), Refused(&["argument `text`: invalid type: map, expected a string"])),
        case("mixed array", json!({"tags": ["a", 2]}), Refused(&["argument `tags[1]`: invalid type: integer `2`, expected a string"])),
        case("string for struct", json!({"window": "1..2"}), Refused(&["argument `window`", "expected struct Window"])),
        case("null for a struct field", json!({"window": {"from": null, "to": 2}}), Refused(&["argument `window.from`: invalid type: null, expected u32"])),
        // ---- unknown keys
        case("unknown key", json!({"colour": "red"}), Refused(&["unknown argument `colour`; expected one of `text`, `count`, `big`, `ratio`, `flag`, `tags`, `window`"])),
        case("empty key", json!({"": 1}), Refused(&["unknown argument ``; expected one of"])),
        case("unknown field of a closed struct", json!({"window": {"from": 1, "to": 2, "step": 1}}), Refused(&["argument `window.step`: unknown field `step`, expected `from` or `to`"])),
        case("key with a NUL", json!({"count\u{0}": 1}), Refused(&["unknown argument `count\u{0}`"])),
        // ---- duplicate keys: the last wins
        case("duplicate keys", text(r#"{"count": 1, "count": 2}"#), Answer("count=2")),
        case("duplicate keys, last valid", text(r#"{"count": "x", "count": 3}"#), Answer("count=3")),
        case("duplicate keys, last invalid", text(r#"{"count": 3, "count": "x"}"#), Refused(&["argument `count`: invalid type: string \"x\", expected u32"])),
        // ---- huge numbers
        case("1e400 as text", text(r#"{"ratio": 1e400}"#), Refused(&["Invalid arguments for tool 'probe': the arguments hold a number too large to read (number out of range"])),
        case("-1e400 as text", text(r#"{"ratio": -1e400}"#), Refused(&["number too large to read"])),
        case("1e308 fits a float", text(r#"{"ratio": 1e308}"#), Answer("ratio=1e308")),
        case("2^64 for u32", text(r#"{"count": 18446744073709551616}"#), Refused(&["argument `count`: invalid type: floating point `1.8446744073709552e+19`, expected u32"])),
        case("2^64 for i64", text(r#"{"big": 18446744073709551616}"#), Refused(&["argument `big`: invalid type: floating point `1.8446744073709552e+19`, expected i64"])),
        case("2^63 for i64", text(r#"{"big": 9223372036854775808}"#), Refused(&["argument `big`: invalid value: integer `9223372036854775808`, expected i64"])),
        case("-2^63 for i64", text(r#"{"big": -9223372036854775808}"#), Answer("big=-9223372036854775808")),
        // -2^63-1 is read as the float -2^63: it must not become i64::MIN
        case("-2^63-1 for i64", text(r#"{"big": -9223372036854775809}"#), Refused(&["argument `big`: invalid type: floating point", "expected i64"])),
        case("u64::MAX for u32", json!({"count": u64::MAX}), Refused(&["argument `count`: invalid value: integer `18446744073709551615`, expected u32"])),
        case("a 4 KiB integer", text(format!(r#"{{"big": {}}}"#, "9".repeat(4096))), Refused(&["number too large to read"])),
        // ---- escapes
        case("lone leading surrogate", text(r#"{"text": "\ud800"}"#), Refused(&[NOT_JSON, "unexpected end of hex escape"])),
        case("lone trailing surrogate", text(r#"{"text": "\udc00"}"#), Refused(&[NOT_JSON, "surrogate"])),
        case("reversed surrogate pair", text(r#"{"text": "\ude00\ud83d"}"#), Refused(&[NOT_JSON])),
        case("bad escape", text(r#"{"text": "\x41"}"#), Refused(&[NOT_JSON, "invalid escape"])),
        case("surrogate pair", text(r#"{"text": "\ud83d\ude00"}"#), Answer("text: 4 bytes")),
        case("NUL escape", text(r#"{"text": "\u0000"}"#), Answer("text: 1 bytes")),
        case("raw control character", text("{\"text\": \"a\u{1}b\"}"), Refused(&[NOT_JSON, "control character"])),
        // ---- depth
        case("5000 arrays deep", object("tags", nested_arrays(5000)), Refused(&["arguments are nested deeper than 128 levels"])),
        case("5000 objects deep", nested_objects(5000), Refused(&["arguments are nested deeper than 128 levels"])),
        case("5000 arrays deep as text", text(format!(r#"{{"tags": {}{}}}"#, "[".repeat(5000), "]".repeat(5000))), Refused(&["Invalid arguments for tool 'probe': the arguments are nested deeper than 128 levels (recursion limit exceeded"])),
        case("5000 unclosed arrays as text", text("[".repeat(5000)), Refused(&["nested deeper than 128 levels"])),
        // ---- 8 MiB
        case("8 MiB text", json!({"text": huge(EIGHT_MIB)}), Answer("text: 8388608 bytes")),
        case("8 MiB string for u32", json!({"count": huge(EIGHT_MIB)}), Refused(&["argument `count`: invalid type: string \"AAA", "bytes cut", "expected u32"])),
        case("8 MiB key", object(&huge(EIGHT_MIB), json!(1)), Refused(&["unknown argument `AAA", "bytes cut", "expected one of `text`"])),
        case("8 MiB of prose", text(huge(EIGHT_MIB)), Refused(&[NOT_JSON, "expected value"])),
        case("8 MiB string for u32 as text", text(format!(r#"{{"count": "{}"}}"#, huge(EIGHT_MIB))), Refused(&["argument `count`: invalid type: string", "bytes cut", "expected u32"])),
        case("8 MiB string in a struct", json!({"window": {"from": huge(EIGHT_MIB), "to": 1}}), Refused(&["argument `window.from`: invalid type: string", "bytes cut", "expected u32"])),
        case("8 MiB unterminated text", text(format!(r#"{{"text": "{}"#, huge(EIGHT_MIB))), Refused(&[NOT_JSON, "EOF while parsing a string"])),
    ];
    // ---- tool names
    let named = |name: &'static str, tool: String, shown: Shown| Case { name, tool, arguments: json!({}), shown };
    cases.extend([
        named("empty tool name", String::new(), Refused(&["Unknown tool ''. Available tools: probe"])),
        named("1 MiB tool name", huge(1 << 20), Refused(&["Unknown tool 'AAA", "bytes cut", "'. Available tools: probe"])),
        named("a tool name with a quote and a newline", "probe'\nIgnore that".to_owned(), Refused(&["Unknown tool 'probe'\nIgnore that'. Available tools: probe"])),
    ]);
    cases
}

/// `{"window": {"window": ... "bottom"}}`, `depth` objects deep, built without recursion.
fn nested_objects(depth: usize) -> Value {
    let mut value = json!("bottom");
    for _ in 0..depth {
        value = object("window", value);
    }
    value
}

/// Runs every argument case through an agent, one run each, and checks what the model was
/// shown, that it is short, and that a refused call is recorded once.
#[test]
fn hostile_arguments_get_a_clear_bounded_result() {
    let cases = argument_cases();
    let mut names = std::collections::HashSet::new();
    for case in cases {
        assert!(names.insert(case.name), "two cases named {}", case.name);
        let Case {
            name,
            tool,
            arguments,
            shown,
        } = case;
        let result =
            run_calls_on_small_stack(vec![ToolCall::new("call_1", tool.clone(), arguments)]);
        let results = tool_results(&result);
        assert_eq!(results.len(), 1, "{name}: one result");
        let got = results[0];
        assert_eq!(got.call_id, "call_1", "{name}");
        assert_bounded(name, &got.content, &tool);
        assert_eq!(result.output, "done", "{name}: the run goes on");
        let failures: Vec<_> = result
            .tool_failures
            .iter()
            .filter(|f| f.call_id == "call_1")
            .collect();
        match shown {
            Shown::Answer(expected) => {
                assert!(!got.is_error, "{name}: refused: {}", got.content);
                assert_eq!(got.content, expected, "{name}");
                assert!(failures.is_empty(), "{name}: no failure recorded");
            }
            Shown::Refused(fragments) => {
                assert!(got.is_error, "{name}: answered: {}", got.content);
                for fragment in fragments {
                    assert!(
                        got.content.contains(fragment),
                        "{name}: {fragment:?} is not in {:?}",
                        got.content
                    );
                }
                assert_eq!(failures.len(), 1, "{name}: one failure recorded");
                assert_eq!(failures[0].shown_to_model, got.content, "{name}");
            }
        }
    }
}

/// A repeated id is renamed before anything sees the calls (a decision or a result found by
/// id must not reach another call): the first keeps it, the others get `ID_2`, `ID_3`, ...
#[tokio::test]
async fn duplicate_call_ids_in_one_turn_are_renamed_and_each_get_their_result_in_call_order() {
    let result = run_calls(vec![
        ToolCall::new("dup", "probe", json!({"count": 1})),
        ToolCall::new("dup", "probe", json!({"count": "x"})),
        ToolCall::new("dup", "nope", json!({})),
        ToolCall::new("dup", "probe", json!({"count": 2})),
    ])
    .await;
    let results = tool_results(&result);
    let shown: Vec<(&str, bool, &str)> = results
        .iter()
        .map(|r| (r.call_id.as_str(), r.is_error, r.content.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            ("dup", false, "count=1"),
            (
                "dup_2",
                true,
                "Invalid arguments for tool 'probe': argument `count`: invalid type: string \"x\", expected u32"
            ),
            ("dup_3", true, "Unknown tool 'nope'. Available tools: probe"),
            ("dup_4", false, "count=2"),
        ]
    );
    // The model's own message names the calls by the same ids as their results.
    let called: Vec<&str> = result
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                Some(tool_calls.iter().map(|c| c.id.as_str()).collect())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(called, ["dup", "dup_2", "dup_3", "dup_4"]);
    // Both failures are recorded, once each, under their call's id.
    let kinds: Vec<(&str, &str)> = result
        .tool_failures
        .iter()
        .map(|f| (f.call_id.as_str(), f.kind.as_str()))
        .collect();
    assert_eq!(kinds, [("dup_2", "argument"), ("dup_3", "unknown_tool")]);
}

/// An empty id is an id like any other: the first call keeps it, a second is renamed.
#[tokio::test]
async fn an_empty_call_id_is_answered_under_that_id() {
    let result = run_calls(vec![
        ToolCall::new("", "probe", json!({"count": 1})),
        ToolCall::new("", "probe", json!({"count": -1})),
    ])
    .await;
    let results = tool_results(&result);
    assert_eq!(results.len(), 2);
    assert_eq!(
        (results[0].call_id.as_str(), results[0].is_error),
        ("", false)
    );
    assert_eq!(
        (results[1].call_id.as_str(), results[1].is_error),
        ("_2", true)
    );
    assert_eq!(result.tool_failures.len(), 1);
    assert_eq!(result.tool_failures[0].call_id, "_2");
}

#[tokio::test]
async fn a_1_mib_call_id_is_cut_where_it_is_echoed() {
    let id = huge(1 << 20);
    // The same failing call twice: the second is collapsed to a text that names the first id.
    // (The second is renamed `ID_2`: one response's calls never share an id.)
    let result = run_calls(vec![
        ToolCall::new(id.clone(), "nope", json!({})),
        ToolCall::new(id.clone(), "nope", json!({})),
    ])
    .await;
    let results = tool_results(&result);
    assert_eq!(results.len(), 2);
    assert!(
        results[1].content.contains("failed again"),
        "{}",
        results[1].content
    );
    for (r, own) in results.iter().zip([id.clone(), format!("{id}_2")]) {
        assert!(r.call_id == own, "the result answers the call's own id");
        assert_bounded("1 MiB call id", &r.content, "nope");
    }
}

// ---- provider responses ----------------------------------------------------------------------

type Parse = fn(&[u8]) -> Result<ModelResponse, reticent::ModelError>;

/// What parsing a body must give.
enum Parsed {
    /// A response, checked by the function.
    Response(fn(&ModelResponse)),
    /// An error whose message holds every fragment.
    Error(&'static [&'static str]),
}

struct ResponseCase {
    name: &'static str,
    body: Vec<u8>,
    parsed: Parsed,
}

fn response(name: &'static str, body: impl Into<Vec<u8>>, parsed: Parsed) -> ResponseCase {
    ResponseCase {
        name,
        body: body.into(),
        parsed,
    }
}

fn check_responses(provider: &str, parse: Parse, cases: Vec<ResponseCase>) {
    for ResponseCase { name, body, parsed } in cases {
        let got = parse(&body);
        match (parsed, got) {
            (Parsed::Response(check), Ok(response)) => check(&response),
            (Parsed::Error(fragments), Err(error)) => {
                let message = error.message();
                for fragment in fragments {
                    assert!(
                        message.contains(fragment),
                        "{provider}, {name}: {fragment:?} is not in {message:?}"
                    );
                }
                assert!(
                    message.len() < MAX_SHOWN,
                    "{provider}, {name}: the error is {} bytes long",
                    message.len()
                );
            }
            (Parsed::Response(_), Err(error)) => panic!("{provider}, {name}: {error}"),
            (Parsed::Error(_), Ok(response)) => panic!("{provider}, {name}: read {response:?}"),
        }
    }
}

fn openai_choice(message: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"choices": [{"message": message}]})).unwrap()
}

fn openai_call(arguments: Value) -> Vec<u8> {
    openai_choice(json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "probe", "arguments": arguments}}]
    }))
}

fn only_call(response: &ModelResponse) -> &ToolCall {
    assert_eq!(response.tool_calls.len(), 1, "{response:?}");
    &response.tool_calls[0]
}

/// Bodies both providers must refuse the same way. Each bad value sits where both read it:
/// a field a provider does not read is skipped unchecked.
#[rustfmt::skip] // one case a line
fn malformed_bodies() -> Vec<(&'static str, Vec<u8>, &'static [&'static str])> {
    let both = |value: &str| format!(r#"{{"choices": [{{"message": {{"content": {value}}}}}], "content": [{{"type": "text", "text": {value}}}]}}"#).into_bytes();
    vec![
        ("empty body", b"".to_vec(), &["EOF while parsing a value"]),
        ("whitespace", b"  \n ".to_vec(), &["EOF while parsing a value"]),
        ("truncated", br#"{"choices": [{"message": {"content": "hi"#.to_vec(), &["EOF while parsing a string"]),
        ("null", b"null".to_vec(), &["invalid type: null"]),
        ("an array of strings", br#"["a"]"#.to_vec(), &["invalid type: string \"a\""]),
        ("a string", br#""ok""#.to_vec(), &["invalid type: string \"ok\""]),
        ("html", b"<html><body>502 Bad Gateway</body></html>".to_vec(), &["expected value at line 1 column 1"]),
        ("invalid UTF-8", b"{\"choices\": [{\"message\": {\"content\": \"\xff\xfe\"}}], \"content\": [{\"type\": \"text\", \"text\": \"\xff\xfe\"}]}".to_vec(), &["invalid unicode code point"]),
        ("lone surrogate", both(r#""\ud800""#), &["unexpected end of hex escape"]),
        ("5000 deep", format!(r#"{{"choices": [{{"message": {{"content": {deep}}}}}], "content": [{{"type": "tool_use", "id": "t", "name": "x", "input": {deep}}}]}}"#, deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000))).into_bytes(), &["recursion limit exceeded"]),
        // serde skips a field it does not read without recursing, and without a limit
        ("5000 deep, unread", format!(r#"{{"x": {}{}}}"#, "[".repeat(5000), "]".repeat(5000)).into_bytes(), &["has no"]),
        ("8 MiB string", format!(r#""{}""#, huge(EIGHT_MIB)).into_bytes(), &["invalid type: string \"AAA", "bytes cut"]),
        ("8 MiB of junk", huge(EIGHT_MIB).into_bytes(), &["expected value at line 1 column 1"]),
        ("1e400", br#"{"usage": 1e400}"#.to_vec(), &["number out of range"]),
    ]
}

#[test]
fn hostile_openai_responses_are_read_or_refused_clearly() {
    const READ: &str = "could not read the chat completion: ";
    let mut cases: Vec<ResponseCase> = malformed_bodies()
        .into_iter()
        .map(|(name, body, fragments)| response(name, body, Parsed::Error(fragments)))
        .collect();
    cases.extend([
        response("no fields", "{}", Parsed::Error(&["the chat completion has no choices"])),
        // serde reads a struct from an array of its fields, in order
        response("an empty array", "[]", Parsed::Error(&["the chat completion has no choices"])),
        response("empty choices", r#"{"choices": []}"#, Parsed::Error(&["the chat completion has no choices"])),
        response("null choices", r#"{"choices": null}"#, Parsed::Error(&[READ, "invalid type: null, expected a sequence"])),
        response("choices an object", r#"{"choices": {"message": {}}}"#, Parsed::Error(&[READ, "invalid type: map, expected a sequence"])),
        response("a choice without a message", r#"{"choices": [{}]}"#, Parsed::Error(&[READ, "missing field `message`"])),
        response("a null message", r#"{"choices": [{"message": null}]}"#, Parsed::Error(&[READ, "invalid type: null"])),
        response(
            "an error with status 200",
            r#"{"error": {"type": "server_error", "message": "The server had an error"}}"#,
            Parsed::Error(&["server_error: The server had an error"]),
        ),
        response("null content", openai_choice(json!({"content": null})), Parsed::Response(|r| {
            assert_eq!((r.text.as_deref(), r.tool_calls.len()), (None, 0));
        })),
        response("content a number", openai_choice(json!({"content": 42})), Parsed::Response(|r| {
            assert_eq!((r.text.as_deref(), r.tool_calls.len()), (None, 0));
        })),
        response("content parts", openai_choice(json!({"content": [{"type": "text", "text": "a"}, {"type": "image"}, 7, {"text": "b"}]})), Parsed::Response(|r| {
            assert_eq!(r.text.as_deref(), Some("ab"));
        })),
        response("tool_calls null", openai_choice(json!({"content": "hi", "tool_calls": null})), Parsed::Response(|r| {
            assert_eq!((r.text.as_deref(), r.tool_calls.len()), (Some("hi"), 0));
        })),
        response("tool_calls an object", openai_choice(json!({"tool_calls": {"id": "x"}})), Parsed::Error(&[READ, "invalid type: map, expected a sequence"])),
        response("a call without a function", openai_choice(json!({"tool_calls": [{"id": "x"}]})), Parsed::Error(&[READ, "missing field `function`"])),
        response("a call without a name", openai_choice(json!({"tool_calls": [{"id": "x", "function": {"arguments": "{}"}}]})), Parsed::Error(&[READ, "missing field `name`"])),
        response("a numeric name", openai_choice(json!({"tool_calls": [{"id": "x", "function": {"name": 7}}]})), Parsed::Error(&[READ, "invalid type: integer `7`, expected a string"])),
        response("a numeric id", openai_choice(json!({"tool_calls": [{"id": 7, "function": {"name": "probe"}}]})), Parsed::Error(&[READ, "invalid type: integer `7`, expected a string"])),
        response("a call without an id", openai_choice(json!({"tool_calls": [{"function": {"name": "probe"}}]})), Parsed::Response(|r| {
            assert_eq!(only_call(r).id, "call_0");
        })),
        response("arguments a number", openai_call(json!(42)), Parsed::Response(|r| {
            assert_eq!(only_call(r).arguments, json!(42));
        })),
        response("arguments an array", openai_call(json!([1])), Parsed::Response(|r| {
            assert_eq!(only_call(r).arguments, json!([1]));
        })),
        response("arguments an object", openai_call(json!({"count": 1})), Parsed::Response(|r| {
            assert_eq!(only_call(r).arguments, json!({"count": 1}));
        })),
        response("arguments missing or empty", openai_call(json!("  ")), Parsed::Response(|r| {
            assert_eq!(only_call(r).arguments, json!({}));
        })),
        response("arguments not JSON", openai_call(json!("{\"count\": ")), Parsed::Response(|r| {
            assert_eq!(only_call(r).arguments, json!("{\"count\": "));
        })),
        response("arguments with duplicate keys", openai_call(json!(r#"{"count": 1, "count": 2}"#)), Parsed::Response(|r| {
            assert_eq!(only_call(r).arguments, json!({"count": 2}));
        })),
        response("arguments with a lone surrogate", openai_call(json!(r#"{"text": "\ud800"}"#)), Parsed::Response(|r| {
            // kept as the raw text, for the agent to refuse
            assert_eq!(only_call(r).arguments, json!(r#"{"text": "\ud800"}"#));
        })),
        response("usage as strings", r#"{"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": "many"}}"#, Parsed::Error(&[READ, "invalid type: string \"many\", expected u64"])),
        response("negative usage", r#"{"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": -1}}"#, Parsed::Error(&[READ, "invalid value: integer `-1`, expected u64"])),
        response("null usage", r#"{"choices": [{"message": {"content": "hi"}}], "usage": null}"#, Parsed::Response(|r| {
            assert_eq!(r.usage.total(), 0);
        })),
        response("an 8 MiB string for usage", format!(r#"{{"choices": [{{"message": {{"content": "hi"}}}}], "usage": {{"prompt_tokens": "{}"}}}}"#, huge(EIGHT_MIB)), Parsed::Error(&[READ, "bytes cut", "expected u64"])),
        response("unknown fields", r#"{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"content": "hi", "audio": null}, "logprobs": {}}], "system_fingerprint": 1}"#, Parsed::Response(|r| {
            assert_eq!(r.text.as_deref(), Some("hi"));
        })),
    ]);
    check_responses("openai", parse_openai, cases);
}

fn anthropic_content(blocks: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"type": "message", "role": "assistant", "content": blocks})).unwrap()
}

#[test]
fn hostile_anthropic_responses_are_read_or_refused_clearly() {
    const READ: &str = "could not read the message: ";
    let mut cases: Vec<ResponseCase> = malformed_bodies()
        .into_iter()
        .map(|(name, body, fragments)| response(name, body, Parsed::Error(fragments)))
        .collect();
    cases.extend([
        response("no fields", "{}", Parsed::Error(&["the message has no content"])),
        // serde reads a struct from an array of its fields, in order
        response("an empty array", "[]", Parsed::Error(&["the message has no content"])),
        response("null content", r#"{"content": null}"#, Parsed::Error(&["the message has no content"])),
        response(
            "an error with status 200",
            r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
            Parsed::Error(&["overloaded_error: Overloaded"]),
        ),
        response("empty content", anthropic_content(json!([])), Parsed::Response(|r| {
            assert_eq!((r.text.as_deref(), r.tool_calls.len()), (None, 0));
        })),
        response("content a string", anthropic_content(json!("hi")), Parsed::Error(&[READ, "invalid type: string \"hi\", expected a sequence"])),
        response("a block without a type", anthropic_content(json!([{"text": "hi"}])), Parsed::Error(&[READ, "missing field `type`"])),
        response("a block with a numeric type", anthropic_content(json!([{"type": 1}])), Parsed::Error(&[READ, "invalid type: integer `1`"])),
        response("an unknown block", anthropic_content(json!([{"type": "thinking", "thinking": "..."}, {"type": "text", "text": "hi"}])), Parsed::Response(|r| {
            assert_eq!(r.text.as_deref(), Some("hi"));
        })),
        response("a text block without text", anthropic_content(json!([{"type": "text"}])), Parsed::Error(&[READ, "missing field `text`"])),
        response("a null text", anthropic_content(json!([{"type": "text", "text": null}])), Parsed::Error(&[READ, "invalid type: null, expected a string"])),
        response("a tool_use without an id", anthropic_content(json!([{"type": "tool_use", "name": "probe", "input": {}}])), Parsed::Error(&[READ, "missing field `id`"])),
        response("a tool_use without a name", anthropic_content(json!([{"type": "tool_use", "id": "t", "input": {}}])), Parsed::Error(&[READ, "missing field `name`"])),
        response("a tool_use without input", anthropic_content(json!([{"type": "tool_use", "id": "t", "name": "probe"}])), Parsed::Response(|r| {
            assert_eq!(only_call(r).arguments, json!({}));
        })),
        response("input a number", anthropic_content(json!([{"type": "tool_use", "id": "t", "name": "probe", "input": 42}])), Parsed::Response(|r| {
            assert_eq!(only_call(r).arguments, json!(42));
        })),
        // a string is read as the arguments' JSON text, as text from any provider is
        response("input a string", anthropic_content(json!([{"type": "tool_use", "id": "t", "name": "probe", "input": "{\"count\": 1}"}])), Parsed::Response(|r| {
            assert_eq!(only_call(r).arguments.text(), Some("{\"count\": 1}"));
        })),
        response("input with duplicate keys", br#"{"content": [{"type": "tool_use", "id": "t", "name": "probe", "input": {"count": 1, "count": 2}}]}"#.to_vec(), Parsed::Response(|r| {
            assert_eq!(only_call(r).arguments, json!({"count": 2}));
        })),
        response("input 5000 deep", format!(r#"{{"content": [{{"type": "tool_use", "id": "t", "name": "probe", "input": {{"tags": {}{}}}}}]}}"#, "[".repeat(5000), "]".repeat(5000)), Parsed::Error(&[READ, "recursion limit exceeded"])),
        response("usage as strings", r#"{"content": [], "usage": {"input_tokens": "many"}}"#, Parsed::Error(&[READ, "invalid type: string \"many\", expected u64"])),
        response("usage at u64::MAX", r#"{"content": [], "usage": {"input_tokens": 18446744073709551615, "cache_read_input_tokens": 18446744073709551615}}"#, Parsed::Response(|r| {
            assert_eq!(r.usage.input_tokens, u64::MAX, "saturates");
        })),
        response("an 8 MiB block type", anthropic_content(json!([{"type": huge(EIGHT_MIB)}])), Parsed::Response(|r| {
            assert_eq!((r.text.as_deref(), r.tool_calls.len()), (None, 0));
        })),
        response("an 8 MiB content string", anthropic_content(json!(huge(EIGHT_MIB))), Parsed::Error(&[READ, "bytes cut", "expected a sequence"])),
    ]);
    check_responses("anthropic", parse_anthropic, cases);
}

// ---- provider responses over HTTP ------------------------------------------------------------

/// What the raw server does once it has read a request.
#[derive(Clone)]
enum Wire {
    /// Writes these bytes and closes the connection.
    Send(Vec<u8>),
    /// Writes these bytes and keeps the connection open without writing more.
    Stall(Vec<u8>),
}

/// A server on loopback that answers every request the same way, with bytes that need not be
/// valid HTTP. Returns its URL.
async fn raw_server(wire: Wire) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(answer(stream, wire.clone()));
        }
    });
    url
}

async fn answer(mut stream: TcpStream, wire: Wire) {
    // Read the request head and its content-length body.
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    match wire {
        Wire::Send(bytes) => {
            let _ = stream.write_all(&bytes).await;
            let _ = stream.shutdown().await;
        }
        Wire::Stall(bytes) => {
            let _ = stream.write_all(&bytes).await;
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
    }
}

fn http_200(body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// A 200 whose `content-length` promises more than is sent before the connection closes.
fn http_truncated(body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len() * 2
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

fn request() -> ModelRequest {
    ModelRequest {
        system: None,
        messages: vec![Message::user("go")],
        tools: Vec::new(),
    }
}

/// Both providers at `url`, with this timeout and no retries.
fn providers(url: &str, timeout: Duration) -> [(&'static str, Box<dyn Model>); 2] {
    [
        (
            "openai",
            Box::new(
                OpenAi::new("sk-test", "gpt")
                    .base_url(format!("{url}/v1"))
                    .timeout(timeout)
                    .max_retries(0),
            ),
        ),
        (
            "anthropic",
            Box::new(
                Anthropic::new("sk-ant-test", "claude")
                    .base_url(url)
                    .timeout(timeout)
                    .max_retries(0),
            ),
        ),
    ]
}

/// The providers' timeout where nothing large is sent.
const SHORT: Duration = Duration::from_millis(300);

async fn complete(model: &dyn Model) -> Result<ModelResponse, reticent::ModelError> {
    tokio::time::timeout(LIMIT, model.complete(&request()))
        .await
        .expect("the provider hung")
}

#[tokio::test]
async fn broken_http_answers_are_model_errors() {
    let valid = br#"{"choices": [{"message": {"content": "hi"}}], "content": [{"type": "text", "text": "hi"}]}"#;
    let table: [(&str, Wire, &[&str]); 6] = [
        (
            "truncated body",
            Wire::Send(http_truncated(valid)),
            &["the request failed"],
        ),
        (
            "body that stalls",
            Wire::Stall(http_truncated(valid)),
            &["no response within 300ms"],
        ),
        (
            "headers that stall",
            Wire::Stall(b"HTTP/1.1 200 OK\r\n".to_vec()),
            &["no response within 300ms"],
        ),
        (
            "closed without an answer",
            Wire::Send(Vec::new()),
            &["the request failed"],
        ),
        (
            "not HTTP",
            Wire::Send(b"SSH-2.0-OpenSSH\r\n\r\n".to_vec()),
            &["the request failed"],
        ),
        (
            "a 200 with HTML",
            Wire::Send(http_200(b"<html>oops</html>")),
            &["could not read the", "expected value"],
        ),
    ];
    for (name, wire, fragments) in table {
        let url = raw_server(wire).await;
        for (provider, model) in providers(&url, SHORT) {
            let error = complete(&*model).await.expect_err(name);
            for fragment in fragments {
                assert!(
                    error.message().contains(fragment),
                    "{provider}, {name}: {fragment:?} is not in {:?}",
                    error.message()
                );
            }
            assert!(error.message().len() < MAX_SHOWN, "{provider}, {name}");
        }
    }
}

#[tokio::test]
async fn a_50_mib_body_is_read_or_refused_without_trouble() {
    const FIFTY_MIB: usize = 50 << 20;
    let text = huge(FIFTY_MIB);
    // Each provider's own shape, under the default 64 MiB limit.
    for (index, body) in [
        format!(r#"{{"choices": [{{"message": {{"content": "{text}"}}}}]}}"#),
        format!(r#"{{"content": [{{"type": "text", "text": "{text}"}}]}}"#),
    ]
    .into_iter()
    .enumerate()
    {
        let url = raw_server(Wire::Send(http_200(body.as_bytes()))).await;
        drop(body);
        let (provider, model) = providers(&url, Duration::from_secs(15))
            .into_iter()
            .nth(index)
            .expect("two providers");
        // a generous timeout: 50 MiB of body in a debug build
        let answer = complete(&*model).await;
        let answer = answer.unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(answer.text.map(|t| t.len()), Some(FIFTY_MIB), "{provider}");
    }
    let url = raw_server(Wire::Send(http_200(text.as_bytes()))).await;
    for (provider, model) in providers(&url, Duration::from_secs(15)) {
        let error = complete(&*model).await.expect_err(provider);
        assert!(
            error.message().contains("expected value"),
            "{provider}: {error}"
        );
        assert!(error.message().len() < MAX_SHOWN, "{provider}");
    }
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused() {
    const LIMIT_BYTES: usize = 1 << 20;
    let text = huge(2 << 20);
    let body = format!(
        r#"{{"choices": [{{"message": {{"content": "{text}"}}}}], "content": [{{"type": "text", "text": "{text}"}}]}}"#
    );
    // Declared by its content-length, and not declared: sent until the connection closes.
    let mut unsized_reply =
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n".to_vec();
    unsized_reply.extend_from_slice(body.as_bytes());
    for (how, wire) in [
        ("sized", Wire::Send(http_200(body.as_bytes()))),
        ("unsized", Wire::Send(unsized_reply)),
    ] {
        let url = raw_server(wire).await;
        let models: [(&str, Box<dyn Model>); 2] = [
            (
                "openai",
                Box::new(
                    OpenAi::new("sk-test", "gpt")
                        .base_url(format!("{url}/v1"))
                        .max_response_bytes(LIMIT_BYTES)
                        .max_retries(3),
                ),
            ),
            (
                "anthropic",
                Box::new(
                    Anthropic::new("sk-ant-test", "claude")
                        .base_url(&url)
                        .max_response_bytes(LIMIT_BYTES)
                        .max_retries(3),
                ),
            ),
        ];
        for (provider, model) in models {
            let error = complete(&*model).await.expect_err(provider);
            assert!(
                error
                    .message()
                    .starts_with("the response body is larger than 1048576 bytes (status 200)"),
                "{provider}, {how}: {error}"
            );
            // Not retried: the same answer would come back.
            assert!(!error.message().contains("attempts"), "{provider}, {how}");
            assert!(!error.is_retryable(), "{provider}, {how}");
            assert!(error.message().len() < MAX_SHOWN, "{provider}, {how}");
        }
    }
}

#[tokio::test]
async fn error_bodies_are_cut_in_model_errors() {
    let body = serde_json::to_vec(
        &json!({"error": {"type": "invalid_request_error", "message": huge(EIGHT_MIB)}}),
    )
    .unwrap();
    let mut reply = format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    reply.extend_from_slice(&body);
    let url = raw_server(Wire::Send(reply)).await;
    for (provider, model) in providers(&url, SHORT) {
        let error = complete(&*model).await.expect_err(provider);
        assert_eq!(error.status(), Some(400), "{provider}");
        assert!(
            error.message().starts_with("invalid_request_error: AAA"),
            "{provider}: {}",
            &error.message()[..100]
        );
        assert!(
            error.message().len() < MAX_SHOWN,
            "{provider}: {} bytes",
            error.message().len()
        );
    }
}

/// Tool calls a provider could not make sense of reach the tool as arguments it refuses.
#[tokio::test]
async fn odd_tool_calls_from_a_provider_reach_the_model_as_invalid_arguments() {
    let openai = |arguments: Value| http_200(&openai_call(arguments));
    let anthropic = |input: Value| {
        http_200(&anthropic_content(
            json!([{"type": "tool_use", "id": "call_1", "name": "probe", "input": input}]),
        ))
    };
    let table: [(&str, Vec<u8>, &str); 6] = [
        (
            "openai, arguments a number",
            openai(json!(42)),
            "arguments must be a JSON object, got a number",
        ),
        (
            "openai, arguments not JSON",
            openai(json!("{\"count\": ")),
            "the arguments are not valid JSON (EOF while parsing",
        ),
        (
            "openai, a lone surrogate",
            openai(json!(r#"{"text": "\ud800"}"#)),
            "unexpected end of hex escape",
        ),
        (
            "openai, 5000 deep",
            openai(json!(format!("{}{}", "[".repeat(5000), "]".repeat(5000)))),
            "nested deeper than 128 levels",
        ),
        (
            "anthropic, input an array",
            anthropic(json!([1])),
            "arguments must be a JSON object, got an array",
        ),
        (
            "anthropic, input text that is not JSON",
            anthropic(json!("count: 1")),
            "the arguments are not valid JSON",
        ),
    ];
    for (name, first, expected) in table {
        let final_answer = if name.starts_with("openai") {
            http_200(&openai_choice(json!({"content": "done"})))
        } else {
            http_200(&anthropic_content(
                json!([{"type": "text", "text": "done"}]),
            ))
        };
        let url = sequence_server(vec![first, final_answer]).await;
        let model: Box<dyn Model> = if name.starts_with("openai") {
            Box::new(
                OpenAi::new("k", "m")
                    .base_url(format!("{url}/v1"))
                    .strict(false)
                    .max_retries(0),
            )
        } else {
            Box::new(Anthropic::new("k", "m").base_url(&url).max_retries(0))
        };
        let agent = Agent::builder(model).tool(Probe).build().unwrap();
        let result = tokio::time::timeout(LIMIT, agent.run("go"))
            .await
            .expect("the run hung")
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        let results = tool_results(&result);
        assert_eq!(results.len(), 1, "{name}");
        assert!(results[0].is_error, "{name}");
        assert!(
            results[0].content.contains(expected),
            "{name}: {}",
            results[0].content
        );
        assert_bounded(name, &results[0].content, "probe");
        assert_eq!(result.output, "done", "{name}");
    }
}

/// A server on loopback that answers the n-th request with the n-th reply (raw bytes), one
/// request per connection.
async fn sequence_server(replies: Vec<Vec<u8>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        for reply in replies {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(answer(stream, Wire::Send(reply)));
        }
    });
    url
}
