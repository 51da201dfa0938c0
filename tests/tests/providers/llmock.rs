//! The conformance suite against llmock, an independent mock of the four APIs: every provider
//! runs parallel calls, one failing with a secret in its error, streamed and not, and rides
//! out the errors llmock injects; llmock's journal shows no request body with the secret, and
//! its verdict passes the client. Skipped, loudly, without `RETICENT_LLMOCK_PYTHON`.

use reticent::{Agent, AgentEvent, StopReason};
use reticent_tests::conformance::{Settings, request, specs};
use reticent_tests::llmock::{Faults, Llmock};
use serde_json::json;

use crate::conformance::{CANARY, ChargeCard, LookupOrder};

#[tokio::test]
async fn parallel_calls_and_a_failed_tool_on_every_provider() {
    let what = "the conformance suite's runs against llmock";
    let Some(server) = Llmock::start(what, &Faults::none()).await else {
        return;
    };
    for spec in specs() {
        for stream in [false, true] {
            let name = format!("{} (stream: {stream})", spec.name);
            server.reset().await;
            server
                .script(json!([{"type": "reply", "tool_calls": [
                    {"name": "lookup_order", "arguments": {"order_id": "ORD-1042"}},
                    {"name": "charge_card", "arguments": {"amount_cents": 4200}}
                ]}]))
                .await;
            let agent = Agent::builder((spec.at_llmock)(&server, Settings::default()))
                .system("You are a support agent.")
                .tool(LookupOrder)
                .tool(ChargeCard)
                .build()
                .unwrap();
            let result = if stream {
                let mut events = agent.run_stream("Charge ORD-1042.");
                let mut finished = None;
                while let Some(event) = futures::StreamExt::next(&mut events).await {
                    if let AgentEvent::Finished(result) = event {
                        finished = Some(result);
                    }
                }
                finished.expect("the run finishes")
            } else {
                agent.run("Charge ORD-1042.").await
            };
            let result = result.unwrap_or_else(|e| panic!("{name}: {e}\n{}", server.log()));
            assert_eq!(result.stop_reason, StopReason::Completed, "{name}");
            assert_eq!(result.turns, 2, "{name}");
            assert_eq!(result.tool_failures.len(), 1, "{name}");
            assert!(
                result.tool_failures[0].error.to_string().contains(CANARY),
                "{name}"
            );
            assert!(result.usage.input_tokens > 0, "{name}: {:?}", result.usage);

            let journal = server.requests().await;
            assert_eq!(journal.len(), 2, "{name}: {journal:?}");
            for record in &journal {
                assert_eq!((record.status, record.stream), (200, stream), "{name}");
                let body = record.body.as_ref().expect("the body is kept").to_string();
                assert!(!body.contains(CANARY), "{name}: {body}");
            }
            let second = journal[1].body.as_ref().unwrap();
            let results = (spec.results)(second);
            let texts: Vec<&str> = results.iter().map(|r| r.text.as_str()).collect();
            assert_eq!(
                texts,
                [
                    "ORD-1042 has shipped",
                    "Tool 'charge_card' failed with GatewayError"
                ],
                "{name}: {second}"
            );
            let verdict = server.verdict().await;
            assert!(verdict.passed, "{name}: {}", verdict.report);
        }
    }
}

#[tokio::test]
async fn injected_errors_are_retried_on_every_provider() {
    let what = "the conformance suite's retries against llmock";
    let Some(server) = Llmock::start(what, &Faults::none()).await else {
        return;
    };
    for spec in specs() {
        for stream in [false, true] {
            let name = format!("{} (stream: {stream})", spec.name);
            server.reset().await;
            server
                .script(json!([
                    {"type": "fail", "status": 503},
                    {"type": "fail", "status": 429, "retry_after": 0.05}
                ]))
                .await;
            let model = (spec.at_llmock)(&server, Settings::default());
            let response = if stream {
                let (_, response) =
                    reticent_tests::conformance::streamed(&*model, &request()).await;
                response
            } else {
                model.complete(&request()).await.unwrap()
            };
            assert!(response.text.is_some(), "{name}");
            let journal = server.requests().await;
            let statuses: Vec<u16> = journal.iter().map(|r| r.status).collect();
            assert_eq!(statuses, [503, 429, 200], "{name}");
            let verdict = server.verdict().await;
            assert!(verdict.passed, "{name}: {}", verdict.report);

            // past the retries: the caller gets the status, once
            server.reset().await;
            server
                .script(json!([{"type": "fail", "status": 400, "message": "bad request"}]))
                .await;
            let error = if stream {
                reticent_tests::conformance::collect(&*model, &request())
                    .await
                    .1
                    .expect("the stream fails")
            } else {
                model.complete(&request()).await.unwrap_err()
            };
            assert_eq!(error.status(), Some(400), "{name}: {error}");
            assert_eq!(server.requests().await.len(), 1, "{name}");
        }
    }
}
