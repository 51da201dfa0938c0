//! The conformance suite: every HTTP provider (OpenAI Chat Completions, OpenAI Responses,
//! Anthropic, Gemini) passes the same scenarios against the scripted server on loopback. How
//! each API spells an answer is in `reticent_tests::conformance`; a scenario is written once.

use std::time::Duration;

use reticent::{Agent, AgentEvent, ToolCall, ToolFailureMode, model::ModelEvent};
use reticent_tests::conformance::{
    Piece, Settings, bare, check_request, collect, request, specs, streamed, usage,
};
use reticent_tests::provider::{Reply, TestServer};
use serde_json::json;

/// A secret in a tool's error message: the caller gets it, no request ever carries it.
pub(crate) const CANARY: &str = "CANARY-c0nf0rm-51";

#[derive(Debug, thiserror::Error)]
#[error("the gateway refused the charge: dsn=postgres://billing:{0}@db.internal")]
pub(crate) struct GatewayError(&'static str);

/// Charge the customer's card.
#[reticent::tool]
pub(crate) async fn charge_card(amount_cents: u64) -> Result<String, GatewayError> {
    let _ = amount_cents;
    Err(GatewayError(CANARY))
}

/// Look up an order by id.
#[reticent::tool]
pub(crate) async fn lookup_order(order_id: String) -> String {
    format!("{order_id} has shipped")
}

async fn start(replies: Vec<Reply>) -> TestServer {
    TestServer::start(replies).await
}

#[tokio::test]
async fn text_and_usage() {
    for spec in specs() {
        let answer = (spec.answer)(Some("Order ORD-1042 has shipped."), &[]);
        let stream = (spec.stream)(&[Piece::Text("Order ORD-1042"), Piece::Text(" has shipped.")]);
        let server = start(vec![Reply::json(answer), Reply::events(stream)]).await;
        let model = (spec.model)(&server, Settings::default());

        let response = model.complete(&request()).await.unwrap();
        assert_eq!(
            response.text.as_deref(),
            Some("Order ORD-1042 has shipped."),
            "{}",
            spec.name
        );
        assert!(response.tool_calls.is_empty(), "{}", spec.name);
        assert_eq!(response.usage, usage(), "{}", spec.name);

        let (events, streamed) = streamed(&*model, &request()).await;
        assert_eq!(streamed, response, "{}", spec.name);
        assert_eq!(
            events,
            [
                ModelEvent::TextDelta("Order ORD-1042".into()),
                ModelEvent::TextDelta(" has shipped.".into())
            ],
            "{}",
            spec.name
        );
        let received = server.received();
        check_request(&spec, &received[0], false);
        check_request(&spec, &received[1], true);
        assert!(
            received[0].body.contains("You are a support agent."),
            "{}",
            spec.name
        );
    }
}

#[tokio::test]
async fn a_tool_call_and_parallel_calls() {
    for spec in specs() {
        let one = (spec.answer)(
            None,
            &[("call_1", "lookup_order", r#"{"order_id":"ORD-1042"}"#)],
        );
        let two = (spec.answer)(
            Some("Looking both up."),
            &[
                ("call_a", "lookup_order", r#"{"order_id":"ORD-1"}"#),
                ("call_b", "lookup_order", r#"{"order_id":"ORD-2"}"#),
            ],
        );
        let server = start(vec![Reply::json(one), Reply::json(two)]).await;
        let model = (spec.model)(&server, Settings::default());

        let response = model.complete(&request()).await.unwrap();
        let calls: Vec<ToolCall> = response.tool_calls.iter().map(bare).collect();
        assert_eq!(
            calls,
            [ToolCall::new(
                "call_1",
                "lookup_order",
                json!({"order_id": "ORD-1042"})
            )],
            "{}",
            spec.name
        );
        let response = model.complete(&request()).await.unwrap();
        let calls: Vec<ToolCall> = response.tool_calls.iter().map(bare).collect();
        assert_eq!(
            calls,
            [
                ToolCall::new("call_a", "lookup_order", json!({"order_id": "ORD-1"})),
                ToolCall::new("call_b", "lookup_order", json!({"order_id": "ORD-2"})),
            ],
            "{}",
            spec.name
        );
        assert_eq!(
            response.text.as_deref(),
            Some("Looking both up."),
            "{}",
            spec.name
        );
    }
}

/// A run with two parallel calls, one of which fails with a secret in its error: both
/// results go back in the next request, matched to their calls; the failed one says only the
/// error's type (and is flagged where the API has a flag); the secret is in no request's
/// bytes, streamed or not, and the caller has all of it.
#[tokio::test]
async fn a_failed_tool_keeps_its_secret_out_of_every_request() {
    for spec in specs() {
        for stream in [false, true] {
            let calls = [
                ("call_a", "lookup_order", r#"{"order_id":"ORD-1042"}"#),
                ("call_b", "charge_card", r#"{"amount_cents":4200}"#),
            ];
            let first = if stream {
                let pieces = [
                    Piece::Call {
                        index: 0,
                        id: "call_a",
                        name: "lookup_order",
                    },
                    Piece::Arguments {
                        index: 0,
                        fragment: calls[0].2,
                    },
                    Piece::Call {
                        index: 1,
                        id: "call_b",
                        name: "charge_card",
                    },
                    Piece::Arguments {
                        index: 1,
                        fragment: calls[1].2,
                    },
                ];
                Reply::events((spec.stream)(&pieces))
            } else {
                Reply::json((spec.answer)(None, &calls))
            };
            let last = if stream {
                Reply::events((spec.stream)(&[Piece::Text("The charge failed.")]))
            } else {
                Reply::json((spec.answer)(Some("The charge failed."), &[]))
            };
            let server = start(vec![first, last]).await;
            let agent = Agent::builder((spec.model)(&server, Settings::default()))
                .system("You are a support agent.")
                .tool(LookupOrder)
                .tool(ChargeCard)
                .failure_mode(ToolFailureMode::ReportToModel)
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
                finished.expect("the run finishes").unwrap()
            } else {
                agent.run("Charge ORD-1042.").await.unwrap()
            };
            let name = format!("{} (stream: {stream})", spec.name);
            assert_eq!(result.output, "The charge failed.", "{name}");
            assert_eq!(result.tool_failures.len(), 1, "{name}");
            assert!(
                result.tool_failures[0].error.to_string().contains(CANARY),
                "{name}"
            );
            assert_eq!(result.usage, usage() + usage(), "{name}");

            let received = server.received();
            assert_eq!(received.len(), 2, "{name}");
            for request in &received {
                assert!(!request.text().contains(CANARY), "{name}: {}", request.body);
            }
            let results = (spec.results)(&received[1].json());
            assert_eq!(results.len(), 2, "{name}: {}", received[1].body);
            let shown = "Tool 'charge_card' failed with GatewayError";
            assert_eq!(results[0].text, "ORD-1042 has shipped", "{name}");
            assert_eq!(results[1].text, shown, "{name}");
            for (result, id) in results.iter().zip(["call_a", "call_b"]) {
                if let Some(sent) = &result.call_id {
                    assert_eq!(sent, id, "{name}");
                }
            }
            if let Some(flag) = results[1].is_error {
                assert!(flag, "{name}");
                assert_eq!(results[0].is_error, Some(false), "{name}");
            }
        }
    }
}

/// Two calls whose argument fragments interleave, split inside JSON tokens and non-ASCII
/// text, the bytes written in pieces of 7: the events keep the model's order, each call
/// starts once before its fragments, and `Completed` is what `complete` reads from the same
/// answer whole.
#[tokio::test]
async fn streaming_with_fragmented_arguments() {
    for spec in specs() {
        let pieces = [
            Piece::Text("Checking "),
            Piece::Text("Zürich 🦀."),
            Piece::Call {
                index: 0,
                id: "call_a",
                name: "lookup_order",
            },
            Piece::Arguments {
                index: 0,
                fragment: "{\"order_id\": \"ORD",
            },
            Piece::Call {
                index: 1,
                id: "call_b",
                name: "charge_card",
            },
            Piece::Arguments {
                index: 1,
                fragment: "{\"amount_",
            },
            Piece::Arguments {
                index: 0,
                fragment: "-1042 日本\"}",
            },
            Piece::Arguments {
                index: 1,
                fragment: "cents\": 4200}",
            },
        ];
        let body = (spec.stream)(&pieces);
        let whole = (spec.answer)(
            Some("Checking Zürich 🦀."),
            &[
                (
                    "call_a",
                    "lookup_order",
                    "{\"order_id\": \"ORD-1042 日本\"}",
                ),
                ("call_b", "charge_card", "{\"amount_cents\": 4200}"),
            ],
        );
        let server = start(vec![
            Reply::events(body.clone()).in_pieces(7, Duration::from_millis(1)),
            Reply::json(whole),
        ])
        .await;
        let model = (spec.model)(&server, Settings::default());
        let (events, response) = streamed(&*model, &request()).await;
        let completed = model.complete(&request()).await.unwrap();
        assert_eq!(
            response.tool_calls.iter().map(bare).collect::<Vec<_>>(),
            completed.tool_calls.iter().map(bare).collect::<Vec<_>>(),
            "{}",
            spec.name
        );
        assert_eq!(response.text, completed.text, "{}", spec.name);
        assert_eq!(response.usage, usage(), "{}", spec.name);
        assert_eq!(
            response.tool_calls[0].arguments.value(),
            &json!({"order_id": "ORD-1042 日本"}),
            "{}",
            spec.name
        );

        // each call starts once, before its deltas, which add up to its arguments
        for (index, call) in response.tool_calls.iter().enumerate() {
            let start = events
                .iter()
                .position(
                    |e| matches!(e, ModelEvent::ToolCallStarted { index: i, .. } if *i == index),
                )
                .expect("the call started");
            let deltas: Vec<(usize, &str)> = events
                .iter()
                .enumerate()
                .filter_map(|(at, e)| match e {
                    ModelEvent::ToolCallDelta {
                        index: i,
                        arguments,
                    } if *i == index => Some((at, arguments.as_str())),
                    _ => None,
                })
                .collect();
            assert!(deltas.iter().all(|(at, _)| *at > start), "{}", spec.name);
            let joined: String = deltas.iter().map(|(_, d)| *d).collect();
            let value: serde_json::Value = serde_json::from_str(&joined).unwrap();
            assert_eq!(&value, call.arguments.value(), "{}", spec.name);
            if spec.fragments {
                assert_eq!(deltas.len(), 2, "{}: {events:?}", spec.name);
            }
        }
    }
}

/// `503` and `429` are retried, streamed or not; a `400` is not, and its message reaches the
/// caller with the status; the API key is never in an error or in `Debug`.
#[tokio::test]
async fn retries_and_errors() {
    for spec in specs() {
        let error = |status, message: &str| Reply::status(status, (spec.error)(message));
        let answer = || Reply::json((spec.answer)(Some("Done."), &[]));
        let stream = || Reply::events((spec.stream)(&[Piece::Text("Done.")]));
        let server = start(vec![
            error(503, "overloaded"),
            error(429, "slow down"),
            answer(),
            error(503, "overloaded"),
            stream(),
            error(400, "the request is malformed"),
            error(400, "the request is malformed"),
        ])
        .await;
        let model = (spec.model)(&server, Settings::default());
        let response = model.complete(&request()).await.unwrap();
        assert_eq!(response.text.as_deref(), Some("Done."), "{}", spec.name);
        let (_, response) = streamed(&*model, &request()).await;
        assert_eq!(response.text.as_deref(), Some("Done."), "{}", spec.name);
        assert_eq!(server.received().len(), 5, "{}", spec.name);

        let failed = model.complete(&request()).await.unwrap_err();
        assert_eq!(failed.status(), Some(400), "{}", spec.name);
        assert!(!failed.is_retryable(), "{}", spec.name);
        assert!(
            failed.message().contains("the request is malformed"),
            "{}: {failed}",
            spec.name
        );
        let (events, failed) = collect(&*model, &request()).await;
        assert!(events.is_empty(), "{}", spec.name);
        let failed = failed.expect("the stream fails");
        assert_eq!(failed.status(), Some(400), "{}", spec.name);
        assert_eq!(server.received().len(), 7, "{}", spec.name);

        let (key, _) = spec.key;
        assert!(!(spec.debug)(&server).contains(key), "{}", spec.name);
        assert!(!format!("{failed:?}").contains(key), "{}", spec.name);
    }
}

/// A failure that outlasts the retries says how many attempts were made.
#[tokio::test]
async fn retries_are_bounded() {
    for spec in specs() {
        let error = || Reply::status(503, (spec.error)("overloaded"));
        let server = start(vec![error(), error(), error(), error()]).await;
        let settings = Settings {
            max_retries: 1,
            ..Settings::default()
        };
        let model = (spec.model)(&server, settings);
        let failed = model.complete(&request()).await.unwrap_err();
        assert_eq!(failed.status(), Some(503), "{}", spec.name);
        assert!(
            failed.message().ends_with("(gave up after 2 attempts)"),
            "{}: {failed}",
            spec.name
        );
        assert_eq!(server.received().len(), 2, "{}", spec.name);
    }
}

/// `max_tool_calls` and `max_response_bytes` bound an answer, streamed or not, and are not
/// retried.
#[tokio::test]
async fn limits() {
    for spec in specs() {
        let calls = [
            ("call_a", "lookup_order", r#"{"order_id":"ORD-1"}"#),
            ("call_b", "lookup_order", r#"{"order_id":"ORD-2"}"#),
        ];
        let pieces = [
            Piece::Call {
                index: 0,
                id: "call_a",
                name: "lookup_order",
            },
            Piece::Arguments {
                index: 0,
                fragment: calls[0].2,
            },
            Piece::Call {
                index: 1,
                id: "call_b",
                name: "lookup_order",
            },
            Piece::Arguments {
                index: 1,
                fragment: calls[1].2,
            },
        ];
        let server = start(vec![
            Reply::json((spec.answer)(None, &calls)),
            Reply::events((spec.stream)(&pieces)),
        ])
        .await;
        let settings = Settings {
            max_tool_calls: 1,
            ..Settings::default()
        };
        let model = (spec.model)(&server, settings);
        let failed = model.complete(&request()).await.unwrap_err();
        assert!(
            failed.message().contains("max_tool_calls"),
            "{}: {failed}",
            spec.name
        );
        let (_, failed) = collect(&*model, &request()).await;
        let failed = failed.expect("the stream fails");
        assert!(
            failed.message().contains("max_tool_calls"),
            "{}: {failed}",
            spec.name
        );
        assert_eq!(server.received().len(), 2, "{}", spec.name);

        let long = "x".repeat(4096);
        let server = start(vec![
            Reply::json((spec.answer)(Some(&long), &[])),
            Reply::events((spec.stream)(&[Piece::Text(&long)])),
        ])
        .await;
        let settings = Settings {
            max_response_bytes: 1024,
            ..Settings::default()
        };
        let model = (spec.model)(&server, settings);
        let failed = model.complete(&request()).await.unwrap_err();
        assert!(
            failed.message().contains("larger than 1024 bytes"),
            "{}: {failed}",
            spec.name
        );
        let (_, failed) = collect(&*model, &request()).await;
        let failed = failed.expect("the stream fails");
        assert!(
            failed.message().contains("1024 bytes"),
            "{}: {failed}",
            spec.name
        );
        assert_eq!(server.received().len(), 2, "{}", spec.name);
    }
}

/// `from_spec` knows every provider, and reads its key and base URL.
#[tokio::test]
async fn from_spec_knows_every_provider() {
    for spec in specs() {
        let name = spec.name;
        assert!(reticent::providers::PROVIDERS.contains(&name), "{name}");
        let server = start(vec![Reply::json((spec.answer)(Some("ok"), &[]))]).await;
        let vars = |var: &str| -> Option<String> {
            match var {
                v if v.ends_with("_API_KEY") => Some("k-test-0123456789".into()),
                "OPENAI_BASE_URL" => Some(format!("{}/v1", server.url)),
                "ANTHROPIC_BASE_URL" => Some(server.url.clone()),
                "GEMINI_BASE_URL" => Some(format!("{}/v1beta", server.url)),
                _ => None,
            }
        };
        let model = reticent::providers::from_spec(&format!("{name}:m-1"), vars).unwrap();
        let response = model.complete(&request()).await.unwrap();
        assert_eq!(response.text.as_deref(), Some("ok"), "{name}");
        let received = server.received();
        assert!(
            received[0].path.contains("/v1"),
            "{name}: {}",
            received[0].path
        );
        assert!(received[0].text().contains("k-test-0123456789"), "{name}");
    }
}
