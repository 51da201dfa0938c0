//! The support desk's refund flow, where a refund over 100.00 needs a person's approval.
//!
//! ```text
//! cargo run --example refund_approval              # in process: stop, save, approve, resume
//! cargo run --example refund_approval -- --reject  # the same, the refund rejected
//! cargo run --example refund_approval -- --restate 127.0.0.1:9080
//! ```
//!
//! In process, the run stops before the refund with `StopReason::AwaitingApproval`; its state
//! is saved as JSON, as a service would store it; a second agent — another process, hours
//! later — reads it back and resumes with the person's decision.
//!
//! With `--restate ADDRESS` the same agent is served as the durable Restate workflow
//! `RefundDesk` (handlers `run`, `pending`, `approve`): every model call and tool call is a
//! journaled step, and the approval is a durable promise a person resolves through Restate's
//! ingress. docs/durable.md has the commands: start the server, register, start a run, approve
//! with curl.
//!
//! Offline by default, on a model scripted by the turn of the conversation (so a replayed or
//! resumed run gets the same answers). Set `RETICENT_MODEL` to use a real one (see the README).

use std::fmt::Write as _;
use std::sync::Arc;

use futures::future::BoxFuture;
use restate_sdk::prelude::*;
use reticent::restate::{Awaiting, Journal, Outcome, awaiting, decide};
use reticent::{
    Agent, AgentResult, Decisions, Message, Model, ModelError, ModelRequest, ModelResponse,
    RunState, StopReason, ToolCall, failures::EffectOutcome,
};
use reticent_examples::support_desk::SupportDesk;
use serde_json::json;

/// The customer's request.
pub const REQUEST: &str = "Order ORD-1042 arrived broken. Please refund it in full.";

/// Refunds over this many cents need a person's approval.
pub const APPROVAL_OVER_CENTS: u64 = 10_000;

/// The scripted model's answer to `request`, by the turn of the conversation: look the order
/// up and refund it, then tell the customer what happened to the refund. The same answers
/// whether the run is fresh, resumed, or replayed after a crash.
pub fn answer(request: &ModelRequest) -> Option<ModelResponse> {
    let turn = request
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Assistant { .. }))
        .count();
    let refund = request.messages.iter().find_map(|m| match m {
        Message::Tool(r) if r.name == "issue_refund" => Some(r),
        _ => None,
    });
    match (turn, refund) {
        (0, _) => Some(
            ModelResponse::tool_calls(vec![
                ToolCall::new("call_1", "lookup_order", json!({"order_id": "ORD-1042"})),
                ToolCall::new(
                    "call_2",
                    "issue_refund",
                    json!({"order_id": "ORD-1042", "amount_cents": 12_900}),
                ),
            ])
            .with_text("I'll look the order up and refund it in full."),
        ),
        (1, Some(refund)) if !refund.is_error => Some(ModelResponse::text(
            "Your refund of 129.00 for ORD-1042 is on its way to your card.",
        )),
        (1, Some(_)) => Some(ModelResponse::text(
            "I couldn't issue the refund for ORD-1042 myself; a colleague will review it and \
             get back to you.",
        )),
        _ => None,
    }
}

/// The offline model: [`answer`], turn by turn.
pub struct Scripted;

impl Model for Scripted {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let answer = answer(request)
            .ok_or_else(|| ModelError::new("the script has no answer for this conversation"));
        Box::pin(std::future::ready(answer))
    }
}

/// The refund agent: the support desk's tools, refunds over 100.00 approved by a person.
pub fn agent(model: impl Model, desk: Arc<SupportDesk>) -> Agent {
    Agent::builder(model)
        .system(
            "You are a support agent for an online shop. Look an order up before you refund \
             it, and refund no more than its total.",
        )
        .toolbox(desk)
        .require_approval_if("issue_refund", |args| {
            args["amount_cents"].as_u64() > Some(APPROVAL_OVER_CENTS)
        })
        .build()
        .expect("the refund agent's configuration is valid")
}

/// The offline model, or the one `RETICENT_MODEL` names.
fn model() -> Result<Arc<dyn Model>, reticent_examples::Report> {
    Ok(reticent_examples::model_from_env()?.unwrap_or_else(|| Arc::new(Scripted)))
}

/// The conversation as the model saw it, and the ledger.
pub fn report(result: &AgentResult) -> String {
    let mut out = reticent_examples::transcript(&result.messages);
    for effect in &result.effects {
        let outcome = match effect.outcome {
            EffectOutcome::Applied => "applied",
            EffectOutcome::Failed => "failed (not run)",
            EffectOutcome::Unknown => "UNKNOWN",
        };
        let _ = writeln!(
            out,
            "  ledger    │ [{}] {} — {outcome}",
            effect.call_id, effect.tool
        );
    }
    out
}

/// The in-process flow: run until the approval, save the state as JSON, and resume it with a
/// second agent and the person's decision. The paused result, the saved JSON and the final
/// result.
pub async fn in_process(
    model: Arc<dyn Model>,
    desk: Arc<SupportDesk>,
    approve: bool,
) -> Result<(AgentResult, String, AgentResult), reticent_examples::Report> {
    let paused = agent(Arc::clone(&model), Arc::clone(&desk))
        .run(REQUEST)
        .await?;
    let Some(state) = paused.state.clone() else {
        // The model asked for nothing that needs approval.
        return Ok((paused.clone(), String::new(), paused));
    };
    let saved = serde_json::to_string_pretty(&state)?;

    // Later, maybe in another process: the state read back, a person's decision.
    let state: RunState = serde_json::from_str(&saved)?;
    let decisions = state
        .pending()
        .into_iter()
        .fold(Decisions::new(), |decisions, call| {
            // Each decision carries the digest of the call the person saw: it applies to
            // that call only, whatever the stored state says by the time it is read back.
            if approve {
                decisions.approve(&call)
            } else {
                decisions.reject(&call)
            }
        });
    let done = agent(model, desk).resume(state, decisions).await?;
    Ok((paused, saved, done))
}

/// The refund desk as a durable Restate workflow.
pub struct RefundDesk {
    agent: Agent,
}

#[restate_sdk::workflow]
impl RefundDesk {
    /// Runs the agent on a customer's request, durably.
    #[handler]
    async fn run(&self, ctx: WorkflowContext<'_>, request: String) -> HandlerResult<Json<Outcome>> {
        let result = Journal::new(&ctx).run(&self.agent, request).await?;
        Ok(Json(Outcome::from(&result)))
    }

    /// What the run waits for: the calls that need a decision.
    #[handler]
    async fn pending(
        &self,
        ctx: SharedWorkflowContext<'_>,
    ) -> HandlerResult<Json<Option<Awaiting>>> {
        Ok(Json(awaiting(&ctx).await?))
    }

    /// A person's decisions, each naming its call by the digest `pending` gives it, e.g.
    /// `{"call_2": {"approve": "9f2c…"}}`.
    #[handler]
    async fn approve(
        &self,
        ctx: SharedWorkflowContext<'_>,
        decisions: Json<Decisions>,
    ) -> HandlerResult<()> {
        decide(&ctx, decisions.into_inner()).await
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), reticent_examples::Report> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let model = model()?;
    let desk = Arc::new(SupportDesk::new());

    if let Some(i) = args.iter().position(|a| a == "--restate") {
        let address = args
            .get(i + 1)
            .ok_or("--restate takes an address, like 127.0.0.1:9080")?
            .parse()
            .map_err(|e| format!("--restate takes an address, like 127.0.0.1:9080: {e}"))?;
        eprintln!(
            "Serving the workflow RefundDesk at http://{address}; register it with the Restate \
             server (docs/durable.md)."
        );
        let agent = agent(model, desk);
        HttpServer::new(Endpoint::builder().bind(RefundDesk { agent }).build())
            .listen_and_serve(address)
            .await;
        return Ok(());
    }

    let approve = !args.iter().any(|a| a == "--reject");
    let (paused, saved, done) = in_process(model, Arc::clone(&desk), approve).await?;
    println!("━━ The run stops before the refund ━━ {REQUEST}\n");
    print!("{}", report(&paused));
    println!("\n  stop reason: {:?}", paused.stop_reason);
    for call in &paused.pending {
        println!(
            "  waiting for a decision on [{}] {}({})",
            call.call_id, call.tool, call.arguments
        );
    }
    if paused.stop_reason == StopReason::AwaitingApproval {
        println!(
            "  the saved state: {} bytes of JSON, the transcript and the calls waiting\n",
            saved.len()
        );
        println!(
            "━━ A person {} it; another agent resumes from the saved state ━━\n",
            if approve { "approves" } else { "rejects" }
        );
        print!("{}", report(&done));
        println!(
            "\n  stop reason: {:?}\n  answer: {}",
            done.stop_reason, done.output
        );
    }
    println!(
        "  refunds the refund tool actually issued: {}",
        desk.refunds_issued()
    );
    Ok(())
}
