//! A shop whose tools count what they did, for the approval, resume and step-executor tests:
//! a lookup, a refund, a shipment, a charge whose error carries a secret, and a transfer that
//! takes as long as the test wants; and `wire`, a tool that needs approval and whose argument
//! has a constraint.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use reticent::{
    Message, ModelResponse, Tool, ToolCall, ToolContext, ToolDefinition,
    agent::{Effect, PendingCall},
    failures::EffectOutcome,
    tool::ToolFuture,
};
use serde_json::json;
use tokio::sync::Notify;

/// The secret the gateway's error carries; it must never reach what the model sees, nor a
/// saved state, a checkpoint or a journal.
pub const CANARY: &str = "CANARY-7f3a9c-postgres://pay:s3cr3t@10.0.0.9/ledger";

/// The error of the gateway `charge_card` calls: its message holds [`CANARY`].
#[derive(Debug, thiserror::Error)]
#[error("gateway refused: {0}")]
pub struct GatewayError(String);

/// A shop that counts what its tools got to do.
#[derive(Debug, Default)]
pub struct Shop {
    /// Calls of `lookup_order`.
    pub lookups: AtomicUsize,
    /// Calls of `issue_refund`.
    pub refunds: AtomicUsize,
    /// Calls of `ship_order`.
    pub shipments: AtomicUsize,
    /// Calls of `charge_card`.
    pub charges: AtomicUsize,
    /// Calls of `transfer_funds` that started.
    pub transfers_started: AtomicUsize,
    /// Calls of `transfer_funds` that finished.
    pub transfers_done: AtomicUsize,
    /// Notified when a transfer starts.
    pub transfer_started: Notify,
    /// A transfer waits for this before it finishes.
    pub release_transfer: Notify,
}

impl Shop {
    /// A shop that has done nothing yet.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// What `counter` says now.
    pub fn count(counter: &AtomicUsize) -> usize {
        counter.load(Ordering::SeqCst)
    }
}

#[reticent::tools]
impl Shop {
    /// Look up an order.
    #[tool(read_only)]
    async fn lookup_order(&self, order_id: String) -> String {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        format!("{order_id}: 129.00, delivered")
    }

    /// Refund part of an order.
    #[tool(destructive)]
    async fn issue_refund(&self, order_id: String, amount_cents: u64) -> String {
        self.refunds.fetch_add(1, Ordering::SeqCst);
        format!("refunded {amount_cents} on {order_id}")
    }

    /// Ship an order.
    #[tool]
    async fn ship_order(&self, order_id: String) -> String {
        self.shipments.fetch_add(1, Ordering::SeqCst);
        format!("shipped {order_id}")
    }

    /// Charge the card on file; the gateway is down, and its error holds a secret.
    #[tool]
    async fn charge_card(&self, order_id: String) -> Result<String, GatewayError> {
        self.charges.fetch_add(1, Ordering::SeqCst);
        Err(GatewayError(format!("{order_id} via {CANARY}")))
    }

    /// Move money; waits until the test releases it.
    #[tool(destructive)]
    async fn transfer_funds(&self, amount_cents: u64) -> String {
        self.transfers_started.fetch_add(1, Ordering::SeqCst);
        self.transfer_started.notify_one();
        self.release_transfer.notified().await;
        self.transfers_done.fetch_add(1, Ordering::SeqCst);
        format!("moved {amount_cents}")
    }
}

/// A tool that says of itself that it needs approval, as `#[tool(needs_approval)]` does:
/// `issue_refund` of a shop, under the name `approved_refund`.
#[allow(missing_debug_implementations)] // holds a `dyn Tool`
pub struct NeedsApproval {
    definition: ToolDefinition,
    inner: Arc<dyn Tool>,
}

impl NeedsApproval {
    /// The `issue_refund` of `shop`, renamed.
    pub fn new(shop: &Arc<Shop>) -> Self {
        let inner = reticent::Toolbox::tools(Arc::clone(shop))
            .into_iter()
            .find(|tool| tool.definition().name == "issue_refund")
            .expect("the shop has issue_refund");
        let mut definition = inner.definition().clone();
        definition.name = "approved_refund".into();
        Self { definition, inner }
    }
}

impl Tool for NeedsApproval {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, args: serde_json::Value, cx: ToolContext) -> ToolFuture<'_> {
        self.inner.call(args, cx)
    }

    fn needs_approval(&self) -> bool {
        true
    }
}

/// The ledger as (tool, call id, outcome).
pub fn ledger(effects: &[Effect]) -> Vec<(&str, &str, EffectOutcome)> {
    effects
        .iter()
        .map(|e| (e.tool.as_str(), e.call_id.as_str(), e.outcome))
        .collect()
}

/// The call `call_id` among the calls `pending` lists, to decide on.
pub fn waiting<'a>(pending: &'a [PendingCall], call_id: &str) -> &'a PendingCall {
    pending
        .iter()
        .find(|call| call.call_id == call_id)
        .unwrap_or_else(|| panic!("`{call_id}` is not pending: {pending:?}"))
}

/// The tool results of a transcript as (call id, content, is_error).
pub fn results(messages: &[Message]) -> Vec<(&str, &str, bool)> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some((r.call_id.as_str(), r.content.as_str(), r.is_error)),
            _ => None,
        })
        .collect()
}

// ---- the calls a model makes of the shop ------------------------------------------------------

/// A call of `issue_refund` on ORD-7.
pub fn refund(id: &str, amount_cents: u64) -> ToolCall {
    ToolCall::new(
        id,
        "issue_refund",
        json!({"order_id": "ORD-7", "amount_cents": amount_cents}),
    )
}

/// A call of `lookup_order` for ORD-7.
pub fn lookup(id: &str) -> ToolCall {
    ToolCall::new(id, "lookup_order", json!({"order_id": "ORD-7"}))
}

/// A call of `ship_order` for ORD-7.
pub fn ship(id: &str) -> ToolCall {
    ToolCall::new(id, "ship_order", json!({"order_id": "ORD-7"}))
}

/// A call of `charge_card` for ORD-7.
pub fn charge(id: &str) -> ToolCall {
    ToolCall::new(id, "charge_card", json!({"order_id": "ORD-7"}))
}

/// A call of `transfer_funds` of 700 cents.
pub fn transfer(id: &str) -> ToolCall {
    ToolCall::new(id, "transfer_funds", json!({"amount_cents": 700}))
}

/// A response that makes `calls`.
pub fn calls(calls: impl IntoIterator<Item = ToolCall>) -> ModelResponse {
    ModelResponse::tool_calls(calls.into_iter().collect())
}

/// Send money: a tool that needs a person's approval, whose argument has a constraint, so the
/// agent and the MCP server check it before each call (a wrapper that must not hide that the
/// tool needs approval).
#[reticent::tool(needs_approval)]
pub fn wire(
    /// How much, in cents.
    #[schemars(range(min = 1, max = 100_000))]
    amount_cents: u32,
) -> String {
    format!("sent {amount_cents}")
}
