//! Schema dialects: a table of schemas in and out for OpenAI strict mode and Gemini, the
//! refusals, and the agent converting every tool once, when it is built.
//!
//! Keywords a dialect enforces stay keywords; a `format` a Rust number type implies is never
//! written into a description (its range, when 32 bits or fewer, becomes `minimum`/`maximum`).

use std::collections::HashMap;

use reticent::{Agent, BuildError, Model, ModelResponse, SchemaDialect, ScriptedModel, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// A root object schema with these properties, `required` listing `required`.
fn root(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    })
}

fn convert(dialect: SchemaDialect, schema: &Value) -> Value {
    let converted = dialect
        .convert(schema)
        .unwrap_or_else(|e| panic!("{dialect} refused {schema}: {e}"));
    // converting again changes nothing
    assert_eq!(
        dialect.convert(&converted).unwrap(),
        converted,
        "{dialect} is not idempotent on {schema}"
    );
    converted
}

#[test]
fn standard_changes_nothing() {
    let schema = root(
        json!({"n": {"type": ["integer", "null"], "format": "uint8", "minimum": 0}}),
        &[],
    );
    assert_eq!(SchemaDialect::Standard.convert(&schema).unwrap(), schema);
    assert_eq!(SchemaDialect::default(), SchemaDialect::Standard);
}

#[test]
fn openai_strict_table() {
    let address = json!({
        "type": "object",
        "properties": {
            "street": {"type": "string"},
            "postcode": {"type": ["string", "null"], "pattern": "^[0-9]{4}$"}
        },
        "required": ["street"]
    });
    let address_strict = json!({
        "type": "object",
        "properties": {
            "street": {"type": "string"},
            "postcode": {"type": ["string", "null"], "pattern": "^[0-9]{4}$"}
        },
        "required": ["street", "postcode"],
        "additionalProperties": false
    });
    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "an optional integer becomes required and keeps null; its bounds stay keywords, the \
             format its type implies goes",
            root(
                json!({"days": {"type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 16}}),
                &[],
            ),
            root(
                json!({"days": {"type": ["integer", "null"], "minimum": 0, "maximum": 16}}),
                &["days"],
            ),
        ),
        (
            "a narrow integer format's range becomes bounds; a wide one's does not",
            root(
                json!({
                    "n": {"type": "integer", "format": "uint32", "minimum": 0},
                    "i": {"type": "integer", "format": "int32", "description": "An index."},
                    "big": {"type": "integer", "format": "uint64", "minimum": 0},
                    "x": {"type": "number", "format": "double"}
                }),
                &["n", "i", "big", "x"],
            ),
            root(
                json!({
                    "n": {"type": "integer", "minimum": 0, "maximum": 4_294_967_295u32},
                    "i": {"type": "integer", "description": "An index.", "minimum": i32::MIN, "maximum": i32::MAX},
                    "big": {"type": "integer", "minimum": 0},
                    "x": {"type": "number"}
                }),
                &["n", "i", "big", "x"],
            ),
        ),
        (
            "an optional string gains null; its pattern stays, its length follows its description",
            root(
                json!({"id": {"type": "string", "description": "The id.", "pattern": "^ORD-", "minLength": 5}}),
                &[],
            ),
            root(
                json!({"id": {"type": ["string", "null"], "description": "The id. (minLength: 5)", "pattern": "^ORD-"}}),
                &["id"],
            ),
        ),
        (
            "numeric constraints and string formats strict mode knows stay; the rest is described",
            root(
                json!({
                    "qty": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
                    "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "uniqueItems": true, "maxItems": 5},
                    "at": {"type": "string", "format": "date-time"},
                    "site": {"type": "string", "format": "uri"}
                }),
                &["qty", "tags", "at", "site"],
            ),
            root(
                json!({
                    "qty": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
                    "tags": {"type": "array", "items": {"type": "string", "description": "maxLength: 8"}, "maxItems": 5, "description": "uniqueItems: true"},
                    "at": {"type": "string", "format": "date-time"},
                    "site": {"type": "string", "description": "format: uri"}
                }),
                &["qty", "tags", "at", "site"],
            ),
        ),
        (
            "an optional property whose definition already accepts null gains no second null",
            json!({
                "type": "object",
                "properties": {"note": {"$ref": "#/$defs/Note"}},
                "$defs": {"Note": {"type": ["string", "null"]}}
            }),
            json!({
                "type": "object",
                "properties": {"note": {"$ref": "#/$defs/Note"}},
                "required": ["note"],
                "additionalProperties": false,
                "$defs": {"Note": {"type": ["string", "null"]}}
            }),
        ),
        (
            "a required property stays as it is",
            root(
                json!({"city": {"type": "string", "description": "The city."}}),
                &["city"],
            ),
            root(
                json!({"city": {"type": "string", "description": "The city."}}),
                &["city"],
            ),
        ),
        (
            "an optional enum accepts null",
            root(
                json!({"priority": {"type": "string", "enum": ["low", "high"]}}),
                &[],
            ),
            root(
                json!({"priority": {"type": ["string", "null"], "enum": ["low", "high", null]}}),
                &["priority"],
            ),
        ),
        (
            "an optional constant becomes an enum with null",
            root(json!({"kind": {"type": "string", "const": "refund"}}), &[]),
            root(
                json!({"kind": {"type": ["string", "null"], "enum": ["refund", null]}}),
                &["kind"],
            ),
        ),
        (
            "a reference with a description is wrapped, and its definition closed",
            json!({
                "type": "object",
                "properties": {"to": {"$ref": "#/$defs/Address", "description": "Where to ship."}},
                "required": ["to"],
                "additionalProperties": false,
                "$defs": {"Address": address}
            }),
            json!({
                "type": "object",
                "properties": {"to": {"anyOf": [{"$ref": "#/$defs/Address"}], "description": "Where to ship."}},
                "required": ["to"],
                "additionalProperties": false,
                "$defs": {"Address": address_strict}
            }),
        ),
        (
            "an optional reference is already a union with null",
            json!({
                "type": "object",
                "properties": {"from": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}], "description": "Return address."}},
                "additionalProperties": false,
                "$defs": {"Address": address}
            }),
            json!({
                "type": "object",
                "properties": {"from": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}], "description": "Return address."}},
                "required": ["from"],
                "additionalProperties": false,
                "$defs": {"Address": address_strict}
            }),
        ),
        (
            "an optional bare reference is wrapped in a union with null",
            json!({
                "type": "object",
                "properties": {"from": {"$ref": "#/$defs/Address"}},
                "$defs": {"Address": address}
            }),
            json!({
                "type": "object",
                "properties": {"from": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]}},
                "required": ["from"],
                "additionalProperties": false,
                "$defs": {"Address": address_strict}
            }),
        ),
        (
            "oneOf becomes anyOf, and objects inside it are closed",
            root(
                json!({"filter": {"oneOf": [
                    {"type": "string", "const": "all"},
                    {"type": "object", "properties": {"by_id": {"type": "string"}}, "required": ["by_id"]}
                ]}}),
                &["filter"],
            ),
            root(
                json!({"filter": {"anyOf": [
                    {"type": "string", "const": "all"},
                    {"type": "object", "properties": {"by_id": {"type": "string"}}, "required": ["by_id"], "additionalProperties": false}
                ]}}),
                &["filter"],
            ),
        ),
        (
            "array items are converted; array bounds stay; a default follows the description",
            root(
                json!({"lines": {"type": "array", "minItems": 1, "items": {
                    "type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "default": 1}}, "required": ["sku"]
                }}}),
                &["lines"],
            ),
            root(
                json!({"lines": {"type": "array", "minItems": 1, "items": {
                    "type": "object",
                    "properties": {"sku": {"type": "string"}, "qty": {"type": ["integer", "null"], "description": "default: 1"}},
                    "required": ["sku", "qty"],
                    "additionalProperties": false
                }}}),
                &["lines"],
            ),
        ),
        (
            "allOf with one member is that member",
            root(
                json!({"when": {"allOf": [{"type": "string", "format": "date-time"}], "description": "When."}}),
                &["when"],
            ),
            root(
                json!({"when": {"type": "string", "format": "date-time", "description": "When."}}),
                &["when"],
            ),
        ),
        (
            "an empty string in the description is quoted",
            root(json!({"note": {"type": "string", "default": ""}}), &[]),
            root(
                json!({"note": {"type": ["string", "null"], "description": "default: \"\""}}),
                &["note"],
            ),
        ),
        (
            "no parameters",
            json!({"type": "object", "properties": {}}),
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false}),
        ),
        (
            "annotations strict mode does not take are dropped",
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                   "properties": {"a": {"type": "boolean", "deprecated": true, "$comment": "x"}}, "required": ["a"]}),
            root(json!({"a": {"type": "boolean"}}), &["a"]),
        ),
    ];
    for (name, input, expected) in cases {
        assert_eq!(
            convert(SchemaDialect::OpenAiStrict, &input),
            expected,
            "case: {name}"
        );
    }
}

#[test]
fn gemini_table() {
    let address = json!({
        "type": "object",
        "description": "A postal address.",
        "properties": {
            "street": {"type": "string"},
            "postcode": {"type": ["string", "null"]}
        },
        "required": ["street"],
        "additionalProperties": false
    });
    let address_gemini = json!({
        "type": "object",
        "description": "A postal address.",
        "properties": {
            "street": {"type": "string"},
            "postcode": {"type": "string", "nullable": true}
        },
        "required": ["street"]
    });
    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "a union with null becomes nullable; Gemini keeps bounds; the format a type implies \
             goes, not into the description",
            root(
                json!({"days": {"type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 16}}),
                &[],
            ),
            json!({"type": "object", "properties": {
                "days": {"type": "integer", "nullable": true, "minimum": 0, "maximum": 16}
            }, "required": []}),
        ),
        (
            "a narrow integer format's range becomes bounds, also beside a format Gemini keeps; \
             other string formats are described",
            root(
                json!({
                    "n": {"type": "integer", "format": "uint16", "minimum": 0, "maximum": 65535},
                    "i": {"type": "integer", "format": "int32"},
                    "id": {"type": "string", "format": "uuid"}
                }),
                &["n", "i", "id"],
            ),
            json!({"type": "object", "properties": {
                "n": {"type": "integer", "minimum": 0, "maximum": 65535},
                "i": {"type": "integer", "format": "int32", "minimum": i32::MIN, "maximum": i32::MAX},
                "id": {"type": "string", "description": "format: uuid"}
            }, "required": ["n", "i", "id"]}),
        ),
        (
            "formats Gemini documents are kept",
            root(
                json!({"at": {"type": "string", "format": "date-time"}, "n": {"type": "integer", "format": "int64"}}),
                &["at", "n"],
            ),
            json!({"type": "object", "properties": {
                "at": {"type": "string", "format": "date-time"}, "n": {"type": "integer", "format": "int64"}
            }, "required": ["at", "n"]}),
        ),
        (
            "references are inlined, the property's description wins, and $defs go",
            json!({
                "type": "object",
                "properties": {"to": {"$ref": "#/$defs/Address", "description": "Where to ship."}},
                "required": ["to"],
                "additionalProperties": false,
                "$defs": {"Address": address}
            }),
            json!({
                "type": "object",
                "properties": {"to": {
                    "type": "object",
                    "description": "Where to ship.",
                    "properties": {"street": {"type": "string"}, "postcode": {"type": "string", "nullable": true}},
                    "required": ["street"]
                }},
                "required": ["to"]
            }),
        ),
        (
            "an optional reference is inlined and nullable",
            json!({
                "type": "object",
                "properties": {"from": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]}},
                "$defs": {"Address": address}
            }),
            json!({
                "type": "object",
                "properties": {"from": {
                    "type": "object",
                    "description": "A postal address.",
                    "properties": {"street": {"type": "string"}, "postcode": {"type": "string", "nullable": true}},
                    "required": ["street"],
                    "nullable": true
                }}
            }),
        ),
        (
            "a definition used twice is inlined twice",
            json!({
                "type": "object",
                "properties": {"a": {"$ref": "#/definitions/Address"}, "b": {"$ref": "#/definitions/Address"}},
                "definitions": {"Address": address}
            }),
            json!({"type": "object", "properties": {"a": address_gemini, "b": address_gemini}}),
        ),
        (
            "oneOf becomes anyOf; string constants become one-value enums",
            root(
                json!({"filter": {"oneOf": [
                    {"type": "string", "const": "all"},
                    {"type": "object", "properties": {"by_id": {"type": "string"}}, "required": ["by_id"], "additionalProperties": false}
                ]}}),
                &["filter"],
            ),
            json!({"type": "object", "properties": {"filter": {"anyOf": [
                {"type": "string", "enum": ["all"]},
                {"type": "object", "properties": {"by_id": {"type": "string"}}, "required": ["by_id"]}
            ]}}, "required": ["filter"]}),
        ),
        (
            "an enum with null is nullable; a non-string enum moves to the description",
            root(
                json!({
                    "size": {"type": ["string", "null"], "enum": ["s", "m", null]},
                    "level": {"type": "integer", "enum": [1, 2, 3], "description": "Level."}
                }),
                &["level"],
            ),
            json!({"type": "object", "properties": {
                "size": {"type": "string", "enum": ["s", "m"], "nullable": true},
                "level": {"type": "integer", "description": "Level. (enum: [1,2,3])"}
            }, "required": ["level"]}),
        ),
        (
            "a union of several types becomes anyOf",
            root(
                json!({"id": {"type": ["string", "integer", "null"]}}),
                &["id"],
            ),
            json!({"type": "object", "properties": {
                "id": {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": true}
            }, "required": ["id"]}),
        ),
        (
            "keywords Gemini lacks move to the description",
            root(
                json!({"qty": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5}, "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 5}}),
                &["qty"],
            ),
            json!({"type": "object", "properties": {
                "qty": {"type": "number", "description": "exclusiveMinimum: 0; multipleOf: 0.5"},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5, "description": "uniqueItems: true"}
            }, "required": ["qty"]}),
        ),
    ];
    for (name, input, expected) in cases {
        assert_eq!(
            convert(SchemaDialect::Gemini, &input),
            expected,
            "case: {name}"
        );
    }
}

#[test]
fn refusals_name_the_place_and_the_reason() {
    let map = root(
        json!({"labels": {"type": "object", "additionalProperties": {"type": "string"}}}),
        &["labels"],
    );
    let any = root(json!({"payload": true}), &["payload"]);
    let tuple = root(
        json!({"point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]}}),
        &["point"],
    );
    let negation = root(json!({"x": {"not": {"type": "string"}}}), &["x"]);
    let recursive = json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
        "$defs": {"Node": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            "required": ["name", "children"]
        }}
    });
    let dangling = root(json!({"a": {"$ref": "#/$defs/Missing"}}), &["a"]);
    // `$ref` beside `anyOf` means both; strict mode takes neither `allOf` nor siblings of `$ref`
    let ref_and_union = json!({
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A", "anyOf": [{"type": "string"}, {"type": "integer"}]}},
        "required": ["a"],
        "$defs": {"A": {"type": "string"}}
    });

    let cases: Vec<(SchemaDialect, &Value, &str, &str)> = vec![
        (
            SchemaDialect::OpenAiStrict,
            &map,
            "/properties/labels",
            "free-form map",
        ),
        (
            SchemaDialect::Gemini,
            &map,
            "/properties/labels",
            "free-form map",
        ),
        (
            SchemaDialect::OpenAiStrict,
            &any,
            "/properties/payload",
            "a value of any type",
        ),
        (
            SchemaDialect::Gemini,
            &any,
            "/properties/payload",
            "a value of any type",
        ),
        (
            SchemaDialect::OpenAiStrict,
            &tuple,
            "/properties/point",
            "tuple",
        ),
        (SchemaDialect::Gemini, &tuple, "/properties/point", "tuple"),
        (
            SchemaDialect::OpenAiStrict,
            &negation,
            "/properties/x",
            "`not`",
        ),
        (
            SchemaDialect::Gemini,
            &recursive,
            "/properties/root/properties/children/items",
            "recursive type `Node`",
        ),
        (
            SchemaDialect::Gemini,
            &dangling,
            "/properties/a",
            "has no definition",
        ),
        (
            SchemaDialect::OpenAiStrict,
            &ref_and_union,
            "/properties/a",
            "a reference beside `anyOf`",
        ),
    ];
    for (dialect, schema, path, reason) in cases {
        let error = dialect.convert(schema).unwrap_err();
        assert_eq!(error.dialect(), dialect);
        assert_eq!(error.path(), path, "{error}");
        assert!(error.reason().contains(reason), "{error}");
        assert!(error.to_string().contains(path), "{error}");
    }
    // OpenAI keeps references, so recursion is fine there
    assert!(SchemaDialect::OpenAiStrict.convert(&recursive).is_ok());
}

// ---- through the agent --------------------------------------------------------------------

/// A scripted model that asks for a dialect.
fn dialected(dialect: SchemaDialect) -> ScriptedModel {
    ScriptedModel::new(vec![ModelResponse::text("done")]).with_dialect(dialect)
}

/// A postal address.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)] // only decoded
struct Address {
    /// Street and number.
    street: String,
    /// The postcode, if there is one.
    postcode: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Priority {
    Low,
    High,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // only decoded
enum Filter {
    All,
    ById(String),
    Range { from: u32, to: u32 },
}

/// Create a shipment.
#[reticent::tool]
fn create_shipment(
    /// Where to ship.
    to: Address,
    /// Where returns go.
    return_to: Option<Address>,
    /// How urgent.
    priority: Option<Priority>,
    /// Which orders.
    filter: Filter,
    /// Labels.
    tags: Vec<String>,
    /// Weight in grams.
    weight_grams: u32,
) -> String {
    let _ = (to, return_to, priority, filter, tags, weight_grams);
    "created".into()
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)] // only decoded
struct Category {
    name: String,
    children: Vec<Category>,
}

/// Save a category tree.
#[reticent::tool]
fn save_tree(root: Category) -> String {
    root.name
}

/// Set labels.
#[reticent::tool]
fn set_labels(labels: HashMap<String, String>) -> usize {
    labels.len()
}

/// Every object closed and every property required, all the way down.
fn assert_strict(schema: &Value, at: &str) {
    match schema {
        Value::Object(node) => {
            if let Some(Value::Object(properties)) = node.get("properties") {
                assert_eq!(node["additionalProperties"], false, "open object at {at}");
                let required: Vec<&str> = node["required"]
                    .as_array()
                    .unwrap_or_else(|| panic!("no required at {at}"))
                    .iter()
                    .map(|r| r.as_str().unwrap())
                    .collect();
                let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
                assert_eq!(required, keys, "not all required at {at}");
            }
            // keywords strict mode does not take
            for keyword in [
                "oneOf",
                "allOf",
                "minLength",
                "maxLength",
                "uniqueItems",
                "default",
            ] {
                assert!(!node.contains_key(keyword), "`{keyword}` left at {at}");
            }
            // a type's number format is dropped; a string format stays only if strict mode knows it
            if let Some(format) = node.get("format") {
                let known = ["date-time", "time", "date", "duration", "email", "hostname"];
                let known = [known.as_slice(), &["ipv4", "ipv6", "uuid"]].concat();
                assert!(
                    known.contains(&format.as_str().unwrap()),
                    "format {format} at {at}"
                );
            }
            for (key, value) in node {
                assert_strict(value, &format!("{at}/{key}"));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                assert_strict(item, &format!("{at}/{i}"));
            }
        }
        _ => {}
    }
}

/// No references, no type unions, no `additionalProperties`, all the way down.
fn assert_gemini(schema: &Value, at: &str) {
    match schema {
        Value::Object(node) => {
            for keyword in ["$ref", "$defs", "additionalProperties", "oneOf", "const"] {
                assert!(!node.contains_key(keyword), "`{keyword}` left at {at}");
            }
            if let Some(t) = node.get("type") {
                assert!(t.is_string() && t != "null", "type {t} at {at}");
            }
            for (key, value) in node {
                assert_gemini(value, &format!("{at}/{key}"));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                assert_gemini(item, &format!("{at}/{i}"));
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn the_agent_sends_the_converted_schemas() {
    for dialect in [SchemaDialect::OpenAiStrict, SchemaDialect::Gemini] {
        let model = dialected(dialect);
        let agent = Agent::builder(model.clone())
            .tool(CreateShipment)
            .build()
            .unwrap();
        let expected = dialect
            .convert(&CreateShipment.definition().parameters)
            .unwrap();
        assert_eq!(agent.definitions()[0].parameters, expected);
        match dialect {
            SchemaDialect::OpenAiStrict => assert_strict(&expected, ""),
            _ => assert_gemini(&expected, ""),
        }
        agent.run("Ship it.").await.unwrap();
        let requests = model.requests();
        assert_eq!(requests[0].tools[0].parameters, expected);
        assert_eq!(requests[0].tools[0].description, "Create a shipment.");
    }
}

#[tokio::test]
async fn standard_models_get_the_schemas_as_generated() {
    let model = ScriptedModel::new(vec![ModelResponse::text("done")]);
    let agent = Agent::builder(model.clone())
        .tool(CreateShipment)
        .tool(SaveTree)
        .tool(SetLabels)
        .build()
        .unwrap();
    agent.run("Go.").await.unwrap();
    let tools = &model.requests()[0].tools;
    assert_eq!(tools[0], *CreateShipment.definition());
    assert_eq!(tools[1], *SaveTree.definition());
    assert_eq!(tools[2], *SetLabels.definition());
}

#[test]
fn a_schema_the_dialect_cannot_express_is_refused_when_the_agent_is_built() {
    let error = Agent::builder(dialected(SchemaDialect::Gemini))
        .tool(CreateShipment)
        .tool(SaveTree)
        .build()
        .unwrap_err();
    let BuildError::UnsupportedSchema { tool, reason } = &error else {
        panic!("expected UnsupportedSchema, got {error:?}");
    };
    assert_eq!(tool, "save_tree");
    assert!(reason.contains("recursive type `Category`"), "{reason}");
    assert!(
        error.to_string().starts_with(
            "the parameters of tool `save_tree` cannot be sent to this model: Gemini cannot express"
        ),
        "{error}"
    );

    let error = Agent::builder(dialected(SchemaDialect::OpenAiStrict))
        .tool(SetLabels)
        .build()
        .unwrap_err();
    let BuildError::UnsupportedSchema { tool, reason } = &error else {
        panic!("expected UnsupportedSchema, got {error:?}");
    };
    assert_eq!(tool, "set_labels");
    assert!(reason.contains("/properties/labels"), "{reason}");
    assert!(reason.contains("free-form map"), "{reason}");

    // strict mode keeps references, so the recursive type is fine there
    Agent::builder(dialected(SchemaDialect::OpenAiStrict))
        .tool(SaveTree)
        .build()
        .unwrap();
}

#[test]
fn a_model_behind_arc_or_box_keeps_its_dialect() {
    let model = dialected(SchemaDialect::Gemini);
    let shared: std::sync::Arc<dyn Model> = std::sync::Arc::new(model.clone());
    assert_eq!(shared.schema_dialect(), SchemaDialect::Gemini);
    let boxed: Box<dyn Model> = Box::new(model);
    assert_eq!(boxed.schema_dialect(), SchemaDialect::Gemini);
    assert!(Agent::builder(shared).tool(SaveTree).build().is_err());
}
