//! A tool's reconcile hook (`#[tool(reconcile = path)]`): what it is asked ([`Reconcile`]),
//! what it answers ([`Reconciled`]), and the function pointer a [`ToolDefinition`] carries.
//! The loop asks it in `agent/reconcile.rs`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ToolContext, ToolDefinition};

/// A call whose effect is unknown — cut off mid-flight, by a cancellation or a crash — that is
/// about to run again: what a tool's reconcile hook is asked about.
///
/// Its [`context`](Self::context) is the call's, with the call's id, its tool's name and its
/// [idempotency key](ToolContext::idempotency_key) — the key the first run sent, which is
/// what an API that makes calls idempotent can be asked about.
#[derive(Debug)]
pub struct Reconcile {
    context: ToolContext,
    arguments: Value,
}

impl Reconcile {
    /// The call `context` made with `arguments`.
    pub fn new(context: ToolContext, arguments: Value) -> Self {
        Self { context, arguments }
    }

    /// The call's context: its id, its tool's name, its idempotency key, and a cancellation
    /// token cancelled when the hook's time is up or the run is cancelled.
    pub fn context(&self) -> &ToolContext {
        &self.context
    }

    /// The call's idempotency key (the same as the context's).
    pub fn idempotency_key(&self) -> &str {
        self.context.idempotency_key()
    }

    /// The arguments the model sent, as JSON.
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }
}

/// What a reconcile hook found out about a call whose effect was unknown.
///
/// The run records the answer on the call's [`Effect`](crate::agent::Effect) in the ledger.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reconciled {
    /// The call took effect, with this output: it does not run again, and the model is shown
    /// the output as if the tool had returned it.
    Applied(Value),
    /// The call did not take effect: it runs again.
    NotApplied,
    /// The hook cannot tell: the call is left to its caller, as without a hook — it runs
    /// again only if the caller approved that, and otherwise the run stops with it pending.
    Unknown,
}

/// The future a reconcile hook returns, boxed.
pub type ReconcileFuture = Pin<Box<dyn Future<Output = Reconciled> + Send>>;

/// A reconcile hook as a [`ToolDefinition`] carries it (`#[tool(reconcile = path)]` writes it
/// for an `async fn(Reconcile) -> Reconciled`).
pub type ReconcileFn = fn(Reconcile) -> ReconcileFuture;

/// A definition's hook, compared by address.
#[derive(Clone, Copy)]
pub(crate) struct Hook(pub(crate) ReconcileFn);

impl PartialEq for Hook {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::fn_addr_eq(self.0, other.0)
    }
}

impl fmt::Debug for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ReconcileFn(..)")
    }
}

/// The reconcile hook of a definition.
impl ToolDefinition {
    /// The same definition with `hook` as its reconcile hook: asked, before a call whose
    /// effect is unknown runs again, whether it took effect (see [`Reconciled`]).
    ///
    /// `#[tool(reconcile = path)]` sets it for an `async fn(Reconcile) -> Reconciled`:
    ///
    /// ```
    /// use reticent::tool::{Reconcile, Reconciled};
    ///
    /// /// Charge the customer's card.
    /// #[reticent::tool(reconcile = charge_landed)]
    /// async fn charge_card(order_id: String, cx: &reticent::ToolContext) -> String {
    ///     let key = cx.idempotency_key();
    ///     // POST /charges with the header `Idempotency-Key: {key}` ...
    ///     format!("charged {order_id} ({key})")
    /// }
    ///
    /// /// Asks the gateway whether a charge with the call's key went through.
    /// async fn charge_landed(call: Reconcile) -> Reconciled {
    ///     let key = call.idempotency_key();
    ///     // GET /charges?idempotency_key={key} ...
    ///     # let found = Some("ch_1").filter(|_| !key.is_empty());
    ///     match found {
    ///         Some(charge) => Reconciled::Applied(format!("charged ({charge})").into()),
    ///         None => Reconciled::NotApplied,
    ///     }
    /// }
    ///
    /// use reticent::Tool;
    /// assert!(ChargeCard.definition().reconcile().is_some());
    /// ```
    #[must_use]
    pub fn with_reconcile(mut self, hook: ReconcileFn) -> Self {
        self.reconcile = Some(Hook(hook));
        self
    }

    /// The tool's reconcile hook, if it has one.
    pub fn reconcile(&self) -> Option<ReconcileFn> {
        self.reconcile.map(|hook| hook.0)
    }
}
