/// Search.
#[reticent::tool]
fn search(#[serde(renam = "q")] text: String) -> String {
    text
}

fn main() {}
