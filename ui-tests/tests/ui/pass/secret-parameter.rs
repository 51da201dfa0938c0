use reticent::{Secret, Tool, ToolContext};
use serde_json::json;

/// Log in.
#[reticent::tool]
fn login(user: String, password: Secret<String>) -> bool {
    user == "ada" && password.expose() == "lovelace"
}

fn main() {
    assert_eq!(
        Login.definition().parameters["properties"]["password"],
        json!({"type": "string"})
    );
    let password = Secret::new(String::from("lovelace"));
    assert_eq!(format!("{password:?}"), "Secret(..)");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = rt.block_on(Login.call(
        json!({"user": "ada", "password": "lovelace"}),
        ToolContext::default(),
    ));
    assert_eq!(out.unwrap(), json!(true));
}
