//! What a tool tells the model about itself: its name, description, annotations and time
//! limit, for free functions and for the tools of a `#[tools]` impl block.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reticent::{ArgumentError, CancellationToken, Tool, ToolAnnotations, ToolContext, Toolbox};
use serde_json::{Value, json};

async fn call(tool: &dyn Tool, args: Value) -> Result<Value, reticent::ToolError> {
    tool.call(args, ToolContext::default()).await
}

// ---- names ---------------------------------------------------------------------------------

/// Look up an order by id.
#[reticent::tool]
async fn lookup_order(order_id: String) -> Result<String, ArgumentError> {
    Ok(order_id)
}

/// The current weather in a city.
#[reticent::tool(name = "get-weather")]
fn weather_now(city: String) -> String {
    format!("sunny in {city}")
}

/// Whether a pattern is non-empty.
#[reticent::tool]
fn r#match(pattern: String) -> bool {
    !pattern.is_empty()
}

#[test]
fn the_name_is_the_function_name() {
    assert_eq!(LookupOrder.definition().name, "lookup_order");
}

#[test]
fn name_option_overrides_the_name_but_not_the_struct() {
    // The struct is still named after the function.
    assert_eq!(WeatherNow.definition().name, "get-weather");
}

#[test]
fn a_raw_identifier_is_named_without_its_prefix() {
    assert_eq!(Match.definition().name, "match");
}

#[tokio::test]
async fn the_function_stays_callable_as_written() {
    assert_eq!(lookup_order("ORD-1".into()).await.unwrap(), "ORD-1");
    assert_eq!(weather_now("Oslo".into()), "sunny in Oslo");
    assert!(r#match("x".into()));
}

#[test]
fn the_generated_struct_is_a_plain_unit_value() {
    fn make<T: Default + Copy + std::fmt::Debug + Tool>() -> T {
        T::default()
    }
    let tool: LookupOrder = make();
    assert_eq!(format!("{tool:?}"), "LookupOrder");
    assert_eq!(tool.definition().name, "lookup_order");
}

// ---- descriptions --------------------------------------------------------------------------

/// Search the catalog.
///
/// Matches titles and authors; returns at most 20 results.
///     Indented lines keep their indentation.
#[reticent::tool]
fn search_catalog(query: String) -> Vec<String> {
    vec![query]
}

/// Notes for the developers that the model is not shown.
#[reticent::tool(description = "Cancel an order that has not shipped yet.")]
fn cancel_order(order_id: String) -> String {
    order_id
}

#[reticent::tool(description = "Check that the service is up.")]
fn ping() -> &'static str {
    "pong"
}

#[test]
fn the_description_is_the_doc_comment() {
    assert_eq!(
        LookupOrder.definition().description,
        "Look up an order by id."
    );
}

#[test]
fn a_multi_line_doc_comment_keeps_its_lines() {
    assert_eq!(
        SearchCatalog.definition().description,
        "Search the catalog.\n\
         \n\
         Matches titles and authors; returns at most 20 results.\n    \
         Indented lines keep their indentation."
    );
}

#[test]
fn description_option_overrides_the_doc_comment() {
    assert_eq!(
        CancelOrder.definition().description,
        "Cancel an order that has not shipped yet."
    );
}

#[test]
fn description_option_stands_in_for_a_missing_doc_comment() {
    assert_eq!(
        Ping.definition().description,
        "Check that the service is up."
    );
}

// ---- annotations ---------------------------------------------------------------------------

/// Read.
#[reticent::tool(read_only)]
fn only_reads() {}

/// Destroy.
#[reticent::tool(destructive)]
fn destroys() {}

/// Repeat.
#[reticent::tool(idempotent)]
fn repeats() {}

/// Reach out.
#[reticent::tool(open_world)]
fn reaches_out() {}

/// Delete a remote file.
#[reticent::tool(destructive, idempotent, open_world)]
fn delete_remote_file() {}

/// Fetch a web page.
#[reticent::tool(read_only, idempotent, open_world)]
fn fetch_page() {}

/// Explicit values.
#[reticent::tool(read_only = true, open_world = false, idempotent = false)]
fn explicit_flags() {}

fn annotations(tool: &dyn Tool) -> ToolAnnotations {
    tool.definition().annotations
}

#[test]
fn annotations_default_to_all_false() {
    let all_false = ToolAnnotations::new()
        .read_only(false)
        .destructive(false)
        .idempotent(false)
        .open_world(false);
    assert_eq!(ToolAnnotations::default(), all_false);
    assert_eq!(annotations(&LookupOrder), all_false);
    assert_eq!(annotations(&WeatherNow), all_false);
}

#[test]
fn each_annotation_sets_its_own_flag() {
    let none = ToolAnnotations::default();
    assert_eq!(annotations(&OnlyReads), none.read_only(true));
    assert_eq!(annotations(&Destroys), none.destructive(true));
    assert_eq!(annotations(&Repeats), none.idempotent(true));
    assert_eq!(annotations(&ReachesOut), none.open_world(true));
}

#[test]
fn annotations_combine() {
    assert_eq!(
        annotations(&DeleteRemoteFile),
        ToolAnnotations::new()
            .destructive(true)
            .idempotent(true)
            .open_world(true)
    );
    assert_eq!(
        annotations(&FetchPage),
        ToolAnnotations::new()
            .read_only(true)
            .idempotent(true)
            .open_world(true)
    );
}

#[test]
fn annotations_take_explicit_booleans() {
    assert_eq!(
        annotations(&ExplicitFlags),
        ToolAnnotations::new().read_only(true)
    );
}

// ---- title and approval --------------------------------------------------------------------

/// Refund a payment.
#[reticent::tool(title = "Refund a payment", destructive, needs_approval)]
fn refund(payment_id: String) -> String {
    payment_id
}

#[test]
fn title_sets_the_definitions_title() {
    let definition = Refund.definition();
    assert_eq!(definition.title.as_deref(), Some("Refund a payment"));
    assert_eq!(definition.name, "refund");
    assert!(definition.annotations.destructive);
    // Without it, there is none: the name is what the model calls the tool by.
    assert_eq!(LookupOrder.definition().title, None);
}

#[test]
fn needs_approval_asks_for_a_persons_approval() {
    assert!(Refund.needs_approval());
    assert!(!LookupOrder.needs_approval());
    assert!(!WeatherNow.needs_approval());
}

// ---- time limits ---------------------------------------------------------------------------

/// Fast.
#[reticent::tool(timeout = "150ms")]
fn fast() {}

/// Slow.
#[reticent::tool(read_only, timeout = "5s")]
async fn slow() {}

/// Slower.
#[reticent::tool(timeout = "1m30s")]
fn slower() {}

#[test]
fn timeout_option_sets_the_tools_time_limit() {
    assert_eq!(Fast.timeout(), Some(Duration::from_millis(150)));
    assert_eq!(Slow.timeout(), Some(Duration::from_secs(5)));
    assert_eq!(Slower.timeout(), Some(Duration::from_secs(90)));
}

#[test]
fn a_tool_without_timeout_option_has_no_time_limit() {
    assert_eq!(LookupOrder.timeout(), None);
    assert_eq!(FetchPage.timeout(), None);
}

#[test]
fn timeout_does_not_disturb_other_options() {
    assert!(Slow.definition().annotations.read_only);
    assert_eq!(Slow.definition().name, "slow");
}

// ---- the definition ------------------------------------------------------------------------

#[test]
fn the_definition_is_computed_once() {
    let first = LookupOrder.definition();
    let second = LookupOrder.definition();
    assert!(std::ptr::eq(first, second));

    let from_threads: Vec<usize> = (0..4)
        .map(|_| std::thread::spawn(|| std::ptr::from_ref(LookupOrder.definition()) as usize))
        .collect::<Vec<_>>()
        .into_iter()
        .map(|handle| handle.join().unwrap())
        .collect();
    assert!(
        from_threads
            .iter()
            .all(|&address| address == std::ptr::from_ref(first) as usize)
    );
}

#[test]
fn each_tool_has_its_own_definition() {
    assert!(!std::ptr::eq(
        LookupOrder.definition(),
        WeatherNow.definition()
    ));
}

#[test]
fn the_definition_round_trips_through_json() {
    let definition = WeatherNow.definition();
    let value = serde_json::to_value(definition).unwrap();
    assert_eq!(value["name"], "get-weather");
    assert_eq!(value["description"], "The current weather in a city.");
    assert_eq!(value["parameters"]["required"], json!(["city"]));
    assert_eq!(value["annotations"]["read_only"], false);
    let back: reticent::ToolDefinition = serde_json::from_value(value).unwrap();
    assert_eq!(&back, definition);
}

#[tokio::test]
async fn tools_work_as_trait_objects() {
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(LookupOrder), Arc::new(WeatherNow)];
    let names: Vec<&str> = tools.iter().map(|t| t.definition().name.as_str()).collect();
    assert_eq!(names, ["lookup_order", "get-weather"]);
    assert_eq!(
        call(&*tools[1], json!({"city": "Oslo"})).await.unwrap(),
        json!("sunny in Oslo")
    );
}

#[test]
fn a_single_tool_is_a_toolbox_of_one() {
    let tools = Arc::new(LookupOrder).tools();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].definition().name, "lookup_order");
}

#[tokio::test]
async fn a_tool_without_output_returns_null() {
    assert_eq!(call(&OnlyReads, json!({})).await.unwrap(), Value::Null);
}

// ---- the call's context --------------------------------------------------------------------

/// Say who is calling.
#[reticent::tool]
fn whoami(cx: &ToolContext, greeting: String) -> String {
    format!("{greeting} from {} in {}", cx.tool_name(), cx.call_id())
}

/// Report the context, taken by value.
#[reticent::tool]
async fn context_by_value(cx: ToolContext) -> (String, String, bool) {
    (
        cx.call_id().to_owned(),
        cx.tool_name().to_owned(),
        cx.cancellation().is_cancelled(),
    )
}

#[tokio::test]
async fn a_context_parameter_receives_the_calls_context() {
    let out = Whoami
        .call(
            json!({"greeting": "hello"}),
            ToolContext::new("call-7", "whoami"),
        )
        .await
        .unwrap();
    assert_eq!(out, json!("hello from whoami in call-7"));
}

#[tokio::test]
async fn a_context_taken_by_value_sees_the_cancellation() {
    let token = CancellationToken::new();
    token.cancel();
    let cx = ToolContext::new("call-8", "context_by_value").with_cancellation(token);
    let out = ContextByValue.call(json!({}), cx).await.unwrap();
    assert_eq!(out, json!(["call-8", "context_by_value", true]));
}

#[test]
fn a_tool_reads_its_context_only_when_it_has_a_context_parameter() {
    assert!(Whoami.reads_context());
    assert!(ContextByValue.reads_context());
    assert!(!WeatherNow.reads_context());
    assert!(!LookupOrder.reads_context());
}

#[test]
fn a_context_parameter_is_not_part_of_the_schema() {
    assert_eq!(
        Whoami.definition().parameters,
        json!({
            "type": "object",
            "properties": {"greeting": {"type": "string"}},
            "required": ["greeting"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        ContextByValue.definition().parameters,
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
}

#[tokio::test]
async fn the_model_cannot_send_the_context_as_an_argument() {
    let err = call(&Whoami, json!({"greeting": "hi", "cx": {}}))
        .await
        .unwrap_err();
    assert_eq!(
        err.model_text("whoami", false),
        "Invalid arguments for tool 'whoami': unknown argument `cx`; expected one of `greeting`"
    );
}

// ---- #[tools] ------------------------------------------------------------------------------

#[derive(Default)]
struct Counter {
    count: AtomicUsize,
}

#[reticent::tools]
impl Counter {
    /// Add to the counter.
    #[tool(idempotent = false)]
    async fn increment(
        &self,
        /// How much to add (default 1).
        by: Option<usize>,
    ) -> usize {
        let by = by.unwrap_or(1);
        self.count.fetch_add(by, Ordering::SeqCst) + by
    }

    /// Read the counter.
    #[tool(read_only, name = "read-counter", timeout = "150ms")]
    fn read(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Reset the counter.
    ///
    /// Sets it back to zero.
    #[tool(destructive, idempotent, title = "Reset the counter", needs_approval)]
    fn reset(&self, cx: &ToolContext) -> Result<String, ArgumentError> {
        self.count.store(0, Ordering::SeqCst);
        Ok(cx.call_id().to_owned())
    }

    /// A helper that is not a tool.
    fn doubled(&self) -> usize {
        self.read() * 2
    }
}

fn find<'a>(tools: &'a [Arc<dyn Tool>], name: &str) -> &'a dyn Tool {
    tools
        .iter()
        .find(|t| t.definition().name == name)
        .map(|t| &**t)
        .unwrap_or_else(|| panic!("no tool named {name}"))
}

#[test]
fn tools_lists_the_marked_methods_in_order() {
    let tools = Arc::new(Counter::default()).tools();
    let names: Vec<&str> = tools.iter().map(|t| t.definition().name.as_str()).collect();
    assert_eq!(names, ["increment", "read-counter", "reset"]);
}

#[test]
fn tools_methods_have_definitions_like_free_functions() {
    let tools = Arc::new(Counter::default()).tools();

    let increment = find(&tools, "increment").definition();
    assert_eq!(increment.description, "Add to the counter.");
    assert_eq!(increment.annotations, ToolAnnotations::default());
    assert_eq!(
        increment.parameters,
        json!({
            "type": "object",
            "properties": {
                "by": {
                    "type": ["integer", "null"],
                    "format": "uint",
                    "minimum": 0,
                    "description": "How much to add (default 1)."
                }
            },
            "additionalProperties": false
        })
    );

    let read = find(&tools, "read-counter");
    assert_eq!(read.definition().description, "Read the counter.");
    assert_eq!(read.definition().title, None);
    assert!(!read.needs_approval());
    let reset = find(&tools, "reset");
    assert_eq!(
        reset.definition().title.as_deref(),
        Some("Reset the counter")
    );
    assert!(reset.needs_approval());
    // Only a method with a context parameter reads the context it is called with.
    assert!(reset.reads_context());
    assert!(!read.reads_context());
    assert!(read.definition().annotations.read_only);
    assert_eq!(read.timeout(), Some(Duration::from_millis(150)));

    let reset = find(&tools, "reset");
    assert_eq!(
        reset.definition().description,
        "Reset the counter.\n\nSets it back to zero."
    );
    assert_eq!(
        reset.definition().annotations,
        ToolAnnotations::new().destructive(true).idempotent(true)
    );
    assert_eq!(reset.timeout(), None);
    // `&self` and the context are not parameters.
    assert_eq!(
        reset.definition().parameters,
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
}

#[tokio::test]
async fn tools_share_the_value_they_were_made_from() {
    let counter = Arc::new(Counter::default());
    let tools = Arc::clone(&counter).tools();

    assert_eq!(call(find(&tools, "increment"), json!({})).await.unwrap(), 1);
    assert_eq!(
        call(find(&tools, "increment"), json!({"by": 4}))
            .await
            .unwrap(),
        5
    );
    assert_eq!(
        call(find(&tools, "read-counter"), json!({})).await.unwrap(),
        5
    );
    // The caller's handle sees what the tools did, and the methods stay callable.
    assert_eq!(counter.count.load(Ordering::SeqCst), 5);
    assert_eq!(counter.doubled(), 10);

    let out = find(&tools, "reset")
        .call(json!({}), ToolContext::new("call-3", "reset"))
        .await
        .unwrap();
    assert_eq!(out, "call-3");
    assert_eq!(counter.read(), 0);
}

#[tokio::test]
async fn separate_values_have_separate_state_and_shared_definitions() {
    let first = Arc::new(Counter::default()).tools();
    let second = Arc::new(Counter::default()).tools();
    call(find(&first, "increment"), json!({"by": 2}))
        .await
        .unwrap();
    assert_eq!(
        call(find(&second, "read-counter"), json!({}))
            .await
            .unwrap(),
        0
    );
    for (a, b) in first.iter().zip(&second) {
        assert!(std::ptr::eq(a.definition(), b.definition()));
    }
}

#[tokio::test]
async fn tools_methods_are_usable_concurrently() {
    let counter = Arc::new(Counter::default());
    let tools = Arc::clone(&counter).tools();
    let increment = Arc::clone(&tools[0]);
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let tool = Arc::clone(&increment);
            tokio::spawn(async move { tool.call(json!({}), ToolContext::default()).await })
        })
        .collect();
    for handle in handles {
        handle.await.unwrap().unwrap();
    }
    assert_eq!(counter.read(), 8);
}
