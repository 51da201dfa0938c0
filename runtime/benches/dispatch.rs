//! What `#[tool]` dispatch costs, as a ratio to the floor: a hand-written
//! `#[derive(Deserialize)]` argument struct, `serde_json` decoding, a direct call and
//! `serde_json::to_value` of the output, measured in the same run.
//!
//! ```text
//! cargo bench -p reticent --bench dispatch
//! ```
//!
//! Criterion times each path on its own; on a shared machine whose speed drifts, the ratio of
//! two such times can be off by a third either way. `dispatch_ratios` measures the ratios
//! themselves, paired.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use reticent::{Tool, ToolContext};
use serde_json::{Value, json};

#[path = "support/booking.rs"]
mod booking;

use booking::{Book, args, failure, floor, floor_text, ready, success, success_text};

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

criterion_group!(benches, dispatch);
criterion_main!(benches);
