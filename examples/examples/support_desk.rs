//! A customer-support agent whose tools fail in every way a real one does, and what each
//! failure tells the model versus the caller.
//!
//! ```text
//! cargo run --example support_desk
//! ```
//!
//! Offline by default, on a scripted model. Set `RETICENT_MODEL` (e.g. `openai:gpt-4o-mini`
//! or `anthropic:claude-sonnet-4-5`) and the provider's API key to run the same agent against
//! a real model.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reticent::{
    Agent, AgentResult, Disclose, Message, Model, ModelResponse, ScriptedModel, ToolCall,
    ToolFailureOptions, Usage,
};
use serde::Serialize;
use serde_json::json;

// ---- the domain ---------------------------------------------------------------------------

/// An order as the support desk sees it.
#[derive(Clone, Debug, Serialize)]
pub struct Order {
    id: String,
    customer: String,
    total_cents: u64,
    status: &'static str,
}

/// What can go wrong with orders.
#[derive(Debug, thiserror::Error, Disclose)]
pub enum OrderError {
    /// The model's fault: it may see this message and correct the call.
    #[error("no order {0:?}; order ids look like ORD-1042")]
    #[disclose(argument)]
    NotFound(String),
    /// Not the model's fault: it sees `OrderError::Database` only.
    #[error("orders database unavailable at {0}")]
    Database(String),
}

/// The payment gateway's error. Its message holds a connection string with a password.
#[derive(Debug, thiserror::Error)]
#[error("gateway refused connection: {dsn} (code {code})")]
pub struct GatewayError {
    dsn: String,
    code: u16,
}

/// The connection string the gateway error carries; it must never reach the model.
pub const GATEWAY_DSN: &str = "postgres://payments:hunter2@10.0.3.7:5432/ledger";

/// A shipment created for an order.
#[derive(Debug, Serialize)]
pub struct Shipment {
    order_id: String,
    carrier: &'static str,
    tracking: String,
}

/// A support ticket.
#[derive(Debug, Serialize)]
pub struct Ticket {
    id: String,
    order_id: String,
    summary: String,
}

/// The support desk: orders, a payment gateway that is down, and a slow carrier API.
pub struct SupportDesk {
    orders: Mutex<HashMap<String, Order>>,
    tickets: Mutex<Vec<String>>,
    carrier_latency: Duration,
}

impl SupportDesk {
    /// A desk with two orders.
    pub fn new() -> Self {
        let orders = [
            ("ORD-1042", "Ada Lovelace", 12_900),
            ("ORD-2001", "Alan Turing", 4_500),
        ]
        .into_iter()
        .map(|(id, customer, total_cents)| {
            let order = Order {
                id: id.into(),
                customer: customer.into(),
                total_cents,
                status: "awaiting payment",
            };
            (id.to_owned(), order)
        })
        .collect();
        Self {
            orders: Mutex::new(orders),
            tickets: Mutex::new(Vec::new()),
            carrier_latency: Duration::from_secs(30),
        }
    }
}

impl Default for SupportDesk {
    fn default() -> Self {
        Self::new()
    }
}

#[reticent::tools]
impl SupportDesk {
    /// Look up an order by its id.
    #[tool(read_only)]
    async fn lookup_order(
        &self,
        /// The order id, like "ORD-1042".
        order_id: String,
    ) -> Result<Order, OrderError> {
        let orders = self.orders.lock().expect("orders lock");
        orders
            .get(&order_id)
            .cloned()
            .ok_or(OrderError::NotFound(order_id))
    }

    /// Charge the customer's card on file for an order's total.
    #[tool(destructive, open_world)]
    async fn charge_card(
        &self,
        /// The order to charge for.
        order_id: String,
    ) -> Result<String, GatewayError> {
        let _ = order_id;
        // The gateway is down today.
        Err(GatewayError {
            dsn: GATEWAY_DSN.into(),
            code: 503,
        })
    }

    /// Ship a paid order. Requires a successful `charge_card` first.
    #[tool(destructive)]
    async fn ship_order(
        &self,
        /// The order to ship.
        order_id: String,
    ) -> Result<Shipment, OrderError> {
        Ok(Shipment {
            tracking: format!("1Z{}", order_id.replace('-', "")),
            order_id,
            carrier: "UPS",
        })
    }

    /// Ask the carrier for a delivery estimate. The carrier's API can be slow.
    #[tool(read_only, open_world, timeout = "1s")]
    async fn estimate_delivery(
        &self,
        /// The order id.
        order_id: String,
        /// The destination postcode.
        postcode: String,
    ) -> Result<String, std::io::Error> {
        tokio::time::sleep(self.carrier_latency).await;
        Ok(format!("{order_id} to {postcode}: 2 business days"))
    }

    /// Open a ticket so a human follows up on an order.
    #[tool(idempotent)]
    fn open_ticket(
        &self,
        /// The order the ticket is about.
        order_id: String,
        /// One sentence for the human who picks it up.
        summary: String,
    ) -> Ticket {
        let mut tickets = self.tickets.lock().expect("tickets lock");
        tickets.push(order_id.clone());
        Ticket {
            id: format!("TCK-{}", 500 + tickets.len()),
            order_id,
            summary,
        }
    }
}

// ---- the run ------------------------------------------------------------------------------

/// The scripted conversation: a recovery from an argument error, a refused prerequisite, a
/// type-name-only failure, a timeout, then a final answer.
pub fn script() -> Vec<ModelResponse> {
    // Token counts as a real model would report them.
    let call = |id: &str, name: &str, args| {
        ModelResponse::tool_call(id, name, args).with_usage(Usage::new(412, 38))
    };
    vec![
        call("call_1", "lookup_order", json!({"order_id": "1042"})),
        call("call_2", "lookup_order", json!({"order_id": "ORD-1042"})),
        call("call_3", "ship_order", json!({"order_id": "ORD-1042"})),
        call("call_4", "charge_card", json!({"order_id": "ORD-1042"})),
        ModelResponse::tool_calls(vec![
            ToolCall::new(
                "call_5",
                "open_ticket",
                json!({"order_id": "ORD-1042", "summary": "Card charge failed at the gateway; retry payment."}),
            ),
            ToolCall::new(
                "call_6",
                "estimate_delivery",
                json!({"order_id": "ORD-1042", "postcode": "SW1A 1AA"}),
            ),
        ])
        .with_usage(Usage::new(690, 71)),
        ModelResponse::text(
            "I found order ORD-1042, but I couldn't ship it: charging your card failed on the \
             payment provider's side, so nothing was charged by me. I've opened ticket TCK-501 \
             so a colleague retries the payment, and the carrier didn't answer in time for a \
             delivery estimate. You'll hear from us once the payment goes through.",
        )
        .with_usage(Usage::new(1210, 96)),
    ]
}

/// Builds the support agent around `model`.
pub fn agent(model: impl Model, desk: Arc<SupportDesk>) -> Agent {
    Agent::builder(model)
        .system(
            "You are a support agent for an online shop. Use the tools to help the customer. \
             Never ship an order before its card was charged.",
        )
        .toolbox(desk)
        .require("ship_order", "charge_card")
        .failure_options(ToolFailureOptions {
            timeout: Some(Duration::from_secs(10)),
            ..Default::default()
        })
        .build()
        .expect("the support agent's configuration is valid")
}

/// The user's request.
pub const USER_REQUEST: &str =
    "Hi, please charge my card and ship order 1042. When will it arrive? Postcode SW1A 1AA.";

/// The model side: the conversation exactly as the model saw it.
pub fn model_side(result: &AgentResult) -> String {
    let mut out = String::new();
    for message in &result.messages {
        match message {
            Message::User { text } => writeln!(out, "  user      │ {text}"),
            Message::Assistant { text, tool_calls } => {
                if let Some(text) = text {
                    let _ = writeln!(out, "  assistant │ {text}");
                }
                for call in tool_calls {
                    let _ = writeln!(
                        out,
                        "  assistant │ calls {}({}) [{}]",
                        call.name, call.arguments, call.id
                    );
                }
                Ok(())
            }
            Message::Tool(result) => {
                let mark = if result.is_error { "error" } else { "ok" };
                writeln!(
                    out,
                    "  tool      │ [{}] {mark}: {}",
                    result.call_id, result.content
                )
            }
        }
        .expect("writing to a String");
    }
    out
}

/// The caller side: every failure with its full error.
pub fn caller_side(result: &AgentResult) -> String {
    let mut out = String::new();
    for failure in &result.tool_failures {
        let _ = writeln!(
            out,
            "  [{}] {} — kind {}{}, after {:?}",
            failure.call_id,
            failure.tool,
            failure.kind,
            if failure.timed_out {
                " (timed out)"
            } else {
                ""
            },
            failure.elapsed
        );
        let _ = writeln!(out, "      model was shown: {}", failure.shown_to_model);
        let _ = writeln!(out, "      full error:      {}", failure.error_chain());
    }
    out
}

fn rule(title: &str) -> String {
    format!(
        "── {title} {}",
        "─".repeat(78usize.saturating_sub(title.len() + 4))
    )
}

/// The whole report the example prints.
pub fn report(result: &AgentResult) -> String {
    format!(
        "{}\n{}\n{}\n{}\n{}\n  stop reason: {:?}, turns: {}, tokens in/out: {}/{}\n\n  answer: {}\n",
        rule("What the model saw"),
        model_side(result),
        rule("What the caller got: every failure, with its full error"),
        caller_side(result),
        rule("Summary"),
        result.stop_reason,
        result.turns,
        result.usage.input_tokens,
        result.usage.output_tokens,
        result.output,
    )
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let desk = Arc::new(SupportDesk::new());
    let result = match reticent_examples::model_from_env()? {
        Some(model) => {
            println!(
                "Running against {}.\n",
                reticent_examples::model_spec().unwrap_or_default()
            );
            agent(model, desk).run(USER_REQUEST).await?
        }
        None => {
            println!(
                "Running offline on a scripted model (set RETICENT_MODEL to use a real one).\n"
            );
            agent(ScriptedModel::new(script()), desk)
                .run(USER_REQUEST)
                .await?
        }
    };
    print!("{}", report(&result));
    Ok(())
}
