//! `#[serde(..)]` and `#[schemars(..)]` on a tool function's parameters mean what they mean on a
//! struct field: `#[tool]` derives `Deserialize` and `JsonSchema` for a struct whose fields are
//! the parameters. So each attribute decodes as on a struct field, the schema says so, and the
//! schema and the decoder agree; `call` and `call_text` come to the same outcome.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use reticent::{Tool, ToolContext, ToolError, Toolbox};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};

fn ten() -> u32 {
    10
}

/// "90s", "5m" or "2h" as a duration, or null: the developer's own decoding, whose errors are
/// shown in full.
fn duration<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Duration>, D::Error> {
    let Some(text) = Option::<String>::deserialize(deserializer)? else {
        return Ok(None);
    };
    let (number, unit) = text.split_at(text.len().saturating_sub(1));
    let number: u64 = number.parse().map_err(|_| {
        serde::de::Error::custom(format!(
            "`{text}` is not a duration; write a number and a unit, like `90s`"
        ))
    })?;
    match unit {
        "s" => Ok(Some(Duration::from_secs(number))),
        "m" => Ok(Some(Duration::from_secs(number * 60))),
        "h" => Ok(Some(Duration::from_secs(number * 3600))),
        _ => Err(serde::de::Error::custom(format!(
            "`{text}` has no unit; write `s`, `m` or `h` after the number"
        ))),
    }
}

/// A `with` module: a comma-separated list. (`schemars` serializes a `#[serde(default)]`
/// field's default with it, for the schema's `default`, as on any struct field.)
mod comma_list {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        let text = String::deserialize(d)?;
        Ok(text.split(',').map(|s| s.trim().to_owned()).collect())
    }

    pub(crate) fn serialize<S: Serializer>(tags: &[String], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&tags.join(","))
    }
}

/// A type whose own `TryFrom` refuses some values: its error is the developer's, shown in full.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(try_from = "String")]
struct Sku(String);

impl TryFrom<String> for Sku {
    type Error = String;
    fn try_from(value: String) -> Result<Self, String> {
        if value.starts_with("SKU-") {
            Ok(Self(value))
        } else {
            Err(format!("`{value}` is not a SKU; SKUs look like SKU-0042"))
        }
    }
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Assignee {
    #[serde(rename = "teamTags")]
    team_tags: Vec<String>,
}

/// Search the catalog.
#[reticent::tool]
#[allow(clippy::too_many_arguments)]
fn search(
    /// What to look for.
    #[serde(rename = "q", alias = "query")]
    text: String,
    /// Results per page.
    #[serde(default = "ten")]
    #[schemars(range(min = 1, max = 50))]
    per_page: u32,
    /// The page, from 0.
    #[serde(default)]
    page: u32,
    /// How long to wait for the catalog.
    #[serde(default, deserialize_with = "duration")]
    #[schemars(with = "Option<String>", regex(pattern = r"^\d+[smh]$"))]
    wait: Option<Duration>,
    /// Tags, comma-separated.
    #[serde(default, with = "comma_list")]
    #[schemars(with = "String", length(min = 1, max = 200))]
    tags: Vec<String>,
    /// Ignored by the description below.
    #[schemars(description = "The SKU, like SKU-0042.", example = "SKU-0042")]
    sku: Option<Sku>,
    #[schemars(extend("x-ui" = "hidden"))]
    #[serde(rename = "assignee")]
    r#for: Option<Assignee>,
) -> Value {
    json!({
        "text": text,
        "per_page": per_page,
        "page": page,
        "wait": wait.map(|wait| wait.as_secs()),
        "tags": tags,
        "sku": sku,
        "for": r#for,
    })
}

struct Catalog;

impl Catalog {
    fn page_size() -> u8 {
        25
    }
}

#[reticent::tools]
impl Catalog {
    /// List the catalog.
    #[tool]
    fn list(
        &self,
        /// Results per page.
        #[serde(default = "Self::page_size", rename = "size")]
        page_size: u8,
    ) -> u8 {
        page_size
    }
}

fn cx() -> ToolContext {
    ToolContext::new("call_1", "search")
}

fn call(tool: &dyn Tool, args: Value) -> Result<Value, ToolError> {
    tool.call(args, cx()).now_or_never().expect("ready")
}

/// The model's text for arguments that must be refused, the same from the value and its text.
fn refused(tool: &dyn Tool, args: Value) -> String {
    let name = tool.definition().name.clone();
    let from_value = match call(tool, args.clone()) {
        Ok(out) => panic!("`{name}` accepted {args} and returned {out}"),
        Err(error) => {
            assert!(error.is_argument(), "{error:?}");
            error.model_text(&name, false)
        }
    };
    let from_text = tool
        .call_text(&args.to_string(), cx())
        .now_or_never()
        .expect("ready")
        .expect_err("refused from text");
    assert_eq!(from_text.model_text(&name, false), from_value, "{args}");
    from_value
}

/// The output for arguments that decode, the same from the value and its text.
fn accepted(tool: &dyn Tool, args: Value) -> Value {
    let out = call(tool, args.clone()).unwrap_or_else(|e| panic!("{args}: {e:?}"));
    let from_text = tool
        .call_text(&args.to_string(), cx())
        .now_or_never()
        .expect("ready")
        .unwrap_or_else(|e| panic!("{args} from text: {e:?}"));
    assert_eq!(from_text, out);
    out
}

fn properties() -> Value {
    Search.definition().parameters["properties"].clone()
}

fn search_error(args: Value) -> String {
    refused(&Search, args).replace("Invalid arguments for tool 'search': ", "")
}

// ---- rename ----------------------------------------------------------------------------------

#[test]
fn a_renamed_parameter_is_read_and_described_under_its_new_name() {
    assert_eq!(accepted(&Search, json!({"q": "lamp"}))["text"], "lamp");
    let names: Vec<&str> = Search.definition().parameters["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        names,
        ["q", "per_page", "page", "wait", "tags", "sku", "assignee"]
    );
    assert_eq!(Search.definition().parameters["required"], json!(["q"]));
    // The Rust name is not an argument.
    assert_eq!(
        search_error(json!({"q": "lamp", "text": "x"})),
        "unknown argument `text`; expected one of `q`, `query`, `per_page`, `page`, `wait`, `tags`, `sku`, `assignee`"
    );
    assert_eq!(search_error(json!({})), "missing required argument `q`");
}

#[test]
fn a_rename_in_a_tools_impl_and_a_default_naming_self() {
    let tools = Arc::new(Catalog).tools();
    let list = &*tools[0];
    assert_eq!(accepted(list, json!({})), 25);
    assert_eq!(accepted(list, json!({"size": 3})), 3);
    let schema = &list.definition().parameters;
    assert_eq!(schema["properties"]["size"]["default"], 25);
    assert!(schema.get("required").is_none(), "{schema}");
}

// ---- alias -----------------------------------------------------------------------------------

#[test]
fn an_alias_is_read_too_and_not_twice() {
    assert_eq!(accepted(&Search, json!({"query": "desk"}))["text"], "desk");
    assert_eq!(
        search_error(json!({"q": "desk", "query": "lamp"})),
        "argument `q` is given twice, under two of its names"
    );
}

// ---- default ---------------------------------------------------------------------------------

#[test]
fn a_defaulted_parameter_may_be_absent_and_the_schema_says_so() {
    let out = accepted(&Search, json!({"q": "lamp"}));
    assert_eq!((&out["per_page"], &out["page"]), (&json!(10), &json!(0)));
    let out = accepted(&Search, json!({"q": "lamp", "per_page": 5, "page": 2}));
    assert_eq!((&out["per_page"], &out["page"]), (&json!(5), &json!(2)));
    let properties = properties();
    assert_eq!(properties["per_page"]["default"], 10);
    assert_eq!(properties["page"]["default"], 0);
    // Present, a default is not a way to send null: as on a struct field.
    assert_eq!(
        search_error(json!({"q": "lamp", "page": null})),
        "argument `page`: invalid type: null, expected u32"
    );
}

// ---- deserialize_with and with ---------------------------------------------------------------

#[test]
fn the_developers_own_decoding_is_used_and_its_errors_are_shown_in_full() {
    assert_eq!(
        accepted(&Search, json!({"q": "lamp", "wait": "2m"}))["wait"],
        120
    );
    assert_eq!(accepted(&Search, json!({"q": "lamp"}))["wait"], Value::Null);
    // the schema's pattern is checked first; what it lets through, the developer's decoding
    // refuses with its own words
    assert_eq!(
        search_error(json!({"q": "lamp", "wait": "soon"})),
        "argument `wait`: \"soon\" does not match the pattern \"^\\\\d+[smh]$\""
    );
    assert_eq!(
        search_error(json!({"q": "lamp", "wait": "99999999999999999999s"})),
        "argument `wait`: `99999999999999999999s` is not a duration; write a number and a unit, \
         like `90s`"
    );
    assert_eq!(
        accepted(&Search, json!({"q": "lamp", "tags": "oak, pine"}))["tags"],
        json!(["oak", "pine"])
    );
    // `try_from` on the parameter's type: its error too.
    assert_eq!(
        search_error(json!({"q": "lamp", "sku": "42"})),
        "argument `sku`: `42` is not a SKU; SKUs look like SKU-0042"
    );
    assert_eq!(
        accepted(&Search, json!({"q": "lamp", "sku": "SKU-7"}))["sku"],
        "SKU-7"
    );
}

#[test]
fn the_schema_of_a_parameter_decoded_by_the_developer_is_the_one_given() {
    let properties = properties();
    assert_eq!(properties["wait"]["type"], json!(["string", "null"]));
    assert_eq!(properties["wait"]["default"], Value::Null);
    assert_eq!(properties["tags"]["type"], "string");
}

// ---- schemars: descriptions and constraints ----------------------------------------------------

#[test]
fn schemars_attributes_say_what_they_say_on_a_struct_field() {
    let properties = properties();
    assert_eq!(properties["q"]["description"], "What to look for.");
    assert_eq!(
        (
            &properties["per_page"]["minimum"],
            &properties["per_page"]["maximum"]
        ),
        (&json!(1), &json!(50))
    );
    assert_eq!(properties["wait"]["pattern"], r"^\d+[smh]$");
    assert_eq!(
        (
            &properties["tags"]["minLength"],
            &properties["tags"]["maxLength"]
        ),
        (&json!(1), &json!(200))
    );
    // `description` replaces the doc comment; `example` adds an example.
    assert_eq!(properties["sku"]["description"], "The SKU, like SKU-0042.");
    assert_eq!(properties["sku"]["examples"], json!(["SKU-0042"]));
    assert_eq!(properties["assignee"]["x-ui"], "hidden");
}

#[test]
fn a_constraint_is_the_schemas_as_on_a_struct_field() {
    // `range`, `length` and `regex` describe the parameter to the model, as they do on a
    // struct field; serde's derive does not check them, the tool's call does, against its
    // schema, before it decodes.
    let validator = jsonschema::draft202012::new(&Search.definition().parameters).unwrap();
    let args = json!({"q": "lamp", "per_page": 500});
    assert!(!validator.is_valid(&args));
    assert_eq!(
        search_error(args),
        "argument `per_page`: 500 is greater than the maximum of 50"
    );
    assert_eq!(
        accepted(&Search, json!({"q": "lamp", "per_page": 50}))["per_page"],
        50
    );
}

// ---- nested paths ------------------------------------------------------------------------------

#[test]
fn a_path_into_a_renamed_parameter_uses_the_names_sent() {
    assert_eq!(
        search_error(json!({"q": "lamp", "assignee": {"teamTags": ["a", 7]}})),
        "argument `assignee.teamTags[1]`: invalid type: integer `7`, expected a string"
    );
    let error = call(&Search, json!({"q": "lamp", "assignee": {"teamTags": "a"}})).unwrap_err();
    let ToolError::Argument(error) = error else {
        panic!("not an argument error: {error:?}")
    };
    assert_eq!(error.path(), Some("assignee.teamTags"));
}

// ---- the schema and the decoder agree ----------------------------------------------------------

#[test]
fn the_schema_and_the_decoder_agree() {
    let validator = jsonschema::draft202012::new(&Search.definition().parameters).unwrap();
    let cases = [
        json!({}),
        json!({"q": "lamp"}),
        json!({"q": 5}),
        json!({"q": "lamp", "text": "x"}),
        json!({"q": "lamp", "per_page": 20, "page": 3}),
        json!({"q": "lamp", "per_page": "20"}),
        json!({"q": "lamp", "page": null}),
        json!({"q": "lamp", "page": -1}),
        json!({"q": "lamp", "wait": "90s"}),
        json!({"q": "lamp", "wait": null}),
        json!({"q": "lamp", "wait": 90}),
        json!({"q": "lamp", "tags": "a,b"}),
        json!({"q": "lamp", "tags": ["a", "b"]}),
        json!({"q": "lamp", "sku": "SKU-1"}),
        json!({"q": "lamp", "sku": null}),
        json!({"q": "lamp", "sku": 1}),
        json!({"q": "lamp", "assignee": {"teamTags": []}}),
        json!({"q": "lamp", "assignee": {"teamTags": [1]}}),
        json!({"q": "lamp", "assignee": {"team_tags": []}}),
        json!({"q": "lamp", "assignee": null}),
    ];
    for args in cases {
        let schema_accepts = validator.is_valid(&args);
        let decoder_accepts = call(&Search, args.clone()).is_ok();
        assert_eq!(
            schema_accepts, decoder_accepts,
            "the schema and the decoder disagree on {args}"
        );
    }
}

#[test]
fn where_they_differ_as_on_a_struct_field_the_decoder_accepts_more() {
    // An alias is read by the decoder and not named by the schema (which shows the model the
    // name to use); a value the developer's own decoder refuses is a string to the schema.
    let validator = jsonschema::draft202012::new(&Search.definition().parameters).unwrap();
    let alias = json!({"query": "lamp"});
    assert!(!validator.is_valid(&alias));
    assert!(call(&Search, alias).is_ok());
    let bad_sku = json!({"q": "lamp", "sku": "42"});
    assert!(validator.is_valid(&bad_sku));
    assert!(call(&Search, bad_sku).is_err());
}
