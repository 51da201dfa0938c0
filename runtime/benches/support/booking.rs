//! The tool both dispatch benchmarks measure, and the hand-written floor it is measured
//! against: a string, an integer and an optional nested struct; and the same tool with
//! constraints in its schema (`book_limited`), which its call checks first.
#![allow(dead_code)]

use futures::FutureExt;
use futures::future::BoxFuture;
use reticent::{Tool, ToolContext};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub struct Address {
    pub street: String,
    pub city: String,
    pub zip: u32,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Booking {
    id: String,
    nights: u32,
    city: Option<String>,
}

pub fn book_impl(guest: String, nights: u32, address: Option<Address>) -> Booking {
    Booking {
        id: guest,
        nights,
        city: address.map(|a| a.city),
    }
}

/// Book a room.
#[reticent::tool]
pub fn book(
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
pub enum BookingError {
    #[error("no rooms left in {0} for {1} nights")]
    #[disclose(transient)]
    SoldOut(String, u32),
}

/// Book a room, failing.
#[reticent::tool]
pub fn book_failing(
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
pub struct FloorArgs {
    pub guest: String,
    pub nights: u32,
    #[serde(default)]
    pub address: Option<Address>,
}

pub fn floor(args: Value) -> Value {
    let args: FloorArgs = serde_json::from_value(args).expect("valid");
    serde_json::to_value(book_impl(args.guest, args.nights, args.address)).expect("serializes")
}

/// The floor from the JSON text: `serde_json::from_str` straight into the struct.
pub fn floor_text(text: &str) -> Value {
    let args: FloorArgs = serde_json::from_str(text).expect("valid");
    serde_json::to_value(book_impl(args.guest, args.nights, args.address)).expect("serializes")
}

pub fn args() -> Value {
    json!({
        "guest": "Ada Lovelace",
        "nights": 3,
        "address": {"street": "12 St James's Square", "city": "London", "zip": 10001}
    })
}

/// The output of a future that is ready when made, as every path measured returns.
pub fn ready<T>(future: impl std::future::Future<Output = T>) -> T {
    future.now_or_never().expect("ready")
}

pub fn success(args: Value, cx: ToolContext) -> Value {
    ready(Book.call(args, cx)).expect("ok")
}

pub fn success_text(text: &str, cx: ToolContext) -> Value {
    ready(Book.call_text(text, cx)).expect("ok")
}

/// How many nights: 1 to 30.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub struct Nights(#[schemars(range(min = 1, max = 30))] pub u32);

/// An address whose parts carry constraints.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub struct LimitedAddress {
    #[schemars(length(min = 1, max = 80))]
    pub street: String,
    #[schemars(length(min = 1, max = 40))]
    pub city: String,
    #[schemars(range(min = 501, max = 99_950))]
    pub zip: u32,
}

/// Book a room, with limits on what is asked.
#[reticent::tool]
pub fn book_limited(
    /// The guest's name.
    guest: String,
    /// How many nights.
    nights: Nights,
    /// Where to send the invoice.
    address: Option<LimitedAddress>,
) -> Booking {
    let address = address.map(|a| Address {
        street: a.street,
        city: a.city,
        zip: a.zip,
    });
    book_impl(guest, nights.0, address)
}

pub fn success_limited(args: Value, cx: ToolContext) -> Value {
    ready(BookLimited.call(args, cx)).expect("ok")
}

pub fn success_limited_text(text: &str, cx: ToolContext) -> Value {
    ready(BookLimited.call_text(text, cx)).expect("ok")
}

pub fn failure(args: Value, cx: ToolContext) -> String {
    let err = ready(BookFailing.call(args, cx)).expect_err("fails");
    err.model_text("book_failing", false)
}

/// The floor's output, returned as `Tool::call` returns its output.
pub fn floor_boxed(args: Value) -> Value {
    let boxed: BoxFuture<'_, Value> = Box::pin(std::future::ready(floor(args)));
    ready(boxed)
}
