//! The two ways `#[tool]` decodes and describes its parameters agree: without `#[serde]` or
//! `#[schemars]` attributes the runtime does it from the tuple of their types, by their names
//! and doc comments; with one, a struct of them derives `Deserialize` and `JsonSchema`. The
//! same parameters, once each way, give the same schema, the same arguments and the same
//! errors.

// An empty doc comment is one of the cases.
#![allow(clippy::empty_docs)]

use reticent::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A box's size.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Dimensions {
    /// Width.
    width_cm: u32,
    height_cm: u32,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Level {
    Low,
    High,
}

/// The same tool twice, `$name`, the attributes `$label` on its first parameter.
macro_rules! every_kind_of_parameter {
    ($name:ident $($label:tt)*) => {
        /// Decodes every kind of parameter and returns them.
        #[reticent::tool]
        #[allow(clippy::too_many_arguments)]
        fn $name(
            /// # A title
            ///
            /// And a description
            ///   over two lines.
            $($label)*
            label: String,
            /** A block comment. */
            count: Option<u8>,
            ///
            empty: Option<Vec<Dimensions>>,
            #[doc = "   spaced out   "]
            raw: Value,
            boxed: Box<Option<String>>,
            dimensions: Dimensions,
            /// ### Only a title
            level: Option<Level>,
            #[doc(hidden)]
            /// After a hidden one.
            ratio: f64,
        ) -> Value {
            json!([label, count, empty, raw, boxed, dimensions, level, ratio])
        }
    };
}

every_kind_of_parameter!(plain);
// Renamed to its own name: a `#[serde]` attribute, so the arguments struct is derived.
every_kind_of_parameter!(derived #[serde(rename = "label")]);

fn both(args: &Value) -> [Result<Value, ToolError>; 2] {
    let call = |tool: &dyn Tool| {
        futures::executor::block_on(tool.call(args.clone(), ToolContext::default()))
    };
    [call(&Plain), call(&Derived)]
}

fn both_text(text: &str) -> [Result<Value, ToolError>; 2] {
    let call =
        |tool: &dyn Tool| futures::executor::block_on(tool.call_text(text, ToolContext::default()));
    [call(&Plain), call(&Derived)]
}

/// What a call came to, comparable: the output, or the argument error's message and path.
fn outcome(result: Result<Value, ToolError>) -> Value {
    match result {
        Ok(output) => json!({"ok": output}),
        Err(ToolError::Argument(error)) => {
            json!({"argument": error.message(), "at": error.path()})
        }
        Err(other) => panic!("not an argument error: {other:?}"),
    }
}

#[test]
fn the_schemas_are_the_same() {
    let plain = Plain.definition().parameters.clone();
    assert_eq!(plain, Derived.definition().parameters);
    // What the doc comments come to, as schemars reads them.
    let properties = &plain["properties"];
    assert_eq!(properties["label"]["title"], "A title");
    assert_eq!(
        properties["label"]["description"],
        "And a description\n  over two lines."
    );
    assert_eq!(properties["count"]["description"], "A block comment.");
    assert!(properties["empty"].get("description").is_none());
    assert_eq!(properties["raw"], json!({"description": "spaced out"}));
    assert_eq!(properties["level"]["title"], "Only a title");
    assert_eq!(properties["ratio"]["description"], "After a hidden one.");
    assert_eq!(
        plain["required"],
        json!(["label", "raw", "dimensions", "ratio"])
    );
}

#[test]
fn arguments_decode_the_same_and_fail_the_same() {
    let valid = json!({
        "label": "a", "raw": [1, {"x": null}], "dimensions": {"width_cm": 1, "height_cm": 2},
        "ratio": 0.5, "boxed": "b", "level": "high", "count": 3.0,
        "empty": [{"width_cm": 3, "height_cm": 4}]
    });
    let cases = [
        valid.clone(),
        json!({"label": "a", "raw": null, "dimensions": {"width_cm": 1, "height_cm": 2}, "ratio": 1}),
        json!({"label": "a", "raw": null, "dimensions": {"width_cm": 1, "height_cm": 2}, "ratio": 1, "count": null, "boxed": null}),
        json!({"raw": 1, "dimensions": {"width_cm": 1, "height_cm": 2}, "ratio": 1}),
        json!({"label": "a", "raw": 1, "ratio": 1}),
        json!({"label": "a", "raw": 1, "dimensions": {"width_cm": 1, "height_cm": 2}, "ratio": 1, "extra": 1}),
        json!({"label": 5, "raw": 1, "dimensions": {"width_cm": 1, "height_cm": 2}, "ratio": 1}),
        json!({"label": "a", "raw": 1, "dimensions": {"width_cm": 1, "height_cm": "2"}, "ratio": 1}),
        json!({"label": "a", "raw": 1, "dimensions": {"width_cm": 1, "height_cm": 2, "depth": 1}, "ratio": 1}),
        json!({"label": "a", "raw": 1, "dimensions": {"width_cm": 1, "height_cm": 2}, "ratio": 1, "count": 300}),
        json!({"label": "a", "raw": 1, "dimensions": {"width_cm": 1, "height_cm": 2}, "ratio": 1, "empty": [{"width_cm": 1.5, "height_cm": 1}]}),
        json!({"label": "a", "raw": 1, "dimensions": {"width_cm": 1, "height_cm": 2}, "ratio": 1, "level": "medium"}),
        json!({}),
        Value::Null,
        json!([1, 2]),
        json!("label"),
    ];
    for args in &cases {
        let [plain, derived] = both(args).map(outcome);
        assert_eq!(plain, derived, "{args}");
        let [plain_text, derived_text] = both_text(&args.to_string()).map(outcome);
        assert_eq!(plain_text, derived_text, "{args}");
        assert_eq!(plain_text, plain, "{args}");
    }
    let [plain, _] = both(&valid);
    assert!(plain.is_ok(), "{plain:?}");
    // Only text can give an argument twice: it does not decode in one pass, and the value
    // it parses into holds the last.
    let twice = r#"{"label": "a", "label": "b", "raw": 1, "dimensions": {"width_cm": 1, "height_cm": 2}, "ratio": 1}"#;
    let [plain, derived] = both_text(twice).map(outcome);
    assert_eq!(plain, derived);
    assert_eq!(plain["ok"][0], "b");
    for text in ["", "{", "[]", r#"{"label": "a"} x"#] {
        let [plain, derived] = both_text(text).map(outcome);
        assert_eq!(plain, derived, "{text}");
    }
}
