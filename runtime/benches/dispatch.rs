//! What `#[tool]` dispatch costs, as a ratio to the floor: a hand-written
//! `#[derive(Deserialize)]` argument struct, `serde_json` decoding, a direct call and
//! `serde_json::to_value` of the output, measured in the same run.
//!
//! ```text
//! cargo bench -p reticent --bench dispatch
//! ```
//!
//! Criterion times each path on its own; on a shared machine whose speed drifts, the ratio of
//! two such times can be off by a third either way. So the run ends with paired ratios: the
//! path and its baseline timed in alternating batches, the ratio taken per pair and its median
//! reported (`support/paired.rs`).

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group};
use futures::FutureExt;
use futures::future::BoxFuture;
use reticent::{Tool, ToolContext};
use serde_json::{Value, json};

#[path = "support/booking.rs"]
mod booking;
#[path = "support/paired.rs"]
mod paired;

use booking::{Book, BookFailing, args, floor, floor_text};

fn dispatch(c: &mut Criterion) {
    let args = args();
    let text = args.to_string();
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("floor_from_value", |b| {
        b.iter_batched(
            || args.clone(),
            |a| black_box(floor(a)),
            BatchSize::SmallInput,
        )
    });
    // The arguments and the call's context are inputs, made before the clock starts; what
    // is timed is decoding, the call, encoding, and dropping what was made.
    group.bench_function("tool_from_value", |b| {
        b.iter_batched(
            || (args.clone(), ToolContext::default()),
            |(a, cx)| black_box(success(a, cx)),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("floor_from_text", |b| {
        b.iter(|| black_box(floor_text(black_box(&text))))
    });
    group.bench_function("tool_call_text", |b| {
        b.iter_batched(
            ToolContext::default,
            |cx| black_box(success_text(black_box(&text), cx)),
            BatchSize::SmallInput,
        )
    });
    // What a caller without `call_text` would do: parse into a `Value`, then `call`.
    group.bench_function("tool_parse_then_call", |b| {
        b.iter_batched(
            ToolContext::default,
            |cx| {
                let a: Value = serde_json::from_str(black_box(&text)).expect("valid");
                black_box(success(a, cx))
            },
            BatchSize::SmallInput,
        )
    });
    // The failure path: the same decoding, an error classified as `BookingError::SoldOut`
    // with its hint, and the model's text rendered — against the success path above.
    group.bench_function("tool_failure_rendered", |b| {
        b.iter_batched(
            || (args.clone(), ToolContext::default()),
            |(a, cx)| black_box(failure(a, cx)),
            BatchSize::SmallInput,
        )
    });
    let bad = json!({"guest": "Ada", "nights": "three"});
    group.bench_function("tool_argument_error", |b| {
        b.iter_batched(
            || (bad.clone(), ToolContext::default()),
            |(a, cx)| {
                let err = ready(Book.call(a, cx)).expect_err("bad arguments");
                black_box(err.model_text("book", false))
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// The output of a future that is ready when made, as every path here returns.
fn ready<T>(future: BoxFuture<'_, T>) -> T {
    future.now_or_never().expect("ready")
}

fn success(args: Value, cx: ToolContext) -> Value {
    ready(Book.call(args, cx)).expect("ok")
}

fn success_text(text: &str, cx: ToolContext) -> Value {
    ready(Book.call_text(text, cx)).expect("ok")
}

fn failure(args: Value, cx: ToolContext) -> String {
    let err = ready(BookFailing.call(args, cx)).expect_err("fails");
    err.model_text("book_failing", false)
}

/// The floor's output, returned as `Tool::call` returns its output.
fn floor_boxed(args: Value) -> Value {
    ready(Box::pin(std::future::ready(floor(args))))
}

/// The paired ratios, printed after criterion's report.
fn ratios() {
    const ROUNDS: usize = 400;
    const BATCH: usize = 500;
    let args = args();
    let text = args.to_string();
    let inputs = || (args.clone(), ToolContext::default());
    println!(
        "\npaired ratios: median over {ROUNDS} rounds, each timing a batch of {BATCH} calls of \
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

criterion_group!(benches, dispatch);

/// Criterion's filter: its one positional argument, skipping the values of its options.
fn filter(args: &[String]) -> Option<&str> {
    const TAKE_A_VALUE: &[&str] = &[
        "--color",
        "--save-baseline",
        "--baseline",
        "--baseline-lenient",
        "--load-baseline",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--plotting-backend",
        "--output-format",
        "--profile-time",
        "--format",
    ];
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if TAKE_A_VALUE.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            return Some(arg);
        }
    }
    None
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // As criterion does, run the ratios only when benchmarking (`cargo bench`), and only when
    // no filter leaves them out (`cargo bench --bench dispatch -- ratios`).
    let args: Vec<String> = std::env::args().skip(1).collect();
    let benchmarking = args.iter().any(|a| a == "--bench");
    if benchmarking && filter(&args).is_none_or(|f| "ratios".contains(f)) {
        ratios();
    }
}
