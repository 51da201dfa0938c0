//! The output schema in a tool's definition: set by `#[tool]` when the output type implements
//! `JsonSchema`, decided from the type when the crate compiles; its root always an object (as
//! MCP requires), wrapping an output that is not one as `{"result": OUTPUT}`.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::FutureExt;
use reticent::{ArgumentError, Tool, ToolContext, ToolDefinition, Toolbox};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

/// An order.
#[derive(Debug, Serialize, JsonSchema)]
struct Order {
    id: String,
    /// The total, in cents.
    total_cents: u64,
    lines: Vec<Line>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Line {
    sku: String,
    quantity: u32,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    Open,
    Shipped,
}

/// Output that has no schema.
#[derive(Debug, Serialize)]
struct Opaque {
    blob: String,
}

fn order(id: String) -> Order {
    Order {
        id,
        total_cents: 4200,
        lines: vec![Line {
            sku: "SKU-1".into(),
            quantity: 2,
        }],
    }
}

/// Look up an order.
#[reticent::tool]
fn lookup(id: String) -> Order {
    order(id)
}

/// Look up an order, failing.
#[reticent::tool]
async fn lookup_fallible(id: String) -> Result<Order, ArgumentError> {
    Ok(order(id))
}

/// An alias of `Result`, as crates write them.
mod api {
    pub(crate) type Result<T> = std::result::Result<T, reticent::ArgumentError>;
}

/// Look up an order through an alias of `Result`.
#[reticent::tool]
fn lookup_aliased(id: String) -> api::Result<Order> {
    Ok(order(id))
}

/// Count the orders.
#[reticent::tool]
fn count() -> u64 {
    2
}

/// The status of an order.
#[reticent::tool]
fn order_status(id: String) -> Result<Status, ArgumentError> {
    let _ = id;
    Ok(Status::Shipped)
}

/// The ids of the orders.
#[reticent::tool]
fn ids() -> Vec<String> {
    vec!["ORD-1".into(), "ORD-2".into()]
}

/// An order, if there is one.
#[reticent::tool]
fn maybe() -> Option<Order> {
    None
}

/// Totals by customer.
#[reticent::tool]
fn totals() -> BTreeMap<String, u64> {
    BTreeMap::from([("ada".into(), 4200)])
}

/// Opaque output.
#[reticent::tool]
fn opaque_output() -> Opaque {
    Opaque {
        blob: String::new(),
    }
}

/// Raw JSON.
#[reticent::tool]
fn raw() -> Value {
    json!({"anything": true})
}

/// Nothing.
#[reticent::tool]
fn nothing(id: String) {
    let _ = id;
}

/// Look up an order, without an output schema.
#[reticent::tool(output_schema = false)]
fn lookup_unschematized(id: String) -> Order {
    order(id)
}

struct Desk;

#[reticent::tools]
impl Desk {
    /// Look up an order (method).
    #[tool]
    fn lookup_method(&self, id: String) -> Result<Order, ArgumentError> {
        Ok(order(id))
    }

    /// The status of an order (method), returning `Self`'s associated type.
    #[tool]
    fn status_method(&self) -> Vec<Status> {
        vec![Status::Open]
    }
}

fn output_schema(tool: &dyn Tool) -> &Value {
    tool.definition()
        .output_schema
        .as_ref()
        .unwrap_or_else(|| panic!("`{}` has no output schema", tool.definition().name))
}

fn call(tool: &dyn Tool, args: Value) -> Value {
    tool.call(args, ToolContext::default())
        .now_or_never()
        .expect("ready")
        .expect("succeeds")
}

/// The structured content an MCP server sends for `output`: the output itself, or wrapped.
fn structured(definition: &ToolDefinition, output: Value) -> Value {
    if definition.wraps_output() {
        json!({ "result": output })
    } else {
        output
    }
}

#[test]
fn an_object_output_has_its_own_schema_at_the_root() {
    let schema = output_schema(&Lookup);
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["id", "total_cents", "lines"]));
    assert_eq!(
        schema["properties"]["total_cents"]["description"],
        "The total, in cents."
    );
    // The types it refers to are defined at the root, where `#/$defs/..` points.
    assert_eq!(
        schema["properties"]["lines"]["items"],
        json!({"$ref": "#/$defs/Line"})
    );
    assert_eq!(schema["$defs"]["Line"]["type"], "object");
    assert!(!Lookup.definition().wraps_output());
    assert!(schema.get("$schema").is_none());
}

#[test]
fn a_result_uses_its_ok_type_however_it_is_written() {
    let expected = output_schema(&Lookup);
    assert_eq!(output_schema(&LookupFallible), expected);
    assert_eq!(output_schema(&LookupAliased), expected);
    let tools = Arc::new(Desk).tools();
    assert_eq!(output_schema(&*tools[0]), expected);
}

#[test]
fn an_output_that_is_not_an_object_is_wrapped_as_result() {
    assert_eq!(
        output_schema(&Count),
        &json!({
            "type": "object",
            "properties": {"result": {"type": "integer", "format": "uint64", "minimum": 0}},
            "required": ["result"],
            "x-reticent-wrap-result": true
        })
    );
    assert!(Count.definition().wraps_output());

    assert_eq!(
        output_schema(&OrderStatus)["properties"]["result"],
        json!({"type": "string", "enum": ["open", "shipped"]})
    );
    // What the output's schema refers to is defined at the root, not inside `result`.
    let maybe = output_schema(&Maybe);
    assert_eq!(
        maybe["properties"]["result"],
        json!({"anyOf": [{"$ref": "#/$defs/Order"}, {"type": "null"}]})
    );
    assert_eq!(maybe["$defs"]["Order"]["type"], "object");
    assert!(maybe["properties"]["result"].get("$defs").is_none());

    assert_eq!(
        output_schema(&Ids)["properties"]["result"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    // An `Option` of an object is an object or null: not an object at the root.
    assert!(Maybe.definition().wraps_output());
    // A `Value` can be anything.
    assert!(Raw.definition().wraps_output());
    assert_eq!(output_schema(&Raw)["properties"]["result"], json!({}));
    let tools = Arc::new(Desk).tools();
    assert!(tools[1].definition().wraps_output());
}

#[test]
fn a_map_is_an_object() {
    let schema = output_schema(&Totals);
    assert_eq!(schema["type"], "object");
    assert!(!Totals.definition().wraps_output());
}

#[test]
fn no_output_schema_without_json_schema_without_output_or_when_opted_out() {
    assert_eq!(OpaqueOutput.definition().output_schema, None);
    assert_eq!(Nothing.definition().output_schema, None);
    assert_eq!(LookupUnschematized.definition().output_schema, None);
    // Opting out leaves the rest of the definition as it was.
    assert_eq!(
        LookupUnschematized.definition().parameters,
        Lookup.definition().parameters
    );
    for tool in [&OpaqueOutput as &dyn Tool, &Nothing, &LookupUnschematized] {
        assert!(!tool.definition().wraps_output());
    }
}

#[test]
fn the_output_matches_its_schema_as_structured_content() {
    let desk = Arc::new(Desk).tools();
    let cases: Vec<(&dyn Tool, Value)> = vec![
        (&Lookup, json!({"id": "ORD-1"})),
        (&LookupFallible, json!({"id": "ORD-1"})),
        (&Count, json!({})),
        (&OrderStatus, json!({"id": "ORD-1"})),
        (&Ids, json!({})),
        (&Maybe, json!({})),
        (&Totals, json!({})),
        (&Raw, json!({})),
        (&*desk[0], json!({"id": "ORD-1"})),
        (&*desk[1], json!({})),
    ];
    for (tool, args) in cases {
        let definition = tool.definition();
        let schema = output_schema(tool);
        assert_eq!(schema["type"], "object", "{}", definition.name);
        assert!(
            jsonschema::meta::is_valid(schema),
            "{}: {schema:#}",
            definition.name
        );
        let validator = jsonschema::draft202012::new(schema).unwrap();
        let content = structured(definition, call(tool, args));
        assert!(
            validator.is_valid(&content),
            "{}: {content} does not match {schema:#}",
            definition.name
        );
    }
}

#[test]
fn the_output_schema_round_trips_through_json() {
    let definition = Count.definition();
    let text = serde_json::to_string(definition).unwrap();
    assert!(text.contains("\"output_schema\""));
    let back: ToolDefinition = serde_json::from_str(&text).unwrap();
    assert_eq!(&back, definition);
    assert!(back.wraps_output());
}
