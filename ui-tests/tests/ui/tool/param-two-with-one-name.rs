/// Search.
#[reticent::tool]
fn search(#[serde(rename = "page")] text: String, page: u32) -> String {
    format!("{text} {page}")
}

fn main() {}
