/// Search.
#[reticent::tool(title = " ")]
fn search(text: String) -> String {
    text
}

fn main() {}
