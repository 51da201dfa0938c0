//! `Secret<T>`: a value that cannot end up in a message, usable as a tool parameter.

use reticent::{Secret, Tool, ToolContext};
use schemars::{JsonSchema, schema_for};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
struct Credentials {
    user: String,
    password: String,
}

#[derive(Debug)]
#[allow(dead_code)]
struct Config {
    host: String,
    api_key: Secret<String>,
}

/// Connect to a service.
#[reticent::tool]
fn connect(
    host: String,
    /// The API key.
    api_key: Secret<String>,
    pin: Option<Secret<u32>>,
    login: Option<Secret<Credentials>>,
) -> Value {
    // Never return a secret: report what can be said about it.
    json!({
        "host": host,
        "key_length": api_key.expose().len(),
        "pin_set": pin.is_some(),
        "pin_even": pin.map(|p| p.expose() % 2 == 0),
        "user": login.map(|l| l.into_inner().user),
    })
}

/// The same parameters without `Secret`.
#[reticent::tool]
fn connect_plain(
    host: String,
    /// The API key.
    api_key: String,
    pin: Option<u32>,
    login: Option<Credentials>,
) -> String {
    let _ = (api_key, pin, login);
    host
}

#[test]
fn debug_prints_no_value() {
    let key = Secret::new(String::from("sk-live-123"));
    assert_eq!(format!("{key:?}"), "Secret(..)");
    assert_eq!(format!("{key:#?}"), "Secret(..)");
    let login = Secret::new(Credentials {
        user: "admin".into(),
        password: "hunter2".into(),
    });
    assert_eq!(format!("{login:?}"), "Secret(..)");

    let config = Config {
        host: "db".into(),
        api_key: Secret::from(String::from("sk-live-123")),
    };
    let debug = format!("{config:?}");
    assert_eq!(debug, r#"Config { host: "db", api_key: Secret(..) }"#);
}

#[test]
fn expose_and_into_inner_give_the_value() {
    let key = Secret::new(String::from("sk-live-123"));
    assert_eq!(key.expose(), "sk-live-123");
    let copy = key.clone();
    assert_eq!(copy, key);
    assert_eq!(key.into_inner(), "sk-live-123");
    let pin: Secret<u32> = 1234.into();
    assert_eq!(*pin.expose(), 1234);
}

#[test]
fn deserializes_as_the_value_it_holds() {
    let key: Secret<String> = serde_json::from_value(json!("sk-live-123")).unwrap();
    assert_eq!(key.expose(), "sk-live-123");
    let login: Secret<Credentials> =
        serde_json::from_value(json!({"user": "a", "password": "b"})).unwrap();
    assert_eq!(login.expose().password, "b");
    assert!(serde_json::from_value::<Secret<u32>>(json!("x")).is_err());
}

#[test]
fn its_schema_is_the_schema_of_the_value() {
    assert_eq!(schema_for!(Secret<String>), schema_for!(String));
    assert_eq!(schema_for!(Secret<u32>), schema_for!(u32));
    assert_eq!(schema_for!(Secret<Credentials>), schema_for!(Credentials));
    assert_eq!(
        <Secret<Credentials>>::schema_name(),
        Credentials::schema_name()
    );
}

#[test]
fn as_a_parameter_its_schema_is_the_values() {
    let secret = &Connect.definition().parameters;
    let plain = &ConnectPlain.definition().parameters;
    for name in ["host", "api_key", "pin"] {
        assert_eq!(
            secret["properties"][name], plain["properties"][name],
            "{name}"
        );
    }
    assert_eq!(
        secret["properties"]["api_key"],
        json!({"type": "string", "description": "The API key."})
    );
    assert_eq!(secret["required"], plain["required"]);
    assert_eq!(secret["required"], json!(["host", "api_key"]));
}

/// Sign in.
#[reticent::tool]
fn sign_in(login: Secret<Credentials>) -> String {
    login.into_inner().user
}

/// Sign in, without `Secret`.
#[reticent::tool]
fn sign_in_plain(login: Credentials) -> String {
    login.user
}

#[test]
fn as_a_parameter_a_structs_schema_is_the_structs_inline() {
    let secret = &SignIn.definition().parameters;
    let plain = &SignInPlain.definition().parameters;
    // The same schema, written in place instead of referenced from `$defs`.
    assert_eq!(
        plain["properties"]["login"],
        json!({"$ref": "#/$defs/Credentials"})
    );
    assert_eq!(secret["properties"]["login"], plain["$defs"]["Credentials"]);
    assert_eq!(secret["required"], json!(["login"]));

    // Both accept and refuse the same arguments.
    let secret = jsonschema::draft202012::new(secret).unwrap();
    let plain = jsonschema::draft202012::new(plain).unwrap();
    for args in [
        json!({"login": {"user": "a", "password": "b"}}),
        json!({"login": {"user": "a"}}),
        json!({"login": "a:b"}),
        json!({"login": null}),
        json!({}),
    ] {
        assert_eq!(secret.is_valid(&args), plain.is_valid(&args), "{args}");
    }
}

#[tokio::test]
async fn as_a_parameter_it_decodes_transparently() {
    let out = Connect
        .call(
            json!({
                "host": "db",
                "api_key": "sk-live-123",
                "pin": 1234,
                "login": {"user": "admin", "password": "hunter2"}
            }),
            ToolContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        out,
        json!({"host": "db", "key_length": 11, "pin_set": true, "pin_even": true, "user": "admin"})
    );

    let out = Connect
        .call(
            json!({"host": "db", "api_key": "k", "pin": null}),
            ToolContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(out["pin_set"], false);
    assert_eq!(out["user"], Value::Null);
}

#[tokio::test]
async fn as_a_parameter_it_is_refused_like_the_value() {
    let text = |args: Value| async move {
        Connect
            .call(args, ToolContext::default())
            .await
            .unwrap_err()
            .model_text("connect", false)
    };
    assert_eq!(
        text(json!({"host": "db"})).await,
        "Invalid arguments for tool 'connect': missing required argument `api_key`"
    );
    assert_eq!(
        text(json!({"host": "db", "api_key": 5})).await,
        "Invalid arguments for tool 'connect': argument `api_key`: invalid type: integer `5`, expected a string"
    );
}
