fn default_page() -> String {
    "1".to_owned()
}

/// Search.
#[reticent::tool]
fn search(text: String, #[serde(default = "default_page")] page: u32) -> String {
    format!("{text} {page}")
}

fn main() {}
