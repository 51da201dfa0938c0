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
            |(a, cx)| black_box(Book.call(a, cx).now_or_never().expect("ready").expect("ok")),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("floor_from_text", |b| {
        b.iter(|| black_box(floor_text(black_box(&text))))
    });
    group.bench_function("tool_call_text", |b| {
        b.iter_batched(
            ToolContext::default,
            |cx| {
                black_box(
                    Book.call_text(black_box(&text), cx)
                        .now_or_never()
                        .expect("ready")
                        .expect("ok"),
                )
            },
            BatchSize::SmallInput,
        )
    });
    // What a caller without `call_text` would do: parse into a `Value`, then `call`.
    group.bench_function("tool_parse_then_call", |b| {
        b.iter_batched(
            ToolContext::default,
            |cx| {
                let a: Value = serde_json::from_str(black_box(&text)).expect("valid");
                black_box(Book.call(a, cx).now_or_never().expect("ready").expect("ok"))
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
                let err = Book
                    .call(a, cx)
                    .now_or_never()
                    .expect("ready")
                    .expect_err("bad arguments");
                black_box(err.model_text("book", false))
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn failure(args: Value, cx: ToolContext) -> String {
    let err = BookFailing
        .call(args, cx)
        .now_or_never()
        .expect("ready")
        .expect_err("fails");
    err.model_text("book_failing", false)
}

fn success(args: Value, cx: ToolContext) -> Value {
    Book.call(args, cx)
        .now_or_never()
        .expect("ready")
        .expect("ok")
}

/// `value` as `Tool::call` returns its output.
fn boxed(value: Value) -> BoxFuture<'static, Value> {
    Box::pin(std::future::ready(value))
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
            |(a, _cx)| boxed(floor(a)).now_or_never().expect("ready"),
        ),
    );
    report(
        "Tool::call / floor as a BoxFuture",
        paired::compare(
            ROUNDS,
            BATCH,
            inputs,
            |(a, _cx)| boxed(floor(a)).now_or_never().expect("ready"),
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
            |cx| {
                Book.call_text(&text, cx)
                    .now_or_never()
                    .expect("ready")
                    .expect("ok")
            },
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
