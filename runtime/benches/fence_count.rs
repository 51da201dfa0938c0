//! The agent loop with a trusted tool, an untrusted one whose output is fenced, and the same
//! untrusted tool with the fence turned off, as a plain program for counting instructions with
//! callgrind. `runtime/benches/fence_instructions.sh` runs it and prints the ratios.
//!
//! ```text
//! cargo bench -p reticent --bench fence_count -- MODE [N]
//! ```
//!
//! MODE is `build` (make the agents and models only), `trusted` (N runs of `ROUND_TRIPS`
//! round trips of a trusted tool), `fenced` (the same tool, untrusted: each output fenced) or
//! `unfenced` (untrusted, with `fence_untrusted_output(false)`).

use std::hint::black_box;

use reticent::Agent;

#[path = "support/fixed_model.rs"]
mod fixed_model;
use fixed_model::FixedModel;

/// Round trips per run.
const ROUND_TRIPS: usize = 50;

/// Add two numbers.
#[reticent::tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Add two numbers, as a tool whose output is untrusted.
#[reticent::tool(name = "add", untrusted_output)]
fn add_untrusted(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mode = args.next().unwrap_or_default();
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(200);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    for _ in 0..n {
        // Every mode builds an agent: what differs is the tool and the fence.
        let builder =
            Agent::builder(FixedModel::new(ROUND_TRIPS)).max_turns(ROUND_TRIPS as u32 + 1);
        let agent = match mode.as_str() {
            "build" | "trusted" => builder.tool(Add),
            "fenced" => builder.tool(AddUntrusted),
            "unfenced" => builder.tool(AddUntrusted).fence_untrusted_output(false),
            other => panic!("unknown mode {other:?}: build, trusted, fenced or unfenced"),
        }
        .build()
        .expect("valid");
        if mode == "build" {
            black_box(agent);
            continue;
        }
        black_box(runtime.block_on(agent.run("go")).expect("completes"));
    }
}
