//! The dispatch benchmark's workloads as a plain program, for counting instructions with
//! callgrind: wall-clock time on a shared two-core machine is noisy, instruction counts are
//! not. `runtime/benches/instructions.sh` runs it and prints the ratios.
//!
//! ```text
//! cargo bench -p reticent --bench dispatch_count -- MODE [N]
//! ```
//!
//! MODE is `inputs` (make and drop the inputs only), `floor` (hand-written serde), `tool`
//! (`Tool::call`), `failure` (a failing `Tool::call`, its error classified and rendered),
//! `floor_text` (`serde_json::from_str` straight into the struct), `text`
//! (`Tool::call_text`), `limited` (`Tool::call` of the same tool with constraints in its
//! schema, which its call checks), `limited_text` (its `Tool::call_text`) or `agent` (a whole
//! `Agent::run` of one tool round trip, its small output within the output budget).

use std::hint::black_box;

use reticent::{Agent, ToolContext};
use serde_json::Value;

#[path = "support/booking.rs"]
mod booking;

use booking::{
    failure, floor, floor_text, success, success_limited, success_limited_text, success_text,
};

#[path = "support/fixed_model.rs"]
mod fixed_model;

/// Add two numbers.
#[reticent::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mode = args.next().unwrap_or_default();
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let template = booking::args();
    let text = template.to_string();
    // Every mode makes the same inputs: what differs between modes is the work on them.
    let inputs: Vec<(Value, ToolContext)> = (0..n)
        .map(|_| (template.clone(), ToolContext::default()))
        .collect();
    // For `agent`: one agent, each run a tool round trip (the model's call of `add`, then its
    // answer), made before the runs.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let agent = Agent::builder(fixed_model::FixedModel::new(1))
        .tool(Add)
        .build()
        .expect("the agent builds");
    for (args, cx) in inputs {
        match mode.as_str() {
            "inputs" => {
                black_box((args, cx));
            }
            "floor" => {
                drop(cx);
                black_box(floor(args));
            }
            "tool" => {
                black_box(success(args, cx));
            }
            "failure" => {
                black_box(failure(args, cx));
            }
            "floor_text" => {
                drop((args, cx));
                black_box(floor_text(black_box(&text)));
            }
            "text" => {
                drop(args);
                black_box(success_text(black_box(&text), cx));
            }
            "limited" => {
                black_box(success_limited(args, cx));
            }
            "limited_text" => {
                drop(args);
                black_box(success_limited_text(black_box(&text), cx));
            }
            "agent" => {
                drop((args, cx));
                black_box(
                    runtime
                        .block_on(agent.run("go"))
                        .expect("the run completes"),
                );
            }
            other => panic!(
                "unknown mode {other:?}: inputs, floor, tool, failure, floor_text, text, limited, \
                 limited_text or agent"
            ),
        }
    }
}
