//! What `#[tool]` dispatch costs, as a ratio to the floor: a hand-written
//! `#[derive(Deserialize)]` argument struct, `serde_json` decoding, a direct call and
//! `serde_json::to_value` of the output, measured in the same run.
//!
//! ```text
//! cargo bench -p reticent --bench dispatch
//! ```

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use futures::FutureExt;
use reticent::{Tool, ToolContext};
use serde_json::{Value, json};

#[path = "support/booking.rs"]
mod booking;

use booking::{Book, BookFailing, FloorArgs, args, book_impl, floor};

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
        b.iter(|| {
            let args: FloorArgs = serde_json::from_str(black_box(&text)).expect("valid");
            black_box(
                serde_json::to_value(book_impl(args.guest, args.nights, args.address)).expect("ok"),
            )
        })
    });
    group.bench_function("tool_from_text", |b| {
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
            |(a, cx)| {
                let err = BookFailing
                    .call(a, cx)
                    .now_or_never()
                    .expect("ready")
                    .expect_err("fails");
                black_box(err.model_text("book_failing", false))
            },
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

criterion_group!(benches, dispatch);
criterion_main!(benches);
