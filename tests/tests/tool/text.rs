//! `Tool::call_text`: a `#[tool]` decodes each argument straight from the JSON text, and
//! whatever the text holds, the outcome is the one `Tool::call` gives for the parsed value —
//! the same output, the same error for the model, the same kind.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use futures::FutureExt;
use proptest::prelude::*;
use reticent::{Disclose, Tool, ToolContext, ToolError, Toolbox};
use schemars::JsonSchema;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
struct Address {
    street: String,
    city: String,
    zip: Option<u32>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Dimensions {
    width_cm: u32,
    height_cm: u32,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Packaging {
    Envelope,
    Box(u32),
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "method", rename_all = "snake_case")]
enum Delivery {
    Courier { address: Address },
    Pickup { store_id: u32 },
}

/// Create a parcel; returns what it decoded.
#[reticent::tool]
#[allow(clippy::too_many_arguments)]
fn create_parcel(
    recipient: String,
    weight_g: u32,
    price: Option<f64>,
    address: Option<Address>,
    dimensions: Option<Dimensions>,
    packaging: Option<Packaging>,
    delivery: Option<Delivery>,
    tags: Option<Vec<String>>,
    labels: Option<HashMap<String, i64>>,
    extra: Option<Value>,
) -> Value {
    json!({
        "recipient": recipient, "weight_g": weight_g, "price": price, "address": address,
        "dimensions": dimensions, "packaging": packaging, "delivery": delivery, "tags": tags,
        "labels": labels, "extra": extra,
    })
}

/// Check that the service is up.
#[reticent::tool]
async fn ping(cx: &ToolContext) -> String {
    format!("pong from {}", cx.tool_name())
}

/// Set a field whose names are keywords.
#[reticent::tool]
fn set_field(r#type: String, r#match: Option<bool>) -> (String, Option<bool>) {
    (r#type, r#match)
}

const CANARY: &str = "CANARY-text-91c2";

#[derive(Debug, thiserror::Error, Disclose)]
enum ChargeError {
    #[error("card {0} was declined")]
    #[disclose(argument)]
    Declined(String),
    #[error("gateway at https://pay:{CANARY}@gw refused")]
    Gateway,
}

struct Shop;

#[reticent::tools]
impl Shop {
    /// Charge a card (async method).
    #[tool]
    async fn charge(&self, card: String, cents: u64) -> Result<u64, ChargeError> {
        match card.as_str() {
            "declined" => Err(ChargeError::Declined(card)),
            "gateway" => Err(ChargeError::Gateway),
            _ => Ok(cents),
        }
    }
}

fn tools() -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> =
        vec![Arc::new(CreateParcel), Arc::new(Ping), Arc::new(SetField)];
    tools.extend(Arc::new(Shop).tools());
    tools
}

/// What a call came to, comparable across the two paths.
#[derive(Debug, PartialEq)]
enum Outcome {
    Ok(Value),
    Err { kind: String, model_text: String },
}

fn outcome(tool: &dyn Tool, result: Result<Value, ToolError>) -> Outcome {
    match result {
        Ok(value) => Outcome::Ok(value),
        Err(error) => Outcome::Err {
            kind: error.kind().to_owned(),
            model_text: error.model_text(&tool.definition().name, false),
        },
    }
}

fn cx(tool: &dyn Tool) -> ToolContext {
    ToolContext::new("call_1", tool.definition().name.as_str())
}

/// `tool.call_text(text)`, which is ready when made.
fn call_text(tool: &dyn Tool, text: &str) -> Result<Value, ToolError> {
    tool.call_text(text, cx(tool))
        .now_or_never()
        .expect("ready")
}

/// What `call_text(text)` came to.
fn from_text(tool: &dyn Tool, text: &str) -> Outcome {
    outcome(tool, call_text(tool, text))
}

/// What `call_text(text)` must come to: what the trait's provided `call_text` gives — `call`
/// of the parsed text, or an argument error for text that is not JSON.
fn expected(tool: &Arc<dyn Tool>, text: &str) -> Outcome {
    let forward = Forward(Arc::clone(tool));
    outcome(&**tool, call_text(&forward, text))
}

/// A hand-written tool that forwards `call` and keeps the provided `call_text`.
struct Forward(Arc<dyn Tool>);

impl Tool for Forward {
    fn definition(&self) -> &reticent::ToolDefinition {
        self.0.definition()
    }

    fn call(&self, args: Value, cx: ToolContext) -> reticent::tool::ToolFuture<'_> {
        self.0.call(args, cx)
    }
}

fn check(tool: &Arc<dyn Tool>, text: &str) {
    assert_eq!(
        from_text(&**tool, text),
        expected(tool, text),
        "tool `{}`, text {text:?}",
        tool.definition().name
    );
}

fn tool(name: &str) -> Arc<dyn Tool> {
    tools()
        .into_iter()
        .find(|tool| tool.definition().name == name)
        .expect("a tool by that name")
}

// ---- a table of shapes ---------------------------------------------------------------------

#[test]
fn every_shape_of_text_comes_to_what_call_gives() {
    let parcel = tool("create_parcel");
    let texts = [
        // decodes
        r#"{"recipient":"Ada","weight_g":1200}"#,
        r#" { "weight_g" : 1 , "recipient" : "B\u00e9a \"Q\"" } "#,
        r#"{"recipient":"Ada","weight_g":1,"price":12.5,"address":{"street":"Main 1","city":"Oslo"}}"#,
        r#"{"recipient":"Ada","weight_g":1,"address":{"street":"Main 1","city":"Oslo","zip":1234,"floor":3}}"#,
        r#"{"recipient":"Ada","weight_g":1,"dimensions":{"width_cm":2,"height_cm":3}}"#,
        r#"{"recipient":"Ada","weight_g":1,"packaging":"envelope","delivery":{"method":"pickup","store_id":7}}"#,
        r#"{"recipient":"Ada","weight_g":1,"packaging":{"box":3},"delivery":{"method":"courier","address":{"street":"s","city":"c"}}}"#,
        r#"{"recipient":"Ada","weight_g":1,"tags":["a","b"],"labels":{"x":-1,"y":9007199254740993}}"#,
        r#"{"recipient":"Ada","weight_g":1,"extra":{"deep":[[[[1.5e3,null,true]]]]}}"#,
        r#"{"recipient":"Ada","weight_g":1,"note":null}"#,
        r#"{"recipient":"Ada","weight_g":1,"price":null,"address":null}"#,
        // integral floats, which JSON Schema counts as integers
        r#"{"recipient":"Ada","weight_g":1200.0}"#,
        r#"{"recipient":"Ada","weight_g":1,"dimensions":{"width_cm":2.0,"height_cm":3}}"#,
        r#"{"recipient":"Ada","weight_g":1,"labels":{"x":-4.0}}"#,
        // argument errors
        r#"{"recipient":"Ada"}"#,
        r#"{"weight_g":1}"#,
        r#"{"recipient":"Ada","weight_g":"heavy"}"#,
        r#"{"recipient":"Ada","weight_g":-1}"#,
        r#"{"recipient":"Ada","weight_g":1.5}"#,
        r#"{"recipient":"Ada","weight_g":4294967296}"#,
        r#"{"recipient":"Ada","weight_g":1,"colour":"red"}"#,
        r#"{"recipient":"Ada","weight_g":1,"recipient":"Bea"}"#,
        r#"{"recipient":"Ada","weight_g":1,"weight_g":2}"#,
        r#"{"recipient":"Ada","weight_g":1,"dimensions":{"width_cm":2,"height_cm":3,"depth_cm":4}}"#,
        r#"{"recipient":"Ada","weight_g":1,"packaging":"crate"}"#,
        r#"{"recipient":"Ada","weight_g":1,"delivery":{"method":"drone"}}"#,
        r#"{"recipient":null,"weight_g":1}"#,
        r#"{"recipient":"Ada","weight_g":1e400}"#,
        r#"{"recipient":"Ada","weight_g":1,"price":1e400}"#,
        // not an object, or not JSON
        "null",
        "[]",
        "\"text\"",
        "42",
        "",
        "   ",
        "{",
        r#"{"recipient":"Ada","weight_g":1"#,
        r#"{"recipient":"Ada","weight_g":1}}"#,
        r#"{"recipient":"Ada","weight_g":1} trailing"#,
        r#"{"recipient":"Ada",,"weight_g":1}"#,
        r#"{recipient:"Ada"}"#,
        r#"{"recipient":"Ada\ud800","weight_g":1}"#,
        r#"{"recipient":"Ada","weight_g":01}"#,
    ];
    for text in texts {
        check(&parcel, text);
    }
    let deep = format!(
        r#"{{"recipient":"Ada","weight_g":1,"extra":{}1{}}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    check(&parcel, &deep);
    for depth in [120, 125, 126, 127, 128, 129] {
        let text = format!(
            r#"{{"recipient":"Ada","weight_g":1,"extra":{}1{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        check(&parcel, &text);
        // in a field `Address` does not know, which its decoder skips unread
        let text = format!(
            r#"{{"recipient":"Ada","weight_g":1,"address":{{"street":"s","city":"c","floor":{}1{}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        check(&parcel, &text);
    }

    for text in ["{}", "null", r#"{"x":1}"#, "[]"] {
        check(&tool("ping"), text);
    }
    for text in [
        r#"{"type":"a"}"#,
        r#"{"type":"a","match":true}"#,
        r#"{"r#type":"a"}"#,
        r#"{"match":true}"#,
    ] {
        check(&tool("set_field"), text);
    }
    for text in [
        r#"{"card":"ok","cents":250}"#,
        r#"{"card":"declined","cents":250}"#,
        r#"{"card":"gateway","cents":250}"#,
        r#"{"card":"ok","cents":-250}"#,
    ] {
        check(&tool("charge"), text);
    }
}

#[test]
fn text_that_decodes_gives_the_tools_output() {
    let parcel = tool("create_parcel");
    let Outcome::Ok(out) = from_text(
        &*parcel,
        r#"{"recipient":"Ada","weight_g":1200.0,"tags":["x"]}"#,
    ) else {
        panic!("did not decode")
    };
    assert_eq!(
        (&out["recipient"], &out["weight_g"], &out["tags"]),
        (&json!("Ada"), &json!(1200), &json!(["x"]))
    );
    assert_eq!(
        from_text(&*tool("ping"), "{}"),
        Outcome::Ok(json!("pong from ping"))
    );
    assert_eq!(
        from_text(&*tool("charge"), r#"{"card":"ok","cents":7}"#),
        Outcome::Ok(json!(7))
    );
}

#[test]
fn text_that_is_not_json_is_an_argument_error() {
    let Outcome::Err { kind, model_text } =
        from_text(&*tool("create_parcel"), r#"{"recipient":"Ada""#)
    else {
        panic!("accepted")
    };
    assert_eq!(kind, "argument");
    assert!(
        model_text.starts_with("Invalid arguments for tool 'create_parcel': "),
        "{model_text}"
    );
}

// ---- the disclosure rules hold on this path --------------------------------------------------

#[test]
fn a_withheld_message_stays_withheld_from_text() {
    let charge = tool("charge");
    let error = call_text(&*charge, r#"{"card":"gateway","cents":1}"#).expect_err("fails");
    let model_text = error.model_text("charge", false);
    assert_eq!(model_text, "Tool 'charge' failed with ChargeError::Gateway");
    assert!(!model_text.contains(CANARY));
    // The caller keeps the whole error.
    let ToolError::Failed(failure) = &error else {
        panic!("not a failure: {error:?}")
    };
    let source = std::error::Error::source(failure).expect("the error");
    assert!(source.to_string().contains(CANARY));

    let declined = call_text(&*charge, r#"{"card":"declined","cents":1}"#).expect_err("fails");
    assert_eq!(
        declined.model_text("charge", false),
        "Invalid arguments for tool 'charge': card declined was declined"
    );
}

// ---- the fast path is taken --------------------------------------------------------------

/// Records how it was decoded: from a borrowed slice of the text, or from an owned
/// `serde_json::Value`.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
enum Source {
    Text,
    Value,
}

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SourceVisitor;
        impl<'de> Visitor<'de> for SourceVisitor {
            type Value = Source;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Source, E> {
                Ok(Source::Text)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Source, E> {
                Ok(Source::Value)
            }
        }
        deserializer.deserialize_str(SourceVisitor)
    }
}

/// Reports how its argument was decoded.
#[reticent::tool]
fn witnessed(probe: Source, count: Option<u8>) -> (Source, Option<u8>) {
    (probe, count)
}

#[test]
fn arguments_that_decode_are_read_from_the_text_and_the_rest_take_the_call_path() {
    let witnessed: Arc<dyn Tool> = Arc::new(Witnessed);
    assert_eq!(
        from_text(&*witnessed, r#"{"probe":"x","count":3}"#),
        Outcome::Ok(json!(["Text", 3]))
    );
    // `3.0` does not decode as a `u8` as sent: the `call` path decodes it.
    assert_eq!(
        from_text(&*witnessed, r#"{"probe":"x","count":3.0}"#),
        Outcome::Ok(json!(["Value", 3]))
    );
    // An unknown argument: the `call` path says which.
    let Outcome::Err { model_text, .. } = from_text(&*witnessed, r#"{"probe":"x","n":1}"#) else {
        panic!("accepted")
    };
    assert!(model_text.contains("unknown argument `n`"), "{model_text}");
}

// ---- generated text ------------------------------------------------------------------------

/// A JSON value of any shape, as text, sometimes one that does not fit the parameter.
fn value_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u32>().prop_map(|n| n.to_string()),
        (0u32..5000).prop_map(|n| format!("{n}.0")),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| f.to_string()),
        Just("1e400".to_owned()),
        "[a-z]{0,8}".prop_map(|s| format!("{s:?}")),
        Just(r#""\u00e9\n""#.to_owned()),
        Just(r#""envelope""#.to_owned()),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4)
                .prop_map(|items| format!("[{}]", items.join(","))),
            prop::collection::vec((key(), inner), 0..4).prop_map(|entries| {
                let body: Vec<String> = entries
                    .into_iter()
                    .map(|(k, v)| format!("{k:?}:{v}"))
                    .collect();
                format!("{{{}}}", body.join(","))
            }),
        ]
    })
}

/// A key: a parameter's or a nested field's name, or one no type knows.
fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "recipient",
        "weight_g",
        "price",
        "address",
        "dimensions",
        "packaging",
        "delivery",
        "tags",
        "labels",
        "extra",
        "street",
        "city",
        "zip",
        "width_cm",
        "height_cm",
        "method",
        "store_id",
        "box",
        "card",
        "cents",
        "type",
        "match",
        "probe",
        "count",
        "unknown",
    ])
    .prop_map(str::to_owned)
}

/// An arguments object, now and then broken: cut short, or with something after it.
fn arguments_text() -> impl Strategy<Value = String> {
    let object = prop::collection::vec((key(), value_text()), 0..8).prop_map(|entries| {
        let body: Vec<String> = entries
            .into_iter()
            .map(|(k, v)| format!("{k:?}: {v}"))
            .collect();
        format!("{{{}}}", body.join(", "))
    });
    (object, 0u8..20, any::<prop::sample::Index>()).prop_map(|(text, damage, at)| match damage {
        0 => text[..at.index(text.len() + 1)].to_owned(),
        1 => format!("{text} x"),
        _ => text,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn generated_text_comes_to_what_call_gives(text in arguments_text(), which in 0usize..4) {
        let tool = &tools()[which];
        prop_assert_eq!(from_text(&**tool, &text), expected(tool, &text), "text {:?}", text);
    }
}
