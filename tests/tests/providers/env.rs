//! Choosing a provider from a `PROVIDER:MODEL` spec, with the variables it reads supplied by
//! a lookup (never the process environment, so the tests do not depend on the machine).

use std::collections::HashMap;
use std::time::Duration;

use reticent::providers::openai::OpenAi;
use reticent::providers::{ConfigError, from_spec};
use reticent::{Message, Model, ModelRequest, SchemaDialect};
use reticent_tests::provider::{Reply, TestServer, fixture};

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| map.get(name).cloned()
}

fn request() -> ModelRequest {
    ModelRequest {
        system: None,
        messages: vec![Message::user("Hi")],
        tools: Vec::new(),
    }
}

#[test]
fn malformed_specs_and_unknown_providers_are_refused() {
    for spec in ["gpt-4o-mini", "openai:", ":gpt-4o", ""] {
        assert_eq!(
            from_spec(spec, vars(&[])).err(),
            Some(ConfigError::InvalidSpec {
                spec: spec.to_owned()
            }),
            "{spec:?}"
        );
    }
    let error = from_spec("mistral:large", vars(&[])).err().unwrap();
    assert_eq!(
        error.to_string(),
        "unknown model provider `mistral`; the providers are: openai, openai-responses, anthropic, gemini, \
         ollama"
    );
}

#[test]
fn a_missing_key_names_the_variable() {
    assert_eq!(
        from_spec("openai:gpt-4o-mini", vars(&[])).err(),
        Some(ConfigError::MissingEnv {
            var: "OPENAI_API_KEY".into()
        })
    );
    assert_eq!(
        from_spec(
            "anthropic:claude-sonnet-4-5",
            vars(&[("ANTHROPIC_API_KEY", " ")])
        )
        .err(),
        Some(ConfigError::MissingEnv {
            var: "ANTHROPIC_API_KEY".into()
        })
    );
    assert_eq!(
        OpenAi::from_env("gpt-4o-mini").is_ok(),
        std::env::var("OPENAI_API_KEY").is_ok_and(|k| !k.trim().is_empty())
            || std::env::var("OPENAI_BASE_URL").is_ok_and(|k| !k.trim().is_empty())
    );
}

#[test]
fn providers_take_their_dialects() {
    let openai = from_spec("openai:gpt-4o-mini", vars(&[("OPENAI_API_KEY", "sk-x")])).unwrap();
    assert_eq!(openai.schema_dialect(), SchemaDialect::OpenAiStrict);
    let anthropic = from_spec(
        "anthropic:claude-sonnet-4-5",
        vars(&[("ANTHROPIC_API_KEY", "sk-ant-x")]),
    )
    .unwrap();
    assert_eq!(anthropic.schema_dialect(), SchemaDialect::Standard);
    let ollama = from_spec("ollama:qwen2.5:7b", vars(&[])).unwrap();
    assert_eq!(ollama.schema_dialect(), SchemaDialect::Standard);
}

#[tokio::test]
async fn openai_base_url_without_a_key_reaches_a_local_server() {
    let server = TestServer::start(vec![Reply::json(fixture("openai/response_text.json"))]).await;
    let base = format!("{}/v1", server.url);
    let model = from_spec("openai:llama3.2", vars(&[("OPENAI_BASE_URL", &base)])).unwrap();
    model.complete(&request()).await.unwrap();
    let sent = &server.received()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(sent.json()["model"], "llama3.2");
}

#[tokio::test]
async fn ollama_reads_ollama_host_and_keeps_the_whole_model_name() {
    let server = TestServer::start(vec![Reply::json(fixture("openai/response_text.json"))]).await;
    let host = server.url.trim_start_matches("http://").to_owned();
    let model = from_spec("ollama:qwen2.5:7b", vars(&[("OLLAMA_HOST", &host)])).unwrap();
    model.complete(&request()).await.unwrap();
    let sent = &server.received()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.json()["model"], "qwen2.5:7b");
}

#[tokio::test]
async fn anthropic_reads_its_key_and_base_url() {
    let server =
        TestServer::start(vec![Reply::json(fixture("anthropic/response_text.json"))]).await;
    let model = from_spec(
        "anthropic:claude-haiku-4-5",
        vars(&[
            ("ANTHROPIC_API_KEY", "sk-ant-from-lookup"),
            ("ANTHROPIC_BASE_URL", &server.url),
        ]),
    )
    .unwrap();
    tokio::time::timeout(Duration::from_secs(10), model.complete(&request()))
        .await
        .unwrap()
        .unwrap();
    let sent = &server.received()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-from-lookup"));
    assert_eq!(sent.json()["model"], "claude-haiku-4-5");
}
