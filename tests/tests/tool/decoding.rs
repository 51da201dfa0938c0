//! Decoding the model's arguments: what decodes, and what every bad shape of arguments turns
//! into. A bad argument is always a `ToolError::Argument` with a message the model can act on,
//! never a panic.

use std::collections::HashMap;
use std::sync::Arc;

use reticent::{Tool, ToolContext, ToolError, Toolbox};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
struct Address {
    street: String,
    city: String,
    postcode: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Dimensions {
    width_cm: u32,
    height_cm: u32,
}

/// Externally tagged, the serde default.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Packaging {
    Envelope,
    Box(u32),
    Tube { length_cm: u32 },
}

/// Internally tagged.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "method", rename_all = "snake_case")]
enum Delivery {
    Courier { address: Address },
    Pickup { store_id: u32 },
}

/// Create a parcel; returns what it decoded.
#[reticent::tool]
#[allow(clippy::too_many_arguments)]
async fn create_parcel(
    recipient: String,
    weight_g: u32,
    note: Option<String>,
    address: Option<Address>,
    dimensions: Option<Dimensions>,
    packaging: Option<Packaging>,
    delivery: Option<Delivery>,
    tags: Option<Vec<String>>,
    labels: Option<HashMap<String, u32>>,
) -> Value {
    json!({
        "recipient": recipient,
        "weight_g": weight_g,
        "note": note,
        "address": address,
        "dimensions": dimensions,
        "packaging": packaging,
        "delivery": delivery,
        "tags": tags,
        "labels": labels,
    })
}

/// Check that the service is up.
#[reticent::tool]
fn ping() -> &'static str {
    "pong"
}

/// Set a field whose names are keywords.
#[reticent::tool]
fn set_field(r#type: String, r#match: Option<bool>) -> (String, Option<bool>) {
    (r#type, r#match)
}

/// Measure a parcel (sync).
#[reticent::tool]
fn measure(recipient: String, weight_g: u32, dimensions: Option<Dimensions>) -> u32 {
    let _ = (recipient, dimensions);
    weight_g
}

/// Measure a parcel (async).
#[reticent::tool]
async fn measure_async(recipient: String, weight_g: u32, dimensions: Option<Dimensions>) -> u32 {
    let _ = (recipient, dimensions);
    weight_g
}

struct Depot;

#[reticent::tools]
impl Depot {
    /// Measure a parcel (method).
    #[tool]
    fn measure_method(
        &self,
        recipient: String,
        weight_g: u32,
        dimensions: Option<Dimensions>,
    ) -> u32 {
        let _ = (recipient, dimensions);
        weight_g
    }
}

async fn call(tool: &dyn Tool, args: Value) -> Result<Value, ToolError> {
    tool.call(args, ToolContext::default()).await
}

/// The model's text for a call that must fail with an argument error.
async fn argument_error(tool: &dyn Tool, args: Value) -> String {
    let name = tool.definition().name.clone();
    match call(tool, args).await {
        Ok(out) => panic!("`{name}` accepted the arguments and returned {out}"),
        Err(err @ ToolError::Argument(_)) => {
            assert!(err.is_argument());
            assert_eq!(err.kind(), "argument");
            err.model_text(&name, false)
        }
        Err(err) => panic!("`{name}` failed with {err:?}, not an argument error"),
    }
}

/// `{key: value}`, built without `json!`, which would serialize `value` recursively.
fn object(key: &str, value: Value) -> Value {
    Value::Object(Map::from_iter([(key.to_owned(), value)]))
}

/// A parcel with the required arguments and `extra` merged in.
fn parcel(extra: Value) -> Value {
    let mut args = json!({"recipient": "Ada", "weight_g": 1200});
    let Value::Object(extra) = extra else {
        panic!("not an object: {extra}")
    };
    for (key, value) in extra {
        args[key] = value;
    }
    args
}

// ---- what decodes ------------------------------------------------------------------------

#[tokio::test]
async fn an_optional_argument_may_be_absent_null_or_present() {
    let absent = call(&CreateParcel, parcel(json!({}))).await.unwrap();
    assert_eq!(absent["note"], Value::Null);

    let null = call(&CreateParcel, parcel(json!({"note": null})))
        .await
        .unwrap();
    assert_eq!(null["note"], Value::Null);

    let present = call(&CreateParcel, parcel(json!({"note": "fragile"})))
        .await
        .unwrap();
    assert_eq!(present["note"], "fragile");
    assert_eq!(present["recipient"], "Ada");
    assert_eq!(present["weight_g"], 1200);
}

#[tokio::test]
async fn a_nested_struct_decodes() {
    let out = call(
        &CreateParcel,
        parcel(json!({
            "address": {"street": "Main St 1", "city": "Oslo"},
            "dimensions": {"width_cm": 20, "height_cm": 30}
        })),
    )
    .await
    .unwrap();
    assert_eq!(
        out["address"],
        json!({"street": "Main St 1", "city": "Oslo", "postcode": null})
    );
    assert_eq!(out["dimensions"], json!({"width_cm": 20, "height_cm": 30}));
}

#[tokio::test]
async fn an_externally_tagged_enum_decodes() {
    for packaging in [
        json!("envelope"),
        json!({"box": 3}),
        json!({"tube": {"length_cm": 90}}),
    ] {
        let out = call(&CreateParcel, parcel(json!({"packaging": packaging})))
            .await
            .unwrap();
        assert_eq!(out["packaging"], packaging);
    }
}

#[tokio::test]
async fn an_internally_tagged_enum_decodes() {
    for delivery in [
        json!({"method": "pickup", "store_id": 4}),
        json!({"method": "courier", "address": {"street": "S", "city": "C", "postcode": "0150"}}),
    ] {
        let out = call(&CreateParcel, parcel(json!({"delivery": delivery})))
            .await
            .unwrap();
        assert_eq!(out["delivery"], delivery);
    }
}

#[tokio::test]
async fn vecs_and_maps_decode() {
    let out = call(
        &CreateParcel,
        parcel(json!({"tags": ["fragile", "gift"], "labels": {"floor": 3, "door": 12}})),
    )
    .await
    .unwrap();
    assert_eq!(out["tags"], json!(["fragile", "gift"]));
    assert_eq!(out["labels"], json!({"floor": 3, "door": 12}));
}

#[tokio::test]
async fn raw_identifier_parameters_are_named_without_their_prefix() {
    let out = call(&SetField, json!({"type": "string", "match": true}))
        .await
        .unwrap();
    assert_eq!(out, json!(["string", true]));
    let properties = &SetField.definition().parameters["properties"];
    assert!(properties.get("type").is_some() && properties.get("r#type").is_none());
}

#[tokio::test]
async fn a_tool_without_parameters_takes_an_empty_object_or_null() {
    assert_eq!(call(&Ping, json!({})).await.unwrap(), "pong");
    assert_eq!(call(&Ping, Value::Null).await.unwrap(), "pong");
}

#[tokio::test]
async fn the_order_of_arguments_does_not_matter() {
    let out = call(
        &CreateParcel,
        json!({"note": "n", "weight_g": 5, "recipient": "Bo"}),
    )
    .await
    .unwrap();
    assert_eq!(
        (&out["recipient"], &out["weight_g"]),
        (&json!("Bo"), &json!(5))
    );
}

// ---- the shape of the arguments ------------------------------------------------------------

#[tokio::test]
async fn arguments_that_are_not_an_object_are_refused() {
    for (args, got) in [
        (json!("recipient=Ada"), "a string"),
        (json!(["Ada", 1200]), "an array"),
        (json!(42), "a number"),
        (json!(true), "a boolean"),
    ] {
        assert_eq!(
            argument_error(&CreateParcel, args.clone()).await,
            format!(
                "Invalid arguments for tool 'create_parcel': arguments must be a JSON object, got {got}"
            )
        );
        // The same for a tool that takes nothing.
        assert_eq!(
            argument_error(&Ping, args).await,
            format!(
                "Invalid arguments for tool 'ping': arguments must be a JSON object, got {got}"
            )
        );
    }
}

#[tokio::test]
async fn null_arguments_for_a_tool_with_required_parameters_are_missing_arguments() {
    assert_eq!(
        argument_error(&CreateParcel, Value::Null).await,
        "Invalid arguments for tool 'create_parcel': missing required argument `recipient`"
    );
}

// ---- missing, unknown and mistyped arguments -----------------------------------------------

#[tokio::test]
async fn a_missing_required_argument_is_named() {
    assert_eq!(
        argument_error(&CreateParcel, json!({})).await,
        "Invalid arguments for tool 'create_parcel': missing required argument `recipient`"
    );
    assert_eq!(
        argument_error(&CreateParcel, json!({"recipient": "Ada"})).await,
        "Invalid arguments for tool 'create_parcel': missing required argument `weight_g`"
    );
}

#[tokio::test]
async fn null_for_a_required_argument_says_what_was_expected() {
    assert_eq!(
        argument_error(&CreateParcel, json!({"recipient": null, "weight_g": 1})).await,
        "Invalid arguments for tool 'create_parcel': argument `recipient`: invalid type: null, expected a string"
    );
}

#[tokio::test]
async fn a_wrong_type_says_what_was_expected() {
    assert_eq!(
        argument_error(
            &CreateParcel,
            json!({"recipient": "Ada", "weight_g": "heavy"})
        )
        .await,
        "Invalid arguments for tool 'create_parcel': argument `weight_g`: invalid type: string \"heavy\", expected u32"
    );
    assert_eq!(
        argument_error(&CreateParcel, json!({"recipient": ["Ada"], "weight_g": 1})).await,
        "Invalid arguments for tool 'create_parcel': argument `recipient`: invalid type: sequence, expected a string"
    );
}

#[tokio::test]
async fn an_unknown_argument_lists_the_expected_names() {
    assert_eq!(
        argument_error(&CreateParcel, parcel(json!({"colour": "red"}))).await,
        "Invalid arguments for tool 'create_parcel': unknown argument `colour`; expected one of \
         `recipient`, `weight_g`, `note`, `address`, `dimensions`, `packaging`, `delivery`, `tags`, `labels`"
    );
}

#[tokio::test]
async fn an_unknown_argument_to_a_tool_without_parameters_says_so() {
    assert_eq!(
        argument_error(&Ping, json!({"verbose": true})).await,
        "Invalid arguments for tool 'ping': unknown argument `verbose`; this tool takes no arguments"
    );
}

#[tokio::test]
async fn a_raw_identifiers_prefix_is_not_an_argument_name() {
    assert_eq!(
        argument_error(&SetField, json!({"r#type": "x"})).await,
        "Invalid arguments for tool 'set_field': unknown argument `r#type`; expected one of `type`, `match`"
    );
}

// ---- nested values -------------------------------------------------------------------------
//
// An error inside an argument names the path to it: the argument, then the fields and indexes
// into it (`address.street`, `tags[1]`), so the model sees which part to correct.

#[tokio::test]
async fn a_wrong_type_inside_a_struct_names_the_path_to_it() {
    assert_eq!(
        argument_error(
            &CreateParcel,
            parcel(json!({"address": {"street": 5, "city": "Oslo"}}))
        )
        .await,
        "Invalid arguments for tool 'create_parcel': argument `address.street`: invalid type: integer `5`, expected a string"
    );
}

#[tokio::test]
async fn the_caller_gets_the_path_too() {
    let error = call(&CreateParcel, parcel(json!({"tags": ["a", "b", 3]})))
        .await
        .unwrap_err();
    let ToolError::Argument(error) = error else {
        panic!("not an argument error: {error:?}")
    };
    assert_eq!(error.path(), Some("tags[2]"));
    let error = call(&CreateParcel, json!({"weight_g": 1}))
        .await
        .unwrap_err();
    let ToolError::Argument(error) = error else {
        panic!("not an argument error: {error:?}")
    };
    assert_eq!(error.path(), Some("recipient"));
}

#[tokio::test]
async fn a_missing_field_inside_a_struct_is_named() {
    assert_eq!(
        argument_error(&CreateParcel, parcel(json!({"address": {"street": "S"}}))).await,
        "Invalid arguments for tool 'create_parcel': argument `address`: missing field `city`"
    );
}

#[tokio::test]
async fn an_unknown_field_of_a_closed_struct_lists_the_fields() {
    assert_eq!(
        argument_error(
            &CreateParcel,
            parcel(json!({"dimensions": {"width_cm": 1, "height_cm": 2, "depth_cm": 3}}))
        )
        .await,
        "Invalid arguments for tool 'create_parcel': argument `dimensions.depth_cm`: unknown field `depth_cm`, expected `width_cm` or `height_cm`"
    );
}

#[tokio::test]
async fn an_unknown_enum_variant_lists_the_variants() {
    assert_eq!(
        argument_error(&CreateParcel, parcel(json!({"packaging": "crate"}))).await,
        "Invalid arguments for tool 'create_parcel': argument `packaging`: unknown variant `crate`, expected one of `envelope`, `box`, `tube`"
    );
    assert_eq!(
        argument_error(
            &CreateParcel,
            parcel(json!({"delivery": {"method": "drone"}}))
        )
        .await,
        "Invalid arguments for tool 'create_parcel': argument `delivery.method`: unknown variant `drone`, expected `courier` or `pickup`"
    );
}

#[tokio::test]
async fn a_missing_tag_is_named() {
    assert_eq!(
        argument_error(&CreateParcel, parcel(json!({"delivery": {"store_id": 4}}))).await,
        "Invalid arguments for tool 'create_parcel': argument `delivery`: missing field `method`"
    );
}

#[tokio::test]
async fn a_wrong_element_in_a_vec_or_map_says_what_was_expected() {
    assert_eq!(
        argument_error(&CreateParcel, parcel(json!({"tags": ["fragile", 7]}))).await,
        "Invalid arguments for tool 'create_parcel': argument `tags[1]`: invalid type: integer `7`, expected a string"
    );
    assert_eq!(
        argument_error(&CreateParcel, parcel(json!({"labels": {"floor": "third"}}))).await,
        "Invalid arguments for tool 'create_parcel': argument `labels.floor`: invalid type: string \"third\", expected u32"
    );
}

// ---- hostile values ------------------------------------------------------------------------

/// `depth` arrays, one inside the other, built without recursion.
fn nested_arrays(depth: usize) -> Value {
    let mut value = json!("bottom");
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

/// `depth` objects, one inside the other, built without recursion.
fn nested_objects(depth: usize) -> Value {
    let mut value = json!("bottom");
    for _ in 0..depth {
        value = object("street", value);
    }
    value
}

#[test]
fn deeply_nested_values_are_refused_without_exhausting_the_stack() {
    // A thread of its own, with the standard stack size: no test-harness headroom.
    let texts = std::thread::spawn(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        [
            object("tags", nested_arrays(5000)),
            object("address", nested_objects(5000)),
            parcel(object("labels", nested_objects(5000))),
        ]
        .map(|args| runtime.block_on(argument_error(&CreateParcel, args)))
    })
    .join()
    .expect("the thread panicked or overflowed its stack");
    for text in texts {
        assert_eq!(
            text,
            "Invalid arguments for tool 'create_parcel': arguments are nested deeper than 128 levels"
        );
    }
}

#[tokio::test]
async fn values_nested_within_the_limit_reach_the_decoder() {
    // 100 levels below the argument: within the limit, so the decoder sees it...
    let out = call(
        &CreateParcel,
        parcel(object("address", nested_objects(100))),
    )
    .await
    .unwrap_err();
    // ...and the struct then refuses it for what it is, not for its depth.
    assert!(
        out.model_text("create_parcel", false)
            .ends_with("argument `address.street`: invalid type: map, expected a string"),
        "{}",
        out.model_text("create_parcel", false)
    );
}

const EIGHT_MIB: usize = 8 << 20;

/// Checks that a message about an 8 MiB value is short and does not carry the value.
fn assert_bounded(text: &str, tool: &str) {
    assert!(
        text.len() < 1024 + tool.len(),
        "the model's text is {} bytes long",
        text.len()
    );
    let echoed = text.matches('A').count();
    assert!(echoed < 512, "{echoed} bytes of the value echoed: {text}");
}

#[tokio::test]
async fn an_8_mib_string_for_a_number_is_cut_and_says_what_was_expected() {
    let huge = "A".repeat(EIGHT_MIB);
    let text = argument_error(&CreateParcel, json!({"recipient": "Ada", "weight_g": huge})).await;
    assert_bounded(&text, "create_parcel");
    assert!(
        text.starts_with(
            "Invalid arguments for tool 'create_parcel': argument `weight_g`: invalid type: string \"AAAA"
        ),
        "{text}"
    );
    assert!(text.contains(" bytes cut) "), "{text}");
    assert!(text.ends_with("AAAA\", expected u32"), "{text}");
}

#[tokio::test]
async fn an_8_mib_string_for_a_number_inside_a_struct_is_cut_too() {
    let huge = "A".repeat(EIGHT_MIB);
    let text = argument_error(
        &CreateParcel,
        parcel(json!({"dimensions": {"width_cm": huge, "height_cm": 1}})),
    )
    .await;
    assert_bounded(&text, "create_parcel");
    assert!(
        text.contains("argument `dimensions.width_cm`: invalid type: string"),
        "{text}"
    );
    assert!(text.ends_with("\", expected u32"), "{text}");
}

#[tokio::test]
async fn an_8_mib_enum_variant_is_cut_and_lists_the_variants() {
    let huge = "A".repeat(EIGHT_MIB);
    let text = argument_error(&CreateParcel, parcel(json!({"packaging": huge}))).await;
    assert_bounded(&text, "create_parcel");
    assert!(
        text.ends_with("`, expected one of `envelope`, `box`, `tube`"),
        "{text}"
    );
}

#[tokio::test]
async fn an_8_mib_argument_name_is_cut_and_the_expected_names_listed() {
    let huge = "A".repeat(EIGHT_MIB);
    let text = argument_error(&CreateParcel, parcel(object(&huge, json!(1)))).await;
    assert_bounded(&text, "create_parcel");
    assert!(text.contains("unknown argument `AAAA"), "{text}");
    assert!(
        text.ends_with("expected one of `recipient`, `weight_g`, `note`, `address`, `dimensions`, `packaging`, `delivery`, `tags`, `labels`"),
        "{text}"
    );
}

#[tokio::test]
async fn numbers_out_of_range_say_what_was_expected() {
    for (weight, message) in [
        (
            json!(u64::MAX),
            "invalid value: integer `18446744073709551615`, expected u32",
        ),
        (json!(-1), "invalid value: integer `-1`, expected u32"),
        (
            json!(1e308),
            "invalid type: floating point `1e+308`, expected u32",
        ),
        (
            json!(0.5),
            "invalid type: floating point `0.5`, expected u32",
        ),
    ] {
        assert_eq!(
            argument_error(
                &CreateParcel,
                json!({"recipient": "Ada", "weight_g": weight})
            )
            .await,
            format!("Invalid arguments for tool 'create_parcel': argument `weight_g`: {message}")
        );
    }
}

// ---- the schema and the decoder agree ------------------------------------------------------

#[tokio::test]
async fn the_schema_and_the_decoder_agree() {
    let schema = &CreateParcel.definition().parameters;
    let validator = jsonschema::draft202012::new(schema).unwrap();
    let cases = [
        json!({}),
        json!({"recipient": "Ada"}),
        parcel(json!({})),
        parcel(json!({"note": null})),
        parcel(json!({"colour": "red"})),
        parcel(json!({"recipient": 5})),
        parcel(json!({"weight_g": -1})),
        parcel(json!({"weight_g": 12.5})),
        parcel(json!({"weight_g": null})),
        // A closed struct refuses unknown fields in both...
        parcel(json!({"dimensions": {"width_cm": 1, "height_cm": 2, "depth_cm": 3}})),
        parcel(json!({"dimensions": {"width_cm": 1, "height_cm": 2}})),
        // ... and an open one accepts them in both.
        parcel(json!({"address": {"street": "S", "city": "C", "floor": 3}})),
        parcel(json!({"packaging": "envelope"})),
        parcel(json!({"packaging": "crate"})),
        parcel(json!({"packaging": {"box": "big"}})),
        parcel(json!({"delivery": {"method": "pickup", "store_id": 4}})),
        parcel(json!({"delivery": {"method": "drone"}})),
        parcel(json!({"delivery": {"store_id": 4}})),
        parcel(json!({"tags": ["a", "b"]})),
        parcel(json!({"tags": ["a", 1]})),
        parcel(json!({"labels": {"floor": 3}})),
        parcel(json!({"labels": {"floor": "3"}})),
    ];
    for args in cases {
        let schema_accepts = validator.is_valid(&args);
        let decoder_accepts = call(&CreateParcel, args.clone()).await.is_ok();
        assert_eq!(
            schema_accepts,
            decoder_accepts,
            "the schema {} and the decoder {} {args}",
            if schema_accepts { "accepts" } else { "refuses" },
            if decoder_accepts {
                "accepts"
            } else {
                "refuses"
            },
        );
    }
}

#[tokio::test]
async fn the_decoder_accepts_integers_written_as_floats_as_the_schema_does() {
    // JSON Schema counts 1200.0 as an integer, and models do write it.
    let args = json!({"recipient": "Ada", "weight_g": 1200.0, "labels": {"floor": 3.0}});
    let validator = jsonschema::draft202012::new(&CreateParcel.definition().parameters).unwrap();
    assert!(validator.is_valid(&args));
    let out = call(&CreateParcel, args).await.unwrap();
    assert_eq!(out["weight_g"], 1200);
    assert_eq!(out["labels"], json!({"floor": 3}));
}

// ---- every kind of tool decodes the same ---------------------------------------------------

#[tokio::test]
async fn sync_async_and_method_tools_decode_the_same() {
    let depot = Arc::new(Depot).tools();
    let tools: [&dyn Tool; 3] = [&Measure, &MeasureAsync, &*depot[0]];
    let cases = [
        json!({}),
        json!([]),
        Value::Null,
        json!({"recipient": "Ada", "weight_g": "heavy"}),
        json!({"recipient": "Ada", "weight_g": 1, "colour": "red"}),
        json!({"recipient": "Ada", "weight_g": 1, "dimensions": {"width_cm": 1}}),
        object("recipient", nested_arrays(200)),
    ];
    for args in cases {
        let texts: Vec<String> = futures::future::join_all(tools.map(|tool| {
            let args = args.clone();
            async move {
                let name = &tool.definition().name;
                argument_error(tool, args)
                    .await
                    .replace(name.as_str(), "TOOL")
            }
        }))
        .await;
        assert_eq!(texts[0], texts[1], "sync and async differ on {args}");
        assert_eq!(
            texts[0], texts[2],
            "free function and method differ on {args}"
        );
    }
    for tool in tools {
        assert_eq!(
            call(tool, json!({"recipient": "Ada", "weight_g": 7}))
                .await
                .unwrap(),
            7
        );
    }
}

// ---- the decoder `#[tool]` writes, against the derived one -------------------------------

/// Measure a parcel; the decoder is the one `#[tool]` writes (no `#[serde]` attribute).
#[reticent::tool]
fn measure_written(recipient: String, weight_g: u32, dimensions: Option<Dimensions>) -> u32 {
    let _ = (recipient, dimensions);
    weight_g
}

/// Measure a parcel; the same parameters, decoded by the derived `Deserialize` (a `#[serde]`
/// attribute that changes nothing).
#[reticent::tool]
fn measure_derived(
    #[serde(rename = "recipient")] recipient: String,
    weight_g: u32,
    dimensions: Option<Dimensions>,
) -> u32 {
    let _ = (recipient, dimensions);
    weight_g
}

/// What a call with the JSON text `text` comes to, through `call_text` and, when it is a JSON
/// value, `call`: the output, or the model's text for the error.
async fn outcomes(tool: &dyn Tool, text: &str) -> Vec<Result<Value, String>> {
    let name = tool.definition().name.clone();
    let shown = |result: Result<Value, ToolError>| {
        result.map_err(|error| {
            assert!(error.is_argument(), "{error:?}");
            error.model_text(&name, false).replace(&name, "TOOL")
        })
    };
    let mut outcomes = vec![shown(tool.call_text(text, ToolContext::default()).await)];
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        outcomes.push(shown(call(tool, value).await));
    }
    outcomes
}

/// The decoder `#[tool]` writes for parameters without `#[serde]` attributes decodes what the
/// derived one decodes and refuses what it refuses, with the same messages: missing, unknown,
/// given twice (only text can say that), a bad value, an `Option` absent or `null`, from a
/// `Value` and from text.
#[tokio::test]
async fn the_written_decoder_says_what_the_derived_one_says() {
    for text in [
        r#"{"recipient": "Ada", "weight_g": 1200}"#,
        r#"{"recipient": "Ada", "weight_g": 1200, "dimensions": null}"#,
        r#"{"weight_g": 1200, "recipient": "Ada", "dimensions": {"width_cm": 3, "height_cm": 4}}"#,
        r#"{"recipient": "Ada"}"#,
        r#"{"weight_g": 1}"#,
        r#"{}"#,
        r#"null"#,
        r#"{"recipient": "Ada", "weight_g": 1200, "colour": "red"}"#,
        r#"{"colour": "red"}"#,
        r#"{"recipient": "Ada", "recipient": "Bo", "weight_g": 1}"#,
        r#"{"recipient": "Ada", "weight_g": -1}"#,
        r#"{"recipient": "Ada", "weight_g": 3.0}"#,
        r#"{"recipient": 5, "weight_g": 1}"#,
        r#"{"recipient": "Ada", "weight_g": 1, "dimensions": {"width_cm": 3}}"#,
        r#"{"recipient": "Ada", "weight_g": 1, "dimensions": {"width_cm": 3, "height_cm": 4, "depth_cm": 5}}"#,
        r#"[1, 2]"#,
        r#""text""#,
        r#"{"recipient": "Ada", "weight_g": 1"#,
    ] {
        let written = outcomes(&MeasureWritten, text).await;
        let derived = outcomes(&MeasureDerived, text).await;
        assert_eq!(written, derived, "for {text}");
    }
}
