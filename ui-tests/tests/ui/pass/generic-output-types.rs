use std::collections::BTreeMap;

use reticent::{Tool, ToolContext};
use serde_json::json;

/// Count words.
#[reticent::tool]
fn count_words(text: String) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for word in text.split_whitespace() {
        *counts.entry(word.to_owned()).or_default() += 1;
    }
    counts
}

/// Echo raw JSON.
#[reticent::tool]
fn echo(value: serde_json::Value) -> Result<Option<serde_json::Value>, std::fmt::Error> {
    Ok(Some(value))
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = rt.block_on(CountWords.call(json!({"text": "a b a"}), ToolContext::default()));
    assert_eq!(out.unwrap(), json!({"a": 2, "b": 1}));
    let out = rt.block_on(Echo.call(json!({"value": [1, {"x": null}]}), ToolContext::default()));
    assert_eq!(out.unwrap(), json!([1, {"x": null}]));
}
