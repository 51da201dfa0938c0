//! The JSON Schema of a tool's arguments, derived from the signature and doc comments.

use std::collections::{BTreeMap, HashMap};

use reticent::{Tool, ToolContext};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// A postal address.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Address {
    /// Street and number.
    street: String,
    city: String,
    postcode: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Priority {
    Low,
    Normal,
    Urgent,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "method", rename_all = "snake_case")]
#[allow(dead_code)]
enum Delivery {
    Courier { address: Address },
    Pickup { store_id: u32 },
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Category {
    name: String,
    children: Vec<Category>,
}

/// Check that the service is up.
#[reticent::tool]
fn ping() -> &'static str {
    "pong"
}

/// Report the call id.
#[reticent::tool]
fn call_id(cx: &ToolContext) -> String {
    cx.call_id().to_owned()
}

/// Create an order.
#[reticent::tool]
#[allow(clippy::too_many_arguments)]
async fn create_order(
    /// The customer's id, like "CUS-7".
    customer: String,
    /// A note for the packer.
    /// Shown on the packing slip.
    note: Option<String>,
    quantity: u32,
    /// Gift-wrap the order.
    gift: Option<bool>,
    tags: Vec<String>,
    /// Where to ship.
    address: Address,
    billing: Option<Address>,
    priority: Option<Priority>,
    delivery: Delivery,
    parcels: Vec<Address>,
    attributes: HashMap<String, u32>,
    sorted: BTreeMap<String, String>,
    category: Option<Category>,
) -> String {
    let _ = (
        note, quantity, gift, tags, address, billing, priority, delivery, parcels, attributes,
        sorted, category,
    );
    customer
}

fn parameters(tool: &dyn Tool) -> &Value {
    &tool.definition().parameters
}

/// Every `$ref` string in `schema`.
fn refs(schema: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![schema];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(target)) = map.get("$ref") {
                    out.push(target.as_str());
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    out
}

/// The schema `reference` points at, from the root's `$defs`.
fn resolve<'a>(root: &'a Value, reference: &str) -> &'a Value {
    let name = reference
        .strip_prefix("#/$defs/")
        .unwrap_or_else(|| panic!("`{reference}` does not point into `$defs`"));
    root["$defs"]
        .get(name)
        .unwrap_or_else(|| panic!("`{reference}` points at nothing"))
}

#[test]
fn no_parameters_is_an_empty_closed_object() {
    let expected = json!({"type": "object", "properties": {}, "additionalProperties": false});
    assert_eq!(parameters(&Ping), &expected);
    // A context parameter is not a parameter the model sends.
    assert_eq!(parameters(&CallId), &expected);
}

#[test]
fn the_root_is_a_closed_object() {
    let schema = parameters(&CreateOrder);
    assert_eq!(schema["type"], "object");
    assert!(schema["properties"].is_object());
    assert_eq!(schema["additionalProperties"], false);
}

#[test]
fn properties_follow_the_parameters_in_order() {
    let names: Vec<&str> = parameters(&CreateOrder)["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        names,
        [
            "customer",
            "note",
            "quantity",
            "gift",
            "tags",
            "address",
            "billing",
            "priority",
            "delivery",
            "parcels",
            "attributes",
            "sorted",
            "category"
        ]
    );
}

#[test]
fn required_lists_exactly_the_parameters_that_are_not_options() {
    assert_eq!(
        parameters(&CreateOrder)["required"],
        json!([
            "customer",
            "quantity",
            "tags",
            "address",
            "delivery",
            "parcels",
            "attributes",
            "sorted"
        ])
    );
}

#[test]
fn optional_parameters_also_accept_null() {
    let properties = &parameters(&CreateOrder)["properties"];
    assert_eq!(properties["gift"]["type"], json!(["boolean", "null"]));
    assert_eq!(
        properties["note"]["type"],
        json!(["string", "null"]),
        "{properties:#}"
    );
    assert_eq!(
        properties["billing"],
        json!({"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]})
    );
}

#[test]
fn parameter_doc_comments_become_descriptions() {
    let properties = &parameters(&CreateOrder)["properties"];
    assert_eq!(
        properties["customer"],
        json!({"type": "string", "description": "The customer's id, like \"CUS-7\"."})
    );
    assert_eq!(
        properties["note"]["description"],
        "A note for the packer.\nShown on the packing slip."
    );
    assert_eq!(properties["gift"]["description"], "Gift-wrap the order.");
    // Undocumented parameters have no description.
    assert_eq!(
        properties["quantity"],
        json!({"type": "integer", "format": "uint32", "minimum": 0})
    );
    assert!(properties["tags"].get("description").is_none());
}

#[test]
fn a_parameter_doc_comment_describes_the_parameter_not_the_type() {
    let schema = parameters(&CreateOrder);
    assert_eq!(
        schema["properties"]["address"],
        json!({"$ref": "#/$defs/Address", "description": "Where to ship."})
    );
    // The type keeps its own description in `$defs`.
    assert_eq!(
        schema["$defs"]["Address"]["description"],
        "A postal address."
    );
}

#[test]
fn nested_structs_live_in_defs() {
    let schema = parameters(&CreateOrder);
    assert_eq!(
        schema["$defs"]["Address"],
        json!({
            "description": "A postal address.",
            "type": "object",
            "properties": {
                "street": {"type": "string", "description": "Street and number."},
                "city": {"type": "string"},
                "postcode": {"type": ["string", "null"]}
            },
            "required": ["street", "city"]
        })
    );
}

#[test]
fn enums_live_in_defs() {
    let schema = parameters(&CreateOrder);
    assert_eq!(
        schema["properties"]["priority"],
        json!({"anyOf": [{"$ref": "#/$defs/Priority"}, {"type": "null"}]})
    );
    assert_eq!(
        schema["$defs"]["Priority"],
        json!({"type": "string", "enum": ["low", "normal", "urgent"]})
    );

    let delivery = &schema["$defs"]["Delivery"]["oneOf"];
    assert_eq!(delivery.as_array().unwrap().len(), 2);
    assert_eq!(
        delivery[0]["properties"]["method"],
        json!({"type": "string", "const": "courier"})
    );
    assert_eq!(
        delivery[0]["properties"]["address"],
        json!({"$ref": "#/$defs/Address"})
    );
    assert_eq!(
        delivery[1]["properties"]["method"],
        json!({"type": "string", "const": "pickup"})
    );
    assert_eq!(delivery[1]["required"], json!(["method", "store_id"]));
}

#[test]
fn vecs_are_arrays() {
    let properties = &parameters(&CreateOrder)["properties"];
    assert_eq!(
        properties["tags"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(
        properties["parcels"],
        json!({"type": "array", "items": {"$ref": "#/$defs/Address"}})
    );
}

#[test]
fn maps_are_objects_with_typed_values() {
    let properties = &parameters(&CreateOrder)["properties"];
    assert_eq!(
        properties["attributes"],
        json!({
            "type": "object",
            "additionalProperties": {"type": "integer", "format": "uint32", "minimum": 0}
        })
    );
    assert_eq!(
        properties["sorted"],
        json!({"type": "object", "additionalProperties": {"type": "string"}})
    );
}

#[test]
fn every_ref_resolves_and_every_definition_is_used() {
    let schema = parameters(&CreateOrder);
    let references = refs(schema);
    assert!(!references.is_empty());
    for reference in &references {
        resolve(schema, reference);
    }
    let defs = schema["$defs"].as_object().unwrap();
    let mut names: Vec<&str> = defs.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["Address", "Category", "Delivery", "Priority"]);
    for name in names {
        assert!(
            references.contains(&format!("#/$defs/{name}").as_str()),
            "`{name}` is defined but not used"
        );
    }
}

#[test]
fn a_recursive_type_refers_to_itself() {
    let schema = parameters(&CreateOrder);
    let category = resolve(schema, "#/$defs/Category");
    assert_eq!(
        category["properties"]["children"],
        json!({"type": "array", "items": {"$ref": "#/$defs/Category"}})
    );
}

#[test]
fn the_schema_compiles_as_json_schema_2020_12() {
    for tool in [&CreateOrder as &dyn Tool, &Ping, &CallId] {
        let schema = parameters(tool);
        assert!(
            jsonschema::meta::is_valid(schema),
            "{} has an invalid schema: {schema:#}",
            tool.definition().name
        );
        jsonschema::draft202012::new(schema).unwrap_or_else(|e| {
            panic!(
                "{} has a schema that does not compile: {e}",
                tool.definition().name
            )
        });
    }
}

#[test]
fn the_schema_describes_valid_arguments() {
    let validator = jsonschema::draft202012::new(parameters(&CreateOrder)).unwrap();
    let args = json!({
        "customer": "CUS-7",
        "quantity": 2,
        "tags": ["fragile"],
        "address": {"street": "Main St 1", "city": "Oslo"},
        "billing": null,
        "priority": "urgent",
        "delivery": {"method": "pickup", "store_id": 4},
        "parcels": [],
        "attributes": {"weight_g": 1200},
        "sorted": {},
        "category": {"name": "books", "children": [{"name": "poetry", "children": []}]}
    });
    assert!(validator.is_valid(&args), "{:?}", validator.validate(&args));
    let without_required = json!({"customer": "CUS-7"});
    assert!(!validator.is_valid(&without_required));
}
