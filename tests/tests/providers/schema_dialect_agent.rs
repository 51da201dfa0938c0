//! A dialect's schema and the tool's decoding agree, end to end through an agent whose model
//! asks for the dialect (`ScriptedModel::with_dialect`): under OpenAI's strict mode an optional
//! field is required and nullable, the model sends `null`, and the agent removes that `null`
//! (at the top level, nested, through `$ref`, `items` and `anyOf`) so the field's default
//! applies; a `null` the tool's own schema accepts is left for the tool; Gemini's schema lets
//! the model leave the field out.

use std::sync::{Arc, Mutex};

use reticent::{
    Agent, ModelResponse, SchemaDialect, ScriptedModel, Tool, ToolContext, ToolDefinition,
    tool::ToolFuture,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Assignee {
    /// Who.
    #[schemars(length(min = 2))]
    name: String,
    /// Teams they belong to.
    #[serde(default)]
    team_tags: Vec<String>,
    /// Their desk, when known.
    desk: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Change {
    Assign {
        who: Assignee,
        #[serde(default)]
        notify: bool,
    },
    Rename {
        to: String,
        #[serde(default)]
        reason: String,
    },
}

/// Assign a ticket; returns what it decoded.
#[reticent::tool]
fn assign(
    ticket: String,
    assignee: Assignee,
    backups: Vec<Assignee>,
    watcher: Option<Assignee>,
    change: Option<Change>,
) -> Value {
    json!({
        "ticket": ticket,
        "assignee": assignee,
        "backups": backups,
        "watcher": watcher,
        "change": change,
    })
}

/// Runs one call of `tool` with `arguments` on an agent whose model asks for `dialect`: what
/// the model was shown, and the schema it was offered.
async fn run(dialect: SchemaDialect, tool: Arc<dyn Tool>, arguments: Value) -> (String, Value) {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", &tool.definition().name, arguments),
        ModelResponse::text("done"),
    ])
    .with_dialect(dialect);
    let agent = Agent::builder(model).tool_arc(tool).build().unwrap();
    let offered = agent.definitions()[0].parameters.clone();
    let result = agent.run("go").await.unwrap();
    let shown = result
        .messages
        .iter()
        .find_map(|m| match m {
            reticent::Message::Tool(r) => Some(r.content.clone()),
            _ => None,
        })
        .unwrap();
    (shown, offered)
}

fn accepts(schema: &Value, arguments: &Value) -> bool {
    jsonschema::draft202012::new(schema)
        .unwrap()
        .is_valid(arguments)
}

/// What a strict model sends: every property, `null` for the ones it leaves unset.
fn strict_arguments() -> Value {
    let person = |name: &str| json!({"name": name, "teamTags": null, "desk": null});
    json!({
        "ticket": "T-1",
        "assignee": person("Ada"),
        "backups": [person("Bo"), {"name": "Cy", "teamTags": ["ops"], "desk": "4F"}],
        "watcher": person("Di"),
        "change": {"kind": "assign", "who": person("Ed"), "notify": null}
    })
}

#[tokio::test]
async fn strict_mode_shows_optional_fields_as_nullable_and_the_agent_removes_that_null() {
    let (shown, offered) = run(
        SchemaDialect::OpenAiStrict,
        Arc::new(Assign),
        strict_arguments(),
    )
    .await;
    let assignee = &offered["$defs"]["Assignee"];
    assert_eq!(
        assignee["properties"]["teamTags"]["type"],
        json!(["array", "null"])
    );
    assert_eq!(assignee["required"], json!(["name", "teamTags", "desk"]));
    assert!(accepts(&offered, &strict_arguments()));

    let person = |name: &str| json!({"name": name, "teamTags": [], "desk": null});
    let decoded: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(
        decoded,
        json!({
            "ticket": "T-1",
            "assignee": person("Ada"),
            "backups": [person("Bo"), {"name": "Cy", "teamTags": ["ops"], "desk": "4F"}],
            "watcher": person("Di"),
            "change": {"kind": "assign", "who": person("Ed"), "notify": false}
        })
    );

    // the other member of the `anyOf`
    let mut rename = strict_arguments();
    rename["change"] = json!({"kind": "rename", "to": "T-2", "reason": null});
    let (shown, _) = run(SchemaDialect::OpenAiStrict, Arc::new(Assign), rename).await;
    let decoded: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(
        decoded["change"],
        json!({"kind": "rename", "to": "T-2", "reason": ""})
    );
}

#[tokio::test]
async fn the_standard_schema_and_the_decoder_both_refuse_that_null() {
    let arguments = strict_arguments();
    let (shown, offered) = run(SchemaDialect::Standard, Arc::new(Assign), arguments.clone()).await;
    assert!(!accepts(&offered, &arguments));
    assert_eq!(
        shown,
        "Invalid arguments for tool 'assign': argument `assignee.teamTags`: invalid type: null, expected \
         a sequence"
    );
}

#[tokio::test]
async fn a_constraint_strict_mode_only_describes_is_enforced_at_its_nested_path() {
    let (_, offered) = run(
        SchemaDialect::OpenAiStrict,
        Arc::new(Assign),
        strict_arguments(),
    )
    .await;
    assert_eq!(
        offered["$defs"]["Assignee"]["properties"]["name"],
        json!({"type": "string", "description": "Who. (minLength: 2)"})
    );
    let mut arguments = strict_arguments();
    arguments["backups"][1]["name"] = json!("C");
    let (shown, _) = run(SchemaDialect::OpenAiStrict, Arc::new(Assign), arguments).await;
    assert_eq!(
        shown,
        "Invalid arguments for tool 'assign': argument `backups[1].name`: \"C\" is shorter than 2 \
         characters"
    );
}

#[tokio::test]
async fn gemini_lets_the_model_leave_the_field_out_and_refuses_a_null_it_did_not_allow() {
    let arguments = json!({
        "ticket": "T-1",
        "assignee": {"name": "Ada"},
        "backups": [],
    });
    let (shown, offered) = run(SchemaDialect::Gemini, Arc::new(Assign), arguments).await;
    let assignee = &offered["properties"]["assignee"];
    assert_eq!(assignee["required"], json!(["name"]));
    assert_eq!(
        assignee["properties"]["teamTags"],
        json!({"type": "array", "items": {"type": "string"}, "default": [], "description": "Teams they belong to."})
    );
    let decoded: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(
        decoded["assignee"],
        json!({"name": "Ada", "teamTags": [], "desk": null})
    );

    let (shown, _) = run(SchemaDialect::Gemini, Arc::new(Assign), strict_arguments()).await;
    assert!(
        shown.starts_with(
            "Invalid arguments for tool 'assign': argument `assignee.teamTags`: invalid type: null"
        ),
        "{shown}"
    );
}

/// A tool written by hand that reports the arguments it was given, and whether they came as
/// JSON text or as a value.
struct Probe {
    definition: ToolDefinition,
    seen: Mutex<Vec<(&'static str, Value)>>,
}

impl Probe {
    fn new() -> Arc<Self> {
        let parameters = json!({
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}, "default": []},
                "note": {"type": ["string", "null"]}
            },
            "additionalProperties": false
        });
        Arc::new(Self {
            definition: ToolDefinition::new("probe", "Report the arguments.", parameters),
            seen: Mutex::new(Vec::new()),
        })
    }

    fn seen(&self) -> Vec<(&'static str, Value)> {
        self.seen.lock().unwrap().clone()
    }
}

impl Tool for Probe {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, args: Value, _cx: ToolContext) -> ToolFuture<'_> {
        self.seen.lock().unwrap().push(("value", args.clone()));
        ToolFuture::ready(Ok(args))
    }

    fn call_text(&self, text: &str, _cx: ToolContext) -> ToolFuture<'_> {
        let args: Value = serde_json::from_str(text).unwrap();
        self.seen.lock().unwrap().push(("text", args.clone()));
        ToolFuture::ready(Ok(args))
    }
}

#[tokio::test]
async fn only_a_null_the_conversion_added_is_removed() {
    let probe = Probe::new();
    let (_, offered) = run(
        SchemaDialect::OpenAiStrict,
        probe.clone(),
        json!({"tags": null, "note": null}),
    )
    .await;
    assert_eq!(
        offered["properties"],
        json!({
            "tags": {"type": ["array", "null"], "items": {"type": "string"}, "description": "default: []"},
            "note": {"type": ["string", "null"]}
        })
    );
    // `tags` was made nullable by the conversion: its null is removed; `note` accepted null
    // already: the tool gets it
    assert_eq!(probe.seen(), [("value", json!({"note": null}))]);
}

#[tokio::test]
async fn text_without_a_null_is_decoded_straight_from_the_text() {
    let probe = Probe::new();
    run(
        SchemaDialect::OpenAiStrict,
        probe.clone(),
        Value::String(r#"{"tags": ["a"], "note": "n"}"#.into()),
    )
    .await;
    run(
        SchemaDialect::OpenAiStrict,
        probe.clone(),
        Value::String(r#"{"tags": null, "note": "n"}"#.into()),
    )
    .await;
    // a tool whose conversion added no null takes the text path whatever the text holds
    run(
        SchemaDialect::Standard,
        probe.clone(),
        Value::String(r#"{"note": null}"#.into()),
    )
    .await;
    assert_eq!(
        probe.seen(),
        [
            ("text", json!({"tags": ["a"], "note": "n"})),
            ("value", json!({"note": "n"})),
            ("text", json!({"note": null})),
        ]
    );
}
