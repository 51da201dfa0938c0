//! What a tool's schema promises is enforced by the tool: a value outside a constraint the
//! model was shown (`minimum`, `pattern`, `maxItems`, an `enum` on a string, ...) is an
//! argument error naming the path and the constraint, before the tool runs, whoever calls it:
//! the agent, the MCP server, or a caller of `Tool::call` itself. A schema whose constraints
//! cannot be compiled is refused when the agent or the server is built.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use reticent::mcp::McpServer;
use reticent::mcp::rmcp::model::CallToolRequestParams;
use reticent::{
    Agent, ArgumentError, BuildError, ModelResponse, ScriptedModel, Tool, ToolContext,
    ToolDefinition, ToolError, Toolbox,
    tool::{ArgumentValidator, ParametersSchema, ToolFuture},
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// A piece of work.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // only decoded
struct Task {
    /// How much work, from 1 to 5.
    #[schemars(range(min = 1, max = 5))]
    effort: u8,
    /// A short name: lowercase letters, digits and dashes.
    #[schemars(length(min = 3, max = 12), regex(pattern = r"^[a-z][a-z0-9-]*$"))]
    slug: String,
    /// At most three labels.
    #[serde(default)]
    #[schemars(length(max = 3))]
    labels: Vec<String>,
    /// `low` or `high`.
    #[serde(default)]
    #[schemars(extend("enum" = ["low", "high"]))]
    priority: Option<String>,
    /// Minutes, in steps of five, under a day.
    #[serde(default)]
    #[schemars(extend("multipleOf" = 5, "exclusiveMaximum" = 1440))]
    minutes: Option<u32>,
    #[serde(default)]
    #[schemars(extend("uniqueItems" = true))]
    reviewers: Vec<String>,
    #[serde(default)]
    steps: Vec<Step>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)] // only decoded
struct Step {
    #[schemars(range(min = 1))]
    minutes: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Colour {
    Red,
    Blue,
}

/// Counts the calls that reached the tools' bodies.
#[derive(Default)]
struct Planner {
    runs: AtomicUsize,
}

#[reticent::tools]
impl Planner {
    /// Plan a task, perhaps after another one.
    #[tool]
    fn plan_task(&self, task: Task, after: Option<Task>) -> String {
        self.runs.fetch_add(1, Ordering::SeqCst);
        format!("planned {} after {:?}", task.slug, after.map(|t| t.slug))
    }

    /// Paint something: the colour is a Rust enum, which its own decoding checks.
    #[tool]
    fn paint(&self, colour: Colour, tags: Vec<String>) -> String {
        self.runs.fetch_add(1, Ordering::SeqCst);
        format!("{colour:?} {}", tags.len())
    }
}

/// A tool written by hand whose schema says `effort` is 1 to 5: it checks its arguments with
/// the validator of its schema, as a `#[tool]` does.
struct Rate {
    definition: ToolDefinition,
    validator: Option<ArgumentValidator>,
}

impl Rate {
    fn new(pattern: &str) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "effort": {"type": "integer", "minimum": 1, "maximum": 5},
                "code": {"type": "string", "pattern": pattern}
            },
            "required": ["effort"],
            "additionalProperties": false
        });
        Self {
            // a schema that does not compile is refused when the agent is built, not here
            validator: ArgumentValidator::new(&parameters).ok().flatten(),
            definition: ToolDefinition::new("rate", "Rate the effort.", parameters),
        }
    }
}

impl Tool for Rate {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, args: Value, _cx: ToolContext) -> ToolFuture<'_> {
        if let Some(validator) = &self.validator
            && let Err(error) = validator.check(&args)
        {
            return ToolFuture::ready(Err(error.into()));
        }
        ToolFuture::ready(Ok(args["effort"].clone()))
    }
}

fn task(fields: Value) -> Value {
    let mut task = json!({"effort": 3, "slug": "write-docs"});
    for (key, value) in fields.as_object().unwrap() {
        task[key] = value.clone();
    }
    json!({"task": task})
}

/// What the model was shown for one call of `tool` with `arguments`, run by an agent.
async fn shown(tools: Vec<Arc<dyn Tool>>, tool: &str, arguments: Value) -> String {
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", tool, arguments),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model).tools(tools).build().unwrap();
    let result = agent.run("go").await.unwrap();
    reticent_tests::transcript::shown_texts(&result.messages)[0].to_owned()
}

#[tokio::test]
async fn a_value_outside_a_range_is_an_argument_error_naming_the_path() {
    let planner = Arc::new(Planner::default());
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "plan_task", task(json!({"effort": 9}))),
        ModelResponse::tool_call("c2", "plan_task", task(json!({"effort": 5}))),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .toolbox(Arc::clone(&planner))
        .build()
        .unwrap();
    let result = agent.run("Plan it.").await.unwrap();
    assert_eq!(
        reticent_tests::transcript::shown_texts(&result.messages),
        [
            "Invalid arguments for tool 'plan_task': argument `task.effort`: 9 is greater than \
             the maximum of 5",
            "planned write-docs after None",
        ]
    );
    // the refused call never reached the tool
    assert_eq!(planner.runs.load(Ordering::SeqCst), 1);
    let failure = &result.tool_failures[0];
    assert_eq!(failure.kind, "argument");
    assert_eq!(failure.arguments, task(json!({"effort": 9})));
    let error = failure.error.downcast_ref::<ArgumentError>().unwrap();
    assert_eq!(error.path(), Some("task.effort"));
}

#[tokio::test]
async fn a_schema_written_by_hand_is_enforced_the_same() {
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Rate::new("^[A-Z]{2}$"))];
    assert_eq!(
        shown(tools.clone(), "rate", json!({"effort": 9})).await,
        "Invalid arguments for tool 'rate': argument `effort`: 9 is greater than the maximum of 5"
    );
    assert_eq!(
        shown(tools.clone(), "rate", json!({"effort": 2, "code": "abc"})).await,
        "Invalid arguments for tool 'rate': argument `code`: \"abc\" does not match the pattern \
         \"^[A-Z]{2}$\""
    );
    assert_eq!(shown(tools, "rate", json!({"effort": 2})).await, "2");
}

#[tokio::test]
async fn every_constraint_says_what_it_asks() {
    let cases = [
        (
            task(json!({"effort": 0})),
            "argument `task.effort`: 0 is less than the minimum of 1",
        ),
        (
            task(json!({"slug": "ab"})),
            "argument `task.slug`: \"ab\" is shorter than 3 characters",
        ),
        (
            task(json!({"slug": "a-very-long-slug"})),
            "argument `task.slug`: \"a-very-long-slug\" is longer than 12 characters",
        ),
        (
            task(json!({"slug": "Docs"})),
            "argument `task.slug`: \"Docs\" does not match the pattern \"^[a-z][a-z0-9-]*$\"",
        ),
        (
            task(json!({"labels": ["a", "b", "c", "d"]})),
            "argument `task.labels`: has 4 items, more than the maximum of 3",
        ),
        (
            task(json!({"priority": "urgent"})),
            "argument `task.priority`: \"urgent\" is not one of [\"low\",\"high\"]",
        ),
        (
            task(json!({"minutes": 7})),
            "argument `task.minutes`: 7 is not a multiple of 5",
        ),
        (
            task(json!({"minutes": 1440})),
            "argument `task.minutes`: 1440 is not less than the exclusive maximum of 1440",
        ),
        (
            task(json!({"reviewers": ["ada", "ada"]})),
            "argument `task.reviewers`: has duplicate items; each item must be unique",
        ),
        (
            task(json!({"steps": [{"minutes": 5}, {"minutes": 0}]})),
            "argument `task.steps[1].minutes`: 0 is less than the minimum of 1",
        ),
        // an optional struct: the schema's `anyOf` with null; the member the value is meant
        // for says what is wrong
        (
            {
                let mut args = task(json!({}));
                args["after"] = json!({"effort": 7, "slug": "setup"});
                args
            },
            "argument `after.effort`: 7 is greater than the maximum of 5",
        ),
        (
            task(json!({"effort": 0, "slug": "X", "labels": ["1", "2", "3", "4"]})),
            "argument `task.effort`: 0 is less than the minimum of 1; argument `task.slug`: \"X\" \
             is shorter than 3 characters; argument `task.slug`: \"X\" does not match the pattern \
             \"^[a-z][a-z0-9-]*$\"; and more",
        ),
    ];
    for (arguments, expected) in cases {
        let tools = Arc::new(Planner::default()).tools();
        assert_eq!(
            shown(tools, "plan_task", arguments.clone()).await,
            format!("Invalid arguments for tool 'plan_task': {expected}"),
            "{arguments}"
        );
    }
}

#[tokio::test]
async fn the_shape_is_left_to_the_tools_decoding() {
    let tools = Arc::new(Planner::default()).tools();
    // a wrong type alone: the decoder says what it expected
    assert_eq!(
        shown(tools.clone(), "plan_task", task(json!({"effort": "high"}))).await,
        "Invalid arguments for tool 'plan_task': argument `task.effort`: invalid type: string \"high\", \
         expected u8"
    );
    assert_eq!(
        shown(tools.clone(), "plan_task", json!({})).await,
        "Invalid arguments for tool 'plan_task': missing required argument `task`"
    );
    // beside a broken constraint, the constraint is reported first
    assert_eq!(
        shown(
            tools,
            "plan_task",
            task(json!({"effort": 9, "labels": "one"}))
        )
        .await,
        "Invalid arguments for tool 'plan_task': argument `task.effort`: 9 is greater than the \
         maximum of 5"
    );
}

#[tokio::test]
async fn a_rust_enum_and_the_bounds_of_its_integer_type_are_the_decoders() {
    // nothing in `paint`'s schema is beyond what its types enforce: no validator at all
    let paint = &Arc::new(Planner::default()).tools()[1];
    assert_eq!(paint.definition().name, "paint");
    assert!(
        ArgumentValidator::new(&paint.definition().parameters)
            .unwrap()
            .is_none()
    );
    assert_eq!(
        shown(
            vec![Arc::clone(paint)],
            "paint",
            json!({"colour": "green", "tags": []})
        )
        .await,
        "Invalid arguments for tool 'paint': argument `colour`: unknown variant `green`, \
         expected `red` or `blue`"
    );
    for schema in [
        {
            let mut s = ParametersSchema::new();
            s.parameter::<u8>("a", None, true)
                .parameter::<i32>("b", None, true)
                .parameter::<Option<u64>>("c", None, false)
                .parameter::<Vec<String>>("d", None, true)
                .parameter::<Option<Colour>>("e", None, false);
            s.finish()
        },
        Task::plain_schema(),
    ] {
        assert!(
            ArgumentValidator::new(&schema).unwrap().is_none(),
            "{schema:#}"
        );
    }
    // a set's schema says its items are unique: a duplicate the set would drop is refused
    let mut set = ParametersSchema::new();
    set.parameter::<HashSet<String>>("tags", None, true);
    let validator = ArgumentValidator::new(&set.finish()).unwrap().unwrap();
    assert_eq!(
        validator
            .check(&json!({"tags": ["a", "a"]}))
            .unwrap_err()
            .message(),
        "argument `tags`: has duplicate items; each item must be unique"
    );
}

impl Task {
    /// A schema of the same shape as `Task`'s, without its constraints.
    fn plain_schema() -> Value {
        let mut s = ParametersSchema::new();
        s.parameter::<u8>("effort", None, true)
            .parameter::<String>("slug", None, true)
            .parameter::<Vec<String>>("labels", None, false);
        s.finish()
    }
}

#[tokio::test]
async fn arguments_as_text_are_checked_the_same() {
    let tools = Arc::new(Planner::default()).tools();
    let text = task(json!({"effort": 9})).to_string();
    assert_eq!(
        shown(tools.clone(), "plan_task", Value::String(text)).await,
        "Invalid arguments for tool 'plan_task': argument `task.effort`: 9 is greater than the \
         maximum of 5"
    );
    let valid = task(json!({})).to_string();
    assert_eq!(
        shown(tools.clone(), "plan_task", Value::String(valid)).await,
        "planned write-docs after None"
    );
    // text that is not JSON is the tool's to report, as before
    let not_json = shown(tools, "plan_task", Value::String("{\"task\": ".into())).await;
    assert!(
        not_json.starts_with(
            "Invalid arguments for tool 'plan_task': the arguments are not valid JSON"
        ),
        "{not_json}"
    );
}

#[tokio::test]
async fn the_mcp_server_checks_the_same() {
    let planner = Arc::new(Planner::default());
    let server = McpServer::builder()
        .toolbox(Arc::clone(&planner))
        .build()
        .unwrap();
    let connection = reticent_tests::mcp::connect(server).await;
    let Value::Object(arguments) = task(json!({"slug": "Docs"})) else {
        unreachable!()
    };
    let result = connection
        .client
        .call_tool(CallToolRequestParams::new("plan_task").with_arguments(arguments))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        reticent_tests::mcp::text(&result),
        "Invalid arguments for tool 'plan_task': argument `task.slug`: \"Docs\" does not match \
         the pattern \"^[a-z][a-z0-9-]*$\""
    );
    assert_eq!(planner.runs.load(Ordering::SeqCst), 0);
}

/// `Tool::call` itself enforces the schema: a caller that is neither the agent nor the MCP
/// server gets the same argument error, from a `Value` and from text, and the body never runs.
#[tokio::test]
async fn a_tool_called_directly_is_checked() {
    let planner = Arc::new(Planner::default());
    let plan = Arc::clone(&planner).tools().remove(0);
    let failure = plan
        .call(task(json!({"effort": 9})), ToolContext::default())
        .await
        .unwrap_err();
    let ToolError::Argument(error) = failure else {
        panic!("expected an argument error, got {failure:?}");
    };
    assert_eq!(
        error.message(),
        "argument `task.effort`: 9 is greater than the maximum of 5"
    );
    assert_eq!(error.path(), Some("task.effort"));
    let text = task(json!({"slug": "Docs"})).to_string();
    let failure = plan
        .call_text(&text, ToolContext::default())
        .await
        .unwrap_err();
    let ToolError::Argument(error) = failure else {
        panic!("expected an argument error, got {failure:?}");
    };
    assert_eq!(
        error.message(),
        "argument `task.slug`: \"Docs\" does not match the pattern \"^[a-z][a-z0-9-]*$\""
    );
    assert_eq!(planner.runs.load(Ordering::SeqCst), 0);
    // within its constraints it runs
    let output = plan
        .call(task(json!({"effort": 5})), ToolContext::default())
        .await
        .unwrap();
    assert_eq!(output, "planned write-docs after None");
    assert_eq!(planner.runs.load(Ordering::SeqCst), 1);
}

#[test]
fn a_schema_whose_constraints_cannot_be_compiled_is_refused_when_built() {
    let error = Agent::builder(ScriptedModel::new(vec![]))
        .tool(Rate::new("(unclosed"))
        .build()
        .unwrap_err();
    let BuildError::UncheckableSchema { name, reason } = &error else {
        panic!("expected UncheckableSchema, got {error:?}");
    };
    assert_eq!(name, "rate");
    assert!(reason.contains("(unclosed"), "{reason}");
    assert!(
        error
            .to_string()
            .starts_with("the parameters of tool `rate` cannot be checked against their schema: "),
        "{error}"
    );

    let error = McpServer::builder()
        .tool(Rate::new("(unclosed"))
        .build()
        .unwrap_err();
    assert!(
        matches!(&error, reticent::BuildError::UncheckableSchema { name, .. } if name == "rate"),
        "{error:?}"
    );
}

#[tokio::test]
async fn echoed_values_are_bounded() {
    let tools = Arc::new(Planner::default()).tools();
    let huge = "x".repeat(1 << 20);
    let text = shown(tools, "plan_task", task(json!({"slug": huge}))).await;
    assert!(text.len() < 600, "{} bytes", text.len());
    assert!(text.contains("bytes cut"), "{text}");
    assert!(text.ends_with("is longer than 12 characters"), "{text}");
}

/// Counts names whose words start with no digit: a pattern that needs backtracking.
#[reticent::tool]
fn count_names(
    #[schemars(inner(regex(pattern = r"^((?!\d)\w+\s?)+$")))] names: Vec<String>,
) -> usize {
    names.len()
}

/// A tool checks a few short strings as it is called, with nothing to wait for; a check that
/// may take many matches against a pattern that needs backtracking goes to the blocking pool,
/// and the call's future waits for it, under the call's time limit.
#[tokio::test]
async fn a_small_check_is_made_in_place_and_a_costly_one_on_the_pool() {
    let small = CountNames.call(json!({"names": ["ada"]}), ToolContext::default());
    assert!(small.is_ready());
    assert_eq!(small.await.unwrap(), json!(1));
    let refused = CountNames.call(json!({"names": ["4ever"]}), ToolContext::default());
    assert!(refused.is_ready());
    assert!(matches!(refused.await, Err(ToolError::Argument(_))));
    let names: Vec<String> = (0..20).map(|i| "ab ".repeat(i + 1)).collect();
    let costly = CountNames.call(json!({ "names": names }), ToolContext::default());
    assert!(!costly.is_ready());
    assert_eq!(costly.await.unwrap(), json!(20));
}
