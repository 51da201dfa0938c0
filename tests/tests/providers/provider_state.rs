//! State a provider must get back with a call next turn — Gemini's thought signatures, the
//! Responses API's reasoning items — survives a multi-turn run (streamed or not), a saved and
//! resumed `RunState`, and a replayed trajectory.

use std::sync::Arc;

use futures::future::BoxFuture;
use reticent::{
    Agent, AgentEvent, Decisions, Model, ModelError, ModelRequest, ModelResponse, ReplayModel,
    RunState, SchemaDialect, StopReason, Trajectory,
};
use reticent_tests::conformance::{Settings, gemini, openai_responses};
use reticent_tests::provider::{Reply, TestServer};
use serde_json::{Value, json};

/// Look up an order by id.
#[reticent::tool]
async fn lookup_order(order_id: String) -> String {
    format!("{order_id} has shipped")
}

/// A provider with its first answer (one call to `lookup_order` carrying state), whole and
/// streamed, its last answer, and a check that a request body sent that state back.
struct Case {
    name: &'static str,
    model: fn(&TestServer) -> Arc<dyn Model>,
    first: fn() -> String,
    first_stream: fn() -> String,
    last: fn() -> String,
    sent_back: fn(&Value),
}

/// Gemini: the signature on the `functionCall` part, no id from the API.
fn gemini_case() -> Case {
    Case {
        name: "gemini",
        model: |server| Arc::new(gemini::build(server, Settings::default())),
        first: || {
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"text": "thinking it over", "thought": true},
                {"functionCall": {"name": "lookup_order", "args": {"order_id": "ORD-1042"}},
                 "thoughtSignature": "c2lnLUE="}
            ]}, "finishReason": "STOP"}],
             "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}})
            .to_string()
        },
        first_stream: || {
            let chunk = json!({"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "lookup_order", "args": {"order_id": "ORD-1042"}},
                 "thoughtSignature": "c2lnLUE="}
            ]}, "finishReason": "STOP"}],
             "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}});
            format!("data: {chunk}\n\n")
        },
        last: || {
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Shipped."}]},
                                   "finishReason": "STOP"}]})
            .to_string()
        },
        sent_back: |body| {
            let contents = &body["contents"];
            assert_eq!(
                contents[1],
                json!({"role": "model", "parts": [
                    {"functionCall": {"name": "lookup_order", "args": {"order_id": "ORD-1042"}},
                     "thoughtSignature": "c2lnLUE="}
                ]}),
                "{body}"
            );
            // no id from the API: the result is matched by order, with the call's name
            assert_eq!(
                contents[2],
                json!({"role": "user", "parts": [
                    {"functionResponse": {"name": "lookup_order",
                                          "response": {"output": "ORD-1042 has shipped"}}}
                ]}),
                "{body}"
            );
        },
    }
}

fn reasoning() -> Value {
    json!({"type": "reasoning", "id": "rs_1", "summary": [],
           "encrypted_content": "gAAAAB-encrypted-chain"})
}

fn function_call() -> Value {
    json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup_order",
           "arguments": "{\"order_id\":\"ORD-1042\"}", "status": "completed"})
}

/// The Responses API: a reasoning item before the call, sent back in its place.
fn responses_case() -> Case {
    Case {
        name: "openai-responses",
        model: |server| Arc::new(openai_responses::build(server, Settings::default())),
        first: || {
            json!({"id": "resp_1", "status": "completed", "output": [reasoning(), function_call()],
                   "usage": {"input_tokens": 10, "output_tokens": 5}})
            .to_string()
        },
        first_stream: || {
            let event = |data: Value| {
                format!(
                    "event: {}\ndata: {data}\n\n",
                    data["type"].as_str().unwrap()
                )
            };
            let mut added = function_call();
            added["arguments"] = json!("");
            [
                event(json!({"type": "response.created", "response": {"id": "resp_1"}})),
                event(
                    json!({"type": "response.output_item.added", "output_index": 0,
                             "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
                ),
                event(
                    json!({"type": "response.output_item.done", "output_index": 0,
                             "item": reasoning()}),
                ),
                event(
                    json!({"type": "response.output_item.added", "output_index": 1,
                             "item": added}),
                ),
                event(json!({"type": "response.function_call_arguments.delta",
                             "item_id": "fc_1", "output_index": 1,
                             "delta": "{\"order_id\":"})),
                event(json!({"type": "response.function_call_arguments.delta",
                             "item_id": "fc_1", "output_index": 1, "delta": "\"ORD-1042\"}"})),
                event(json!({"type": "response.function_call_arguments.done",
                             "item_id": "fc_1", "output_index": 1,
                             "arguments": "{\"order_id\":\"ORD-1042\"}"})),
                event(
                    json!({"type": "response.output_item.done", "output_index": 1,
                             "item": function_call()}),
                ),
                event(json!({"type": "response.completed", "response": {
                    "id": "resp_1", "status": "completed",
                    "output": [reasoning(), function_call()],
                    "usage": {"input_tokens": 10, "output_tokens": 5}}})),
            ]
            .concat()
        },
        last: || {
            json!({"id": "resp_2", "status": "completed", "output": [
                {"type": "message", "id": "msg_2", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Shipped."}]}]})
            .to_string()
        },
        sent_back: |body| {
            assert_eq!(body["store"], false, "{body}");
            assert_eq!(
                body["include"],
                json!(["reasoning.encrypted_content"]),
                "{body}"
            );
            let input = body["input"].as_array().unwrap();
            assert_eq!(
                input[0],
                json!({"role": "user", "content": "Where is ORD-1042?"})
            );
            assert_eq!(input[1], reasoning(), "{body}");
            assert_eq!(
                input[2],
                json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
                       "name": "lookup_order", "arguments": "{\"order_id\":\"ORD-1042\"}"}),
                "{body}"
            );
            assert_eq!(
                input[3],
                json!({"type": "function_call_output", "call_id": "call_1",
                       "output": "ORD-1042 has shipped"}),
                "{body}"
            );
            assert_eq!(input.len(), 4, "{body}");
        },
    }
}

fn cases() -> [Case; 2] {
    [gemini_case(), responses_case()]
}

/// A replay in the dialect of the provider it was recorded with, so that the tools it is
/// offered are the ones recorded.
struct Replaying {
    replay: ReplayModel,
    dialect: SchemaDialect,
}

impl Model for Replaying {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.replay.complete(request)
    }

    fn schema_dialect(&self) -> SchemaDialect {
        self.dialect
    }
}

fn agent(model: Arc<dyn Model>, approval: bool) -> Agent {
    let builder = Agent::builder(model).tool(LookupOrder);
    let builder = if approval {
        builder.require_approval("lookup_order")
    } else {
        builder
    };
    builder.build().unwrap()
}

#[tokio::test]
async fn the_state_goes_back_next_turn_streamed_or_not() {
    for case in cases() {
        for stream in [false, true] {
            let first = if stream {
                Reply::events((case.first_stream)())
            } else {
                Reply::json((case.first)())
            };
            let server = TestServer::start(vec![first, Reply::json((case.last)())]).await;
            let agent = agent((case.model)(&server), false);
            let result = if stream {
                let mut events = agent.run_stream("Where is ORD-1042?");
                let mut finished = None;
                while let Some(event) = futures::StreamExt::next(&mut events).await {
                    if let AgentEvent::Finished(result) = event {
                        finished = Some(result);
                    }
                }
                finished.unwrap().unwrap()
            } else {
                agent.run("Where is ORD-1042?").await.unwrap()
            };
            assert_eq!(result.output, "Shipped.", "{} {stream}", case.name);
            let received = server.received();
            assert_eq!(received.len(), 2, "{}", case.name);
            (case.sent_back)(&received[1].json());
        }
    }
}

#[tokio::test]
async fn the_state_survives_a_saved_and_resumed_run() {
    for case in cases() {
        let server = TestServer::start(vec![
            Reply::json((case.first)()),
            Reply::json((case.last)()),
        ])
        .await;
        let paused = agent((case.model)(&server), true)
            .run("Where is ORD-1042?")
            .await
            .unwrap();
        assert_eq!(
            paused.stop_reason,
            StopReason::AwaitingApproval,
            "{}",
            case.name
        );
        // saved as JSON, read back by another agent with another model value
        let saved = serde_json::to_string(&paused.state.unwrap()).unwrap();
        let state: RunState = serde_json::from_str(&saved).unwrap();
        let pending = state.pending();
        let result = agent((case.model)(&server), true)
            .resume(state, Decisions::new().approve(&pending[0]))
            .await
            .unwrap();
        assert_eq!(result.output, "Shipped.", "{}", case.name);
        let received = server.received();
        assert_eq!(received.len(), 2, "{}", case.name);
        (case.sent_back)(&received[1].json());
    }
}

#[tokio::test]
async fn the_state_survives_a_replayed_trajectory() {
    for case in cases() {
        let server = TestServer::start(vec![
            Reply::json((case.first)()),
            Reply::json((case.last)()),
        ])
        .await;
        let recorded = agent((case.model)(&server), false)
            .run("Where is ORD-1042?")
            .await
            .unwrap()
            .trajectory;
        let saved = serde_json::to_string(&recorded).unwrap();
        let trajectory: Trajectory = serde_json::from_str(&saved).unwrap();
        assert_eq!(trajectory, recorded, "{}", case.name);

        // replayed: the requests of the replay match the recording, state included
        let replay = ReplayModel::new(trajectory.clone());
        let dialect = (case.model)(&server).schema_dialect();
        let replaying = Replaying {
            replay: replay.clone(),
            dialect,
        };
        let replayed = agent(Arc::new(replaying), false)
            .run("Where is ORD-1042?")
            .await
            .unwrap();
        assert_eq!(replayed.output, "Shipped.", "{}", case.name);
        assert_eq!(replay.remaining(), 0, "{}", case.name);

        // and the recorded request, sent to the provider again, carries the state
        let server = TestServer::start(vec![Reply::json((case.last)())]).await;
        let request = trajectory.request(1).unwrap();
        (case.model)(&server).complete(&request).await.unwrap();
        (case.sent_back)(&server.received()[0].json());
    }
}
