//! The dispatch ratios, paired: each path and its baseline timed in alternating batches in
//! one process, the ratio taken per pair of batches and its median reported
//! (`support/paired.rs`). Criterion's separate timings drift on a shared machine by more than
//! the differences measured here.
//!
//! ```text
//! cargo bench -p reticent --bench dispatch_ratios
//! ```

use reticent::{Tool, ToolContext, tool::ArgumentValidator};

#[path = "support/booking.rs"]
mod booking;
#[path = "support/paired.rs"]
mod paired;

use booking::{
    Book, BookLimited, args, failure, floor, floor_boxed, floor_text, success, success_limited,
    success_limited_text, success_text,
};

fn main() {
    const ROUNDS: usize = 400;
    const BATCH: usize = 500;
    let args = args();
    let text = args.to_string();
    let inputs = || (args.clone(), ToolContext::default());
    println!(
        "paired ratios: median over {ROUNDS} rounds, each timing a batch of {BATCH} calls of \
         both paths in turn [interquartile range]"
    );
    let report = |what: &str, p: paired::Paired| {
        println!(
            "  {what:<44} {:.3}x  [{:.3}x {:.3}x]   ({:?} vs {:?} per call)",
            p.ratio, p.ratio_iqr.0, p.ratio_iqr.1, p.candidate, p.baseline
        );
    };
    report(
        "Tool::call / floor, from a Value",
        paired::compare(
            ROUNDS,
            BATCH,
            inputs,
            |(a, _cx)| floor(a),
            |(a, cx)| success(a, cx),
        ),
    );
    // How much of that the trait's signature takes: `call` returns a `BoxFuture`, so even the
    // floor, returned that way, allocates once and is polled through a vtable.
    report(
        "floor as a BoxFuture / floor",
        paired::compare(
            ROUNDS,
            BATCH,
            inputs,
            |(a, _cx)| floor(a),
            |(a, _cx)| floor_boxed(a),
        ),
    );
    report(
        "Tool::call / floor as a BoxFuture",
        paired::compare(
            ROUNDS,
            BATCH,
            inputs,
            |(a, _cx)| floor_boxed(a),
            |(a, cx)| success(a, cx),
        ),
    );
    report(
        "Tool::call_text / floor, from JSON text",
        paired::compare(
            ROUNDS,
            BATCH,
            ToolContext::default,
            |_cx| floor_text(&text),
            |cx| success_text(&text, cx),
        ),
    );
    report(
        "parse to Value + Tool::call / floor, from text",
        paired::compare(
            ROUNDS,
            BATCH,
            ToolContext::default,
            |_cx| floor_text(&text),
            |cx| success(serde_json::from_str(&text).expect("valid"), cx),
        ),
    );
    // A tool checks its own schema's constraints in `Tool::call`. `book` has none beyond its
    // types: it checks nothing. `book_limited` is the same tool with a range on `nights` and on
    // the zip code, and lengths on the street and the city: its call checks them first.
    let unchecked = ArgumentValidator::new(&Book.definition().parameters).expect("compiles");
    assert!(unchecked.is_none(), "`book` has nothing to check");
    let limited = ArgumentValidator::new(&BookLimited.definition().parameters).expect("compiles");
    assert!(limited.is_some(), "`book_limited` has constraints");
    report(
        "constraints: Tool::call checked / unchecked",
        paired::compare(
            ROUNDS,
            BATCH,
            inputs,
            |(a, cx)| success(a, cx),
            |(a, cx)| success_limited(a, cx),
        ),
    );
    report(
        "constraints: Tool::call checked / floor",
        paired::compare(
            ROUNDS,
            BATCH,
            inputs,
            |(a, _cx)| floor(a),
            |(a, cx)| success_limited(a, cx),
        ),
    );
    // From text, a checked tool's arguments are parsed into a `Value`, checked, and decoded.
    report(
        "constraints, from text: checked / unchecked",
        paired::compare(
            ROUNDS,
            BATCH,
            ToolContext::default,
            |cx| success_text(&text, cx),
            |cx| success_limited_text(&text, cx),
        ),
    );
    report(
        "failure rendered / success, Tool::call",
        paired::compare(
            ROUNDS,
            BATCH,
            inputs,
            |(a, cx)| success(a, cx),
            |(a, cx)| failure(a, cx),
        ),
    );
}
