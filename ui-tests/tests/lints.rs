//! Every macro shape in a crate that denies warnings and strict lints: code the macros
//! generate must never trigger a lint in a user's crate. `cargo test` checks the rustc lints,
//! `cargo clippy --all-targets` the clippy ones.

#![deny(
    warnings,
    future_incompatible,
    let_underscore,
    missing_copy_implementations,
    missing_debug_implementations,
    missing_docs,
    nonstandard_style,
    redundant_lifetimes,
    rust_2018_idioms,
    rust_2024_compatibility,
    single_use_lifetimes,
    trivial_casts,
    trivial_numeric_casts,
    unit_bindings,
    unreachable_pub,
    unused,
    unused_import_braces,
    unused_lifetimes,
    unused_qualifications,
    unused_results,
    variant_size_differences,
    clippy::all,
    clippy::pedantic,
    clippy::nursery
)]
#![forbid(unsafe_code)]
// Lints about the shape of the functions written here, which the macros pass through as
// written; none of them can fire on generated code (trait impls and private items).
#![allow(
    clippy::implicit_hasher,
    clippy::missing_const_for_fn,
    clippy::missing_errors_doc,
    clippy::must_use_candidate,
    clippy::needless_pass_by_value,
    clippy::unnecessary_wraps,
    clippy::unused_async
)]

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use reticent::{
    ArgumentError, Disclose, Disclosure, Failure, Secret, Tool, ToolContext, ToolError, Toolbox,
    failures::RetryHint,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// An order.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Order {
    /// Its id.
    pub id: String,
    /// Its lines.
    pub lines: Vec<Line>,
}

/// A line of an order.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Line {
    /// The product.
    pub sku: String,
    /// How many.
    pub quantity: u32,
}

/// How fast to ship.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub enum Speed {
    /// Days.
    Standard,
    /// Tomorrow.
    Express,
}

/// Why an order could not be found.
#[derive(Debug, thiserror::Error, Disclose)]
pub enum OrderError {
    /// The model's fault.
    #[error("no order {0}; order ids look like ORD-1042")]
    #[disclose(argument)]
    NotFound(String),
    /// Not the model's fault.
    #[error("database unavailable")]
    Database(#[from] std::io::Error),
    /// Renamed.
    #[error("rate limited")]
    #[disclose(kind = "RateLimited", transient)]
    Throttled,
    /// Retrying will not help.
    #[error("order archived")]
    #[disclose(permanent)]
    Archived,
    /// Ends the run.
    #[error("order store corrupt")]
    #[disclose(fatal)]
    Corrupt,
}

/// Every variant is transient and fatal.
#[derive(Debug, Clone, Copy, thiserror::Error, Disclose)]
#[disclose(transient, fatal)]
pub enum LedgerError {
    /// Locked.
    #[error("ledger locked")]
    Locked,
    /// Retrying will not help.
    #[error("ledger closed")]
    #[disclose(permanent)]
    Closed,
}

/// A generic error.
#[derive(Debug, thiserror::Error, Disclose)]
pub enum LookupError<E> {
    /// The model's fault.
    #[error("no record {0}")]
    #[disclose(argument)]
    NotFound(u32),
    /// Not the model's fault.
    #[error("backend failed")]
    Backend(#[source] E),
}

/// A struct error.
#[derive(Debug, Clone, Copy, thiserror::Error, Disclose)]
#[error("dates look like 2024-05-01")]
#[disclose(argument, permanent)]
pub struct BadDate;

/// A plain error.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("gateway returned {0}")]
pub struct GatewayError(pub u16);

/// Look up an order.
#[reticent::tool(read_only, idempotent, timeout = "5s")]
pub async fn lookup_order(
    /// The order id, like "ORD-1042".
    order_id: String,
    /// Include line items (default false).
    with_items: Option<bool>,
    cx: &ToolContext,
) -> Result<Order, OrderError> {
    if cx.cancellation().is_cancelled() {
        return Err(OrderError::Throttled);
    }
    if order_id == "db" {
        return Err(std::io::Error::other("down").into());
    }
    if !order_id.starts_with("ORD-") {
        return Err(OrderError::NotFound(order_id));
    }
    let lines = if with_items == Some(true) {
        vec![Line {
            sku: "A".to_owned(),
            quantity: 1,
        }]
    } else {
        Vec::new()
    };
    Ok(Order {
        id: order_id,
        lines,
    })
}

/// Ship.
#[reticent::tool(name = "ship-order", destructive, open_world)]
pub fn ship_order(
    lines: Vec<Line>,
    speed: Speed,
    labels: HashMap<String, String>,
    cx: ToolContext,
) -> Result<u32, ArgumentError> {
    drop(cx);
    drop(labels);
    let total = lines.into_iter().map(|l| l.quantity).sum::<u32>();
    match speed {
        Speed::Standard | Speed::Express if total > 0 => Ok(total),
        Speed::Standard | Speed::Express => Err(ArgumentError::new("an order needs lines")),
    }
}

/// Untrusted output.
#[reticent::tool(read_only, untrusted_output)]
pub fn read_inbox() -> String {
    String::new()
}

/// Open world, trusted output.
#[reticent::tool(open_world, untrusted_output = false)]
pub fn send_email(to: String) -> Result<String, LedgerError> {
    if to.is_empty() {
        return Err(LedgerError::Locked);
    }
    Ok(to)
}

/// No parameters, no output.
#[reticent::tool]
pub fn ping() {}

/// No parameters, unit output.
#[reticent::tool]
pub async fn ping_async() -> () {}

/// Raw identifiers.
#[reticent::tool]
pub fn r#match(r#type: String) -> String {
    r#type
}

/// A `ToolError`.
#[reticent::tool]
pub fn returns_tool_error(code: u8) -> Result<u8, ToolError> {
    if code == 0 {
        return Err(Failure::new("Zero", std::io::Error::other("zero")).into());
    }
    Ok(code)
}

/// A `Failure`.
#[reticent::tool]
pub fn returns_failure(code: u8) -> Result<u8, Failure> {
    Ok(code)
}

/// A boxed error.
#[reticent::tool]
pub fn boxed(code: u8) -> Result<u8, Box<dyn std::error::Error + Send + Sync>> {
    Ok(code)
}

/// An `io::Result`.
#[reticent::tool]
pub fn io(code: u8) -> std::io::Result<u8> {
    Ok(code)
}

/// A generic `Disclose` error.
#[reticent::tool]
pub fn generic_error(id: u32) -> Result<u32, LookupError<std::io::Error>> {
    Err(LookupError::NotFound(id))
}

/// A struct `Disclose` error.
#[reticent::tool]
pub fn struct_error(date: String) -> Result<String, BadDate> {
    if date.len() == 10 {
        Ok(date)
    } else {
        Err(BadDate)
    }
}

/// A plain error.
#[reticent::tool]
pub fn plain_error(status: u16) -> Result<u16, GatewayError> {
    Err(GatewayError(status))
}

/// A secret parameter.
#[reticent::tool]
pub fn login(password: Secret<String>) -> bool {
    password.expose() == "hunter2"
}

/// Crate-visible.
#[reticent::tool(description = "Crate-visible.")]
pub(crate) fn crate_visible() -> u8 {
    1
}

fn default_page_size() -> u32 {
    20
}

/// Parameters with `#[serde]` and `#[schemars]` attributes, a title, an approval and an output
/// schema.
#[reticent::tool(title = "Search orders", needs_approval)]
pub fn search_orders(
    /// What to look for.
    #[serde(rename = "q", alias = "query")]
    #[schemars(length(min = 1, max = 100))]
    text: String,
    /// Results per page.
    #[serde(default = "default_page_size")]
    #[schemars(range(min = 1, max = 50))]
    per_page: u32,
    #[serde(default)]
    #[schemars(description = "The page.", example = 0, extend("x-ui" = "pager"))]
    page: u32,
) -> Vec<Order> {
    drop((text, per_page, page));
    Vec::new()
}

/// No output schema.
#[reticent::tool(output_schema = false)]
pub fn unschematized() -> Order {
    Order {
        id: String::new(),
        lines: Vec::new(),
    }
}

/// A toolbox.
#[derive(Debug, Default)]
pub struct Shop {
    shipped: AtomicU64,
}

#[reticent::tools]
impl Shop {
    /// Ship.
    #[tool(destructive)]
    pub async fn ship(&self, order_id: String) -> Result<String, OrderError> {
        let _previous = self.shipped.fetch_add(1, Ordering::SeqCst);
        Ok(order_id)
    }

    /// Count.
    #[reticent::tool(read_only, name = "shipped-count")]
    pub fn shipped(&self) -> u64 {
        self.shipped.load(Ordering::SeqCst)
    }

    /// An associated function.
    #[tool]
    pub fn version() -> &'static str {
        "1"
    }

    /// With attributes.
    #[tool(title = "List shipped orders")]
    pub fn list(
        &self,
        #[serde(default = "Self::page_size", rename = "size")] page_size: u64,
    ) -> u64 {
        page_size.min(self.shipped())
    }

    fn page_size() -> u64 {
        10
    }

    /// Not a tool.
    pub fn helper(&self, cx: &ToolContext) -> String {
        format!("{}:{}", cx.call_id(), self.shipped())
    }
}

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(future)
}

#[test]
fn tools_work_under_strict_lints() {
    let out = block_on(LookupOrder.call(
        json!({"order_id": "ORD-1", "with_items": true}),
        ToolContext::default(),
    ));
    assert_eq!(
        out.expect("the call succeeds"),
        json!({"id": "ORD-1", "lines": [{"sku": "A", "quantity": 1}]})
    );
    let err = block_on(LookupOrder.call(json!({"order_id": "db"}), ToolContext::default()))
        .expect_err("the call fails");
    assert_eq!(err.kind(), "OrderError::Database");
    assert_eq!(ShipOrder.definition().name, "ship-order");
    assert_eq!(Match.definition().parameters["required"], json!(["type"]));
    assert_eq!(CrateVisible.definition().description, "Crate-visible.");
    assert_eq!(BadDate.disclosure(), Disclosure::Argument);
    assert_eq!(BadDate.retry_hint(), Some(RetryHint::Permanent));
    assert_eq!(
        OrderError::Throttled.retry_hint(),
        Some(RetryHint::Transient)
    );
    assert!(OrderError::Corrupt.is_fatal());
    assert!(!OrderError::Archived.is_fatal());
    assert!(LedgerError::Closed.is_fatal());
    assert_eq!(LedgerError::Closed.retry_hint(), Some(RetryHint::Permanent));
    assert!(SearchOrders.needs_approval());
    assert_eq!(
        SearchOrders.definition().parameters["properties"]["per_page"]["maximum"],
        50
    );
    assert!(SearchOrders.definition().output_schema.is_some());
    assert!(Unschematized.definition().output_schema.is_none());
    assert!(ReadInbox.untrusted_output());
    assert!(!SendEmail.untrusted_output());
    let err = block_on(SendEmail.call(json!({"to": ""}), ToolContext::default()))
        .expect_err("the call fails");
    assert!(err.is_fatal());

    let tools = Arc::new(Shop::default()).tools();
    let names: Vec<&str> = tools.iter().map(|t| t.definition().name.as_str()).collect();
    assert_eq!(names, ["ship", "shipped-count", "version", "list"]);
    let out = block_on(tools[2].call(json!({}), ToolContext::default()));
    assert_eq!(out.expect("the call succeeds"), json!("1"));
}
