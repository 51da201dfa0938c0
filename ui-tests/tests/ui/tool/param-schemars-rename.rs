/// Search.
#[reticent::tool]
fn search(#[schemars(rename = "q")] text: String) -> String {
    text
}

fn main() {}
