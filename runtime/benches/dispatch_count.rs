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
//! `floor_text` (`serde_json::from_str` straight into the struct) or `text`
//! (`Tool::call_text`).

use std::hint::black_box;

use futures::FutureExt;
use reticent::{Tool, ToolContext};
use serde_json::Value;

#[path = "support/booking.rs"]
mod booking;

use booking::{Book, BookFailing, FloorArgs, book_impl};

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
    for (args, cx) in inputs {
        match mode.as_str() {
            "inputs" => {
                black_box((args, cx));
            }
            "floor" => {
                drop(cx);
                let args: FloorArgs = serde_json::from_value(args).expect("valid");
                let output = book_impl(args.guest, args.nights, args.address);
                black_box(serde_json::to_value(output).expect("serializes"));
            }
            "tool" => {
                black_box(
                    Book.call(args, cx)
                        .now_or_never()
                        .expect("ready")
                        .expect("ok"),
                );
            }
            "failure" => {
                let error = BookFailing
                    .call(args, cx)
                    .now_or_never()
                    .expect("ready")
                    .expect_err("fails");
                black_box(error.model_text("book_failing", false));
            }
            "floor_text" => {
                drop((args, cx));
                black_box(booking::floor_text(black_box(&text)));
            }
            "text" => {
                drop(args);
                black_box(
                    Book.call_text(black_box(&text), cx)
                        .now_or_never()
                        .expect("ready")
                        .expect("ok"),
                );
            }
            other => {
                panic!("unknown mode {other:?}: inputs, floor, tool, failure, floor_text or text")
            }
        }
    }
}
