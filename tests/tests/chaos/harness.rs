//! The llmock harness: one server answers all four wire formats at the base URLs it gives,
//! journals each request with its body, and judges a clean client as passing.

use reticent::providers::anthropic::Anthropic;
use reticent::providers::openai::OpenAi;
use reticent::{Message, Model, ModelRequest};
use reticent_tests::llmock::{self, Faults, Llmock};
use serde_json::json;

#[tokio::test]
async fn one_server_speaks_the_four_wire_formats() {
    let Some(server) = Llmock::start("the llmock harness", &Faults::none()).await else {
        return;
    };
    let chat = json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]});
    let responses = json!({"model": "gpt-4o-mini", "input": "hi"});
    let messages = json!({"model": "claude-sonnet-4-5", "max_tokens": 64,
                          "messages": [{"role": "user", "content": "hi"}]});
    let gemini = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let calls = [
        (
            format!("{}/chat/completions", server.openai_base()),
            chat,
            "openai",
        ),
        (server.responses_url(), responses, "openai"),
        (
            format!("{}/v1/messages", server.anthropic_base()),
            messages,
            "anthropic",
        ),
        (
            format!(
                "{}/models/gemini-2.0-flash:generateContent",
                server.gemini_base()
            ),
            gemini,
            "gemini",
        ),
    ];
    for (url, body, _) in &calls {
        let (status, answer) = llmock::request("POST", url, Some(body)).await.unwrap();
        assert_eq!(status, 200, "POST {url}: {answer}");
    }

    let journal = server.requests().await;
    let seen: Vec<(&str, &str)> = journal
        .iter()
        .map(|r| (r.provider.as_str(), r.path.as_str()))
        .collect();
    let expected: Vec<(&str, String)> = calls
        .iter()
        .map(|(url, _, provider)| (*provider, url.trim_start_matches(server.url()).to_owned()))
        .collect();
    assert_eq!(
        seen,
        expected
            .iter()
            .map(|(p, path)| (*p, path.as_str()))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        journal[0].body.as_ref(),
        Some(&calls[0].1),
        "the journal keeps bodies"
    );
    let verdict = server.verdict().await;
    assert!(verdict.passed, "{}", verdict.report);
    assert_eq!(verdict.attempts, 4, "{}", verdict.report);

    server.reset().await;
    assert!(
        server.requests().await.is_empty(),
        "a reset empties the journal"
    );
}

#[tokio::test]
async fn the_providers_reach_it_at_its_base_urls() {
    let Some(server) = Llmock::start("the providers' base URLs at llmock", &Faults::none()).await
    else {
        return;
    };
    let request = ModelRequest {
        messages: vec![Message::user("Say hello.")],
        ..ModelRequest::default()
    };
    let openai = OpenAi::new("sk-llmock", "gpt-4o-mini").base_url(server.openai_base());
    let anthropic =
        Anthropic::new("sk-ant-llmock", "claude-sonnet-4-5").base_url(server.anthropic_base());
    let answers = [
        openai.complete(&request).await,
        anthropic.complete(&request).await,
    ];
    for answer in &answers {
        let answer = answer.as_ref().expect("llmock answers");
        assert!(
            answer.text.as_deref().is_some_and(|t| !t.is_empty()),
            "{answer:?}"
        );
    }
    let paths: Vec<String> = server
        .requests()
        .await
        .into_iter()
        .map(|r| r.path)
        .collect();
    assert_eq!(paths, ["/v1/chat/completions", "/anthropic/v1/messages"]);
}

#[tokio::test]
async fn scripted_faults_reach_the_next_request_and_the_verdict_sees_them() {
    let Some(server) = Llmock::start("llmock's scripted faults", &Faults::none()).await else {
        return;
    };
    server
        .script(json!([{"type": "fail", "status": 404, "times": 1}]))
        .await;
    let model = OpenAi::new("sk-llmock", "gpt-4o-mini").base_url(server.openai_base());
    let error = model
        .complete(&ModelRequest {
            messages: vec![Message::user("hi")],
            ..ModelRequest::default()
        })
        .await
        .expect_err("a scripted 404");
    assert_eq!(error.status(), Some(404), "{error}");
    let journal = server.requests().await;
    assert_eq!(journal.len(), 1, "a 404 is not retried: {journal:?}");
    assert_eq!(journal[0].fault.as_deref(), Some("scenario:404"));
    assert!(server.verdict().await.passed);
}
