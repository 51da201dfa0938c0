//! The dispatch benchmark's workloads as a plain program, for counting instructions with
//! callgrind: wall-clock time on a shared two-core machine is noisy, instruction counts are
//! not. `runtime/benches/instructions.sh` runs it and prints the ratios.
//!
//! ```text
//! cargo bench -p reticent --bench dispatch_count -- MODE [N]
//! ```
//!
//! MODE is `inputs` (make and drop the inputs only), `floor` (hand-written serde), `tool`
//! (`Tool::call`) or `failure` (a failing `Tool::call`, its error classified and rendered).

use std::hint::black_box;

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

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mode = args.next().unwrap_or_default();
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let template = json!({
        "guest": "Ada Lovelace",
        "nights": 3,
        "address": {"street": "12 St James's Square", "city": "London", "zip": 10001}
    });
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
            other => panic!("unknown mode {other:?}: inputs, floor, tool or failure"),
        }
    }
}
