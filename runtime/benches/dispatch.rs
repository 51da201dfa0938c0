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
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
struct Address {
    street: String,
    city: String,
    zip: u32,
}

#[derive(Debug, Serialize)]
struct Booking {
    id: String,
    nights: u32,
    city: Option<String>,
}

fn book_impl(guest: String, nights: u32, address: Option<Address>) -> Booking {
    Booking {
        id: guest,
        nights,
        city: address.map(|a| a.city),
    }
}

/// Book a room.
#[reticent::tool]
fn book(
    /// The guest's name.
    guest: String,
    /// How many nights.
    nights: u32,
    /// Where to send the invoice.
    address: Option<Address>,
) -> Booking {
    book_impl(guest, nights, address)
}

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum BookingError {
    #[error("no rooms left in {0} for {1} nights")]
    #[disclose(transient)]
    SoldOut(String, u32),
}

/// Book a room, failing.
#[reticent::tool]
fn book_failing(
    /// The guest's name.
    guest: String,
    /// How many nights.
    nights: u32,
    /// Where to send the invoice.
    address: Option<Address>,
) -> Result<Booking, BookingError> {
    let city = address.map_or_else(|| guest.clone(), |a| a.city);
    Err(BookingError::SoldOut(city, nights))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FloorArgs {
    guest: String,
    nights: u32,
    #[serde(default)]
    address: Option<Address>,
}

fn floor(args: Value) -> Value {
    let args: FloorArgs = serde_json::from_value(args).expect("valid");
    serde_json::to_value(book_impl(args.guest, args.nights, args.address)).expect("serializes")
}

fn args() -> Value {
    json!({
        "guest": "Ada Lovelace",
        "nights": 3,
        "address": {"street": "12 St James's Square", "city": "London", "zip": 10001}
    })
}

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
