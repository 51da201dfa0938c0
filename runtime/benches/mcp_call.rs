//! One `tools/call` answered by reticent's `McpServer` against the same tool served by rmcp's
//! own `#[tool_router]` + `#[tool_handler]` server, in one process (`support/mcp_servers.rs`).
//!
//! ```text
//! cargo bench -p reticent --features mcp --bench mcp_call              # paired ratios
//! cargo bench -p reticent --features mcp --bench mcp_call -- count MODE N
//! runtime/benches/mcp_instructions.sh                                  # by instructions
//! ```
//!
//! Two tools: `book` answers with text only, `book_structured` with structured output as well
//! (`support/mcp_servers.rs`). The ratios are paired (`support/paired.rs`): both servers timed
//! in alternating batches, the ratio taken per pair. `count` makes N calls of one MODE and
//! nothing else, for callgrind: `inputs` (the requests and contexts made and dropped),
//! `rmcp`, `reticent`, `rmcp_structured`, `reticent_structured` or `bare` (reticent's text tool
//! called by `BareHandler`, the least a handler can do with it: what the server adds is
//! `reticent` against it).

use std::hint::black_box;

#[path = "support/booking.rs"]
mod booking;
#[path = "support/mcp_servers.rs"]
mod mcp_servers;
#[path = "support/paired.rs"]
mod paired;

use mcp_servers::{BareHandler, Bench, call, check};
use rmcp::ServerHandler;

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mut bench = Bench::new();
    check(&mut bench);
    match args.next().as_deref() {
        None => ratios(&mut bench),
        Some("count") => {
            let mode = args.next().unwrap_or_default();
            let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20_000);
            count(&mut bench, &mode, n);
        }
        Some(other) => panic!("unknown argument {other:?}: no argument, or `count MODE N`"),
    }
}

fn ratios(bench: &mut Bench) {
    let runtime = bench.runtime.handle().clone();
    let _entered = runtime.enter();
    let reticent = bench.reticent.clone();
    let rmcp = bench.rmcp.clone();
    println!(
        "tools/call, reticent McpServer / rmcp #[tool_router] + #[tool_handler]: median over \
         {ROUNDS} rounds of {BATCH} calls each [interquartile range]"
    );
    compare(bench, "book", "text output", &rmcp, &reticent);
    compare(
        bench,
        "book_structured",
        "structured output",
        &rmcp,
        &reticent,
    );
    // Where the text output's difference is: the tool, or the server around it.
    let bare = BareHandler::new();
    println!("the text tool called by a bare handler (no lookup, span, clock or containment):");
    compare(bench, "book", "bare handler / rmcp", &rmcp, &bare);
    compare(bench, "book", "McpServer / bare handler", &bare, &reticent);
}

const ROUNDS: usize = 400;
const BATCH: usize = 200;

/// Prints the paired ratio of calls of `tool` on `candidate` to calls on `baseline`.
fn compare(
    bench: &mut Bench,
    tool: &'static str,
    what: &str,
    baseline: &impl ServerHandler,
    candidate: &impl ServerHandler,
) {
    let p = paired::compare(
        ROUNDS,
        BATCH,
        || bench.input(tool),
        |input| call(baseline, input),
        |input| call(candidate, input),
    );
    println!(
        "  {what:<24} {:.3}x [{:.3}x {:.3}x]   ({:?} vs {:?} per call)",
        p.ratio, p.ratio_iqr.0, p.ratio_iqr.1, p.candidate, p.baseline
    );
}

fn count(bench: &mut Bench, mode: &str, n: usize) {
    let tool = if mode.ends_with("_structured") {
        "book_structured"
    } else {
        "book"
    };
    let inputs: Vec<_> = (0..n).map(|_| bench.input(tool)).collect();
    let bare = BareHandler::new();
    let _entered = bench.runtime.enter();
    for input in inputs {
        match mode {
            "inputs" => drop(black_box(input)),
            "rmcp" | "rmcp_structured" => drop(black_box(call(&bench.rmcp, input))),
            "reticent" | "reticent_structured" => drop(black_box(call(&bench.reticent, input))),
            "bare" => drop(black_box(call(&bare, input))),
            other => panic!(
                "unknown mode {other:?}: inputs, rmcp, reticent, rmcp_structured, \
                 reticent_structured or bare"
            ),
        }
    }
}
