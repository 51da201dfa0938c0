//! The Restate service the `restate` tests start, kill and start again: a refund desk whose
//! agent runs as the durable workflow `Desk`, on a scripted model. Every model call and every
//! tool call it makes is appended to a file in the state folder, outside the process, so that a
//! test counts what happened across restarts.
//!
//! ```text
//! restate_desk --port PORT --dir STATE_DIR
//! ```
//!
//! The model answers by the conversation's turn (it has no memory of its own, so a restarted
//! process answers the same): for a request that mentions `crash`, a refund and a failing
//! charge, then a lookup and a transfer, then an answer; for any other, a refund large enough
//! to need approval, then an answer. A transfer does not finish while the file
//! `STATE_DIR/hold-transfer` exists; it writes down its idempotency key when it starts.

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use restate_sdk::prelude::*;
use reticent::restate::{Awaiting, Journal, Outcome, awaiting, decide};
use reticent::{
    Agent, Decisions, Message, Model, ModelError, ModelRequest, ModelResponse, ToolCall,
    ToolContext,
};
use reticent_tests::restate_desk::{CANARY, HOLD_TRANSFER};
use reticent_tests::service::{self, append};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
#[error("gateway refused: {0}")]
struct GatewayError(String);

/// The desk's tools, counting what they do in files.
struct Desk {
    dir: PathBuf,
}

#[reticent::tools]
impl Desk {
    /// Look up an order.
    #[tool(read_only)]
    async fn lookup_order(&self, order_id: String) -> String {
        append(&self.dir, "lookups.log", &order_id);
        format!("{order_id}: 129.00, delivered")
    }

    /// Refund part of an order.
    #[tool(destructive)]
    async fn issue_refund(&self, order_id: String, amount_cents: u64) -> String {
        append(
            &self.dir,
            "refunds.log",
            &format!("{order_id} {amount_cents}"),
        );
        format!("refunded {amount_cents} on {order_id}")
    }

    /// Charge the card on file; the gateway is down, and its error holds a secret.
    #[tool]
    async fn charge_card(&self, order_id: String) -> Result<String, GatewayError> {
        append(&self.dir, "charges.log", &order_id);
        Err(GatewayError(format!("{order_id} via {CANARY}")))
    }

    /// Move money to the supplier.
    #[tool(destructive)]
    async fn transfer_funds(&self, amount_cents: u64, cx: &ToolContext) -> String {
        append(
            &self.dir,
            "transfers.log",
            &format!("started {amount_cents}"),
        );
        // The key a bank would be sent as `Idempotency-Key`.
        append(&self.dir, "transfer-keys.log", cx.idempotency_key());
        while self.dir.join(HOLD_TRANSFER).exists() {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        append(&self.dir, "transfers.log", &format!("done {amount_cents}"));
        format!("moved {amount_cents}")
    }
}

/// A model that answers by the turn of the conversation, and writes down each call.
struct ByTurn {
    dir: PathBuf,
}

impl Model for ByTurn {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let turn = 1 + request
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count();
        let crash = matches!(
            request.messages.first(),
            Some(Message::User { text }) if text.contains("crash")
        );
        append(&self.dir, "model.log", &format!("turn {turn}"));
        let response = match (crash, turn) {
            (true, 1) => ModelResponse::tool_calls(vec![
                ToolCall::new(
                    "call_1",
                    "issue_refund",
                    json!({"order_id": "ORD-7", "amount_cents": 4_500}),
                ),
                ToolCall::new("call_2", "charge_card", json!({"order_id": "ORD-7"})),
            ]),
            (true, 2) => ModelResponse::tool_calls(vec![
                ToolCall::new("call_3", "lookup_order", json!({"order_id": "ORD-7"})),
                ToolCall::new("call_4", "transfer_funds", json!({"amount_cents": 700})),
            ]),
            (false, 1) => ModelResponse::tool_calls(vec![
                ToolCall::new("call_1", "lookup_order", json!({"order_id": "ORD-7"})),
                ToolCall::new(
                    "call_2",
                    "issue_refund",
                    json!({"order_id": "ORD-7", "amount_cents": 50_000}),
                ),
            ]),
            _ => ModelResponse::text(format!("Done after {turn} turns.")),
        };
        Box::pin(std::future::ready(Ok(response)))
    }
}

/// The durable workflow, named as `reticent_tests::restate_desk::WORKFLOW` says (the macro
/// takes a literal).
struct DeskWorkflow {
    agent: Agent,
}

#[restate_sdk::workflow(name = "Desk")]
impl DeskWorkflow {
    #[handler]
    async fn run(&self, ctx: WorkflowContext<'_>, request: String) -> HandlerResult<Json<Outcome>> {
        let result = Journal::new(&ctx).run(&self.agent, request).await?;
        Ok(Json(Outcome::from(&result)))
    }

    #[handler]
    async fn pending(
        &self,
        ctx: SharedWorkflowContext<'_>,
    ) -> HandlerResult<Json<Option<Awaiting>>> {
        Ok(Json(awaiting(&ctx).await?))
    }

    #[handler]
    async fn approve(
        &self,
        ctx: SharedWorkflowContext<'_>,
        decisions: Json<Decisions>,
    ) -> HandlerResult<()> {
        decide(&ctx, decisions.into_inner()).await
    }
}

fn arg(args: &[String], name: &str) -> String {
    service::arg(args, name, "restate_desk --port PORT --dir STATE_DIR")
}

#[tokio::main]
async fn main() {
    if let Ok(filter) = std::env::var("RESTATE_DESK_LOG") {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .init();
    }
    let args: Vec<String> = std::env::args().collect();
    let port: u16 = arg(&args, "--port")
        .parse()
        .expect("--port is a port number");
    let dir = PathBuf::from(arg(&args, "--dir"));
    let agent = Agent::builder(ByTurn { dir: dir.clone() })
        .toolbox(Arc::new(Desk { dir }))
        .require_approval_if("issue_refund", |args| {
            args["amount_cents"].as_u64() > Some(10_000)
        })
        .build()
        .expect("the desk's agent is valid");
    HttpServer::new(Endpoint::builder().bind(DeskWorkflow { agent }).build())
        .listen_and_serve(([127, 0, 0, 1], port).into())
        .await;
}
