#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query<'a> {
    text: &'a str,
}

/// Search orders.
#[reticent::tool]
fn search(query: Query<'static>) -> String {
    query.text.to_owned()
}

fn main() {}
