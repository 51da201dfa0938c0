//! Durable runs on [Restate](https://restate.dev) (feature `restate`): an agent runs as a
//! Restate workflow, each model call and each tool call a journaled step, so a run survives
//! crashes and restarts of the process, and an approval is a durable promise that a person
//! resolves through Restate's ingress, hours later if need be.
//!
//! ```no_run
//! use reticent::restate::{Journal, Outcome, awaiting, decide, Awaiting};
//! use reticent::{Agent, Decisions};
//! use restate_sdk::prelude::*;
//!
//! /// Refund part of an order.
//! #[reticent::tool(destructive)]
//! fn issue_refund(order_id: String, amount_cents: u64) -> String {
//!     format!("refunded {amount_cents} on {order_id}")
//! }
//!
//! struct RefundDesk {
//!     agent: Agent,
//! }
//!
//! #[restate_sdk::workflow]
//! impl RefundDesk {
//!     /// Runs the agent on the customer's request, durably.
//!     #[handler]
//!     async fn run(&self, ctx: WorkflowContext<'_>, request: String) -> HandlerResult<Json<Outcome>> {
//!         let result = Journal::new(&ctx).run(&self.agent, request).await?;
//!         Ok(Json(Outcome::from(&result)))
//!     }
//!
//!     /// What the run waits for.
//!     #[handler]
//!     async fn pending(&self, ctx: SharedWorkflowContext<'_>) -> HandlerResult<Json<Option<Awaiting>>> {
//!         Ok(Json(awaiting(&ctx).await?))
//!     }
//!
//!     /// A person's decisions, each naming its call by the pending call's digest, e.g.
//!     /// `{"call_3": {"approve": "9f2c…"}}`.
//!     #[handler]
//!     async fn approve(&self, ctx: SharedWorkflowContext<'_>, decisions: Json<Decisions>) -> HandlerResult<()> {
//!         decide(&ctx, decisions.into_inner()).await
//!     }
//! }
//!
//! # fn model() -> reticent::ScriptedModel { reticent::ScriptedModel::new(vec![]) }
//! let agent = Agent::builder(model())
//!     .tool(IssueRefund)
//!     .require_approval("issue_refund")
//!     .build()?;
//! let endpoint = Endpoint::builder().bind(RefundDesk { agent }).build();
//! // Serve `endpoint` with restate-sdk's `HttpServer`, and register it with the server.
//! # let _ = endpoint;
//! # Ok::<(), reticent::BuildError>(())
//! ```
//!
//! - [`Journal`] is the [`StepExecutor`](crate::agent::StepExecutor) that makes each step a
//!   journaled `ctx.run`; [`Journal::run`] drives a run in a workflow's `run` handler and waits
//!   on a durable promise whenever it stops for approval.
//! - [`awaiting`] and [`decide`] serve the shared handlers a person calls through the ingress.
//! - [`Outcome`] is a run's result as the workflow returns it: what the model saw and what the
//!   run did, never a withheld error message.
//!
//! - `reticent::mcp::TaskWorkflow` (with `mcp-client`): the workflow that runs an
//!   `McpServer`'s `#[tool(task)]` calls durably (`docs/mcp.md`).
//!
//! `docs/durable.md` says when to resume in process and when to run on Restate, and what each
//! guarantees.

mod journal;
mod workflow;

pub use journal::Journal;
pub use workflow::{Awaiting, FailureShown, Outcome, awaiting, decide};

/// The Restate SDK this module is built on.
pub use restate_sdk;
