use std::sync::Arc;

use reticent::{Tool, ToolContext, Toolbox};
use serde::Deserializer;
use serde_json::json;

fn ten() -> u32 {
    10
}

fn upper<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let text: String = serde::Deserialize::deserialize(d)?;
    Ok(text.to_uppercase())
}

mod csv {
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        Ok(String::deserialize(d)?.split(',').map(str::to_owned).collect())
    }
}

/// Every attribute on a parameter, as on a struct field.
#[reticent::tool]
fn search(
    /// Replaced by the description below.
    #[serde(rename = "q", alias = "query")]
    #[schemars(description = "What to look for.", length(min = 1, max = 100))]
    text: String,
    #[serde(default = "ten")]
    #[schemars(range(min = 1, max = 50))]
    per_page: u32,
    #[serde(default)]
    page: u32,
    #[serde(deserialize_with = "upper")]
    #[schemars(regex(pattern = r"^[a-z]+$"), example = &"oslo")]
    city: String,
    #[serde(with = "csv")]
    #[schemars(with = "String", extend("x-format" = "csv"))]
    tags: Vec<String>,
) -> String {
    format!("{text} {per_page} {page} {city} {}", tags.join("+"))
}

struct Shop;

impl Shop {
    fn page_size() -> u8 {
        5
    }
}

#[reticent::tools]
impl Shop {
    /// List, with `Self` in a default's path.
    #[tool]
    fn list(&self, #[serde(default = "Self::page_size", rename = "size")] page_size: u8) -> u8 {
        page_size
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = rt.block_on(Search.call(
        json!({"query": "lamp", "city": "oslo", "tags": "a,b"}),
        ToolContext::default(),
    ));
    assert_eq!(out.unwrap(), json!("lamp 10 0 OSLO a+b"));
    let properties = &Search.definition().parameters["properties"];
    assert_eq!(properties["q"]["description"], "What to look for.");
    assert_eq!(properties["per_page"]["default"], 10);
    assert_eq!(properties["city"]["pattern"], "^[a-z]+$");
    assert_eq!(properties["tags"]["x-format"], "csv");
    assert_eq!(
        Search.definition().parameters["required"],
        json!(["q", "city", "tags"])
    );

    let tools = Arc::new(Shop).tools();
    let out = rt.block_on(tools[0].call(json!({}), ToolContext::default()));
    assert_eq!(out.unwrap(), json!(5));
}
