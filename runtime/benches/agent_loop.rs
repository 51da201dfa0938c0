//! The agent loop's own cost per tool round trip, as a ratio to a hand-written minimal loop
//! over the same model and tool measured in the same run; and N concurrent calls of one turn
//! against the slowest of them.
//!
//! ```text
//! cargo bench -p reticent --bench agent_loop
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use reticent::{
    Agent, Message, Model, ModelRequest, ModelResponse, Tool, ToolCall, ToolContext, ToolResult,
};
use serde_json::json;

/// Round trips per run.
const ROUND_TRIPS: usize = 50;

#[path = "support/fixed_model.rs"]
mod fixed_model;
use fixed_model::FixedModel;

/// Add two numbers.
#[reticent::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Wait for the given milliseconds.
#[reticent::tool]
async fn wait(ms: u64) -> u64 {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    ms
}

/// The floor: the least a loop must do per round trip — call the model, record its message,
/// call the tool, record the result.
async fn minimal_loop(model: &FixedModel, input: &str) -> String {
    let mut request = ModelRequest {
        system: None,
        messages: vec![Message::user(input)],
        tools: vec![Add.definition().clone()],
    };
    loop {
        let response = model.complete(&request).await.expect("scripted");
        request.messages.push(Message::Assistant {
            text: response.text.clone(),
            tool_calls: response.tool_calls.clone(),
        });
        if response.tool_calls.is_empty() {
            return response.text.unwrap_or_default();
        }
        for call in response.tool_calls {
            let output = Add
                .call(
                    call.arguments.into_value(),
                    ToolContext::new(call.id.as_str(), call.name.as_str()),
                )
                .await
                .expect("adds");
            request.messages.push(Message::Tool(ToolResult {
                call_id: call.id,
                name: call.name,
                content: output.to_string(),
                is_error: false,
            }));
        }
    }
}

fn round_trips(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("loop");
    group.bench_function(format!("minimal_loop_{ROUND_TRIPS}_round_trips"), |b| {
        b.iter_batched(
            || FixedModel::new(ROUND_TRIPS),
            |model| runtime.block_on(async { black_box(minimal_loop(&model, "go").await) }),
            BatchSize::SmallInput,
        )
    });
    group.bench_function(format!("agent_{ROUND_TRIPS}_round_trips"), |b| {
        b.iter_batched(
            || {
                Agent::builder(FixedModel::new(ROUND_TRIPS))
                    .tool(Add)
                    .max_turns(ROUND_TRIPS as u32 + 1)
                    .build()
                    .expect("valid")
            },
            |agent| {
                runtime.block_on(async { black_box(agent.run("go").await.expect("completes")) })
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// N calls of one turn, each waiting 20 ms, against one call waiting 20 ms.
fn concurrency(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("concurrent_calls");
    group.sample_size(10);
    for n in [1usize, 8] {
        group.bench_function(format!("{n}_calls_of_20ms"), |b| {
            b.iter_batched(
                || {
                    let calls = (0..n)
                        .map(|i| ToolCall::new(format!("c{i}"), "wait", json!({"ms": 20})))
                        .collect();
                    let model = reticent::ScriptedModel::new(vec![
                        ModelResponse::tool_calls(calls),
                        ModelResponse::text("done"),
                    ]);
                    Agent::builder(model)
                        .tool(Wait)
                        .max_parallel_tools(n)
                        .build()
                        .expect("valid")
                },
                |agent| runtime.block_on(async { black_box(agent.run("go").await.expect("ok")) }),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, round_trips, concurrency);
criterion_main!(benches);
