//! A customer-support agent whose tools fail in every way a real one does, and what each
//! failure tells the model versus the caller.
//!
//! Two conversations: in the first the gateway refuses a charge, an argument is wrong, a
//! prerequisite is missing and the carrier times out; in the second the gateway hangs (the
//! charge's effect is unknown, so the ledger says so) and a customer email carries a planted
//! instruction to refund, which the `forbid_after_untrusted` rule refuses.
//!
//! ```text
//! cargo run --example support_desk
//! ```
//!
//! Offline by default, on a scripted model. Set `RETICENT_MODEL` (e.g. `openai:gpt-4o-mini`,
//! `openai-responses:o4-mini`, `anthropic:claude-sonnet-4-5` or `gemini:gemini-2.5-flash`) and
//! the provider's API key to run the same agent against a real model, streamed unless
//! `RETICENT_STREAM=0`.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use reticent::{
    Agent, AgentResult, Model, ModelResponse, ScriptedModel, ToolCall, ToolFailureOptions, Usage,
    failures::EffectOutcome,
};
use serde_json::json;

// The desk and its tools are shared with the MCP server example.
pub use reticent_examples::support_desk::{GATEWAY_DSN, SupportDesk};

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

/// The second conversation: a charge that times out, so nobody knows whether it went through,
/// then a customer email with a planted instruction, then the refund it asks for — refused,
/// because untrusted text is now in the conversation.
pub fn script_after_failure() -> Vec<ModelResponse> {
    vec![
        ModelResponse::tool_call("call_1", "charge_card", json!({"order_id": "ORD-2001"}))
            .with_usage(Usage::new(402, 30)),
        ModelResponse::tool_call(
            "call_2",
            "read_customer_email",
            json!({"order_id": "ORD-2001"}),
        )
        .with_usage(Usage::new(470, 31)),
        ModelResponse::tool_call(
            "call_3",
            "issue_refund",
            json!({"order_id": "ORD-2001", "amount_cents": 500_000}),
        )
        .with_usage(Usage::new(560, 40)),
        ModelResponse::text(
            "I couldn't confirm whether your card was charged for ORD-2001: the payment \
             provider didn't answer in time, so a colleague will check before anything is \
             retried. I can't issue refunds in this conversation; a colleague will review your \
             email and follow up.",
        )
        .with_usage(Usage::new(640, 62)),
    ]
}

/// The user's second request.
pub const SECOND_REQUEST: &str =
    "Was my card charged for ORD-2001? Please also read my email about it and do what it says.";

/// Builds the support agent around `model`.
pub fn agent(model: impl Model, desk: Arc<SupportDesk>) -> Agent {
    Agent::builder(model)
        .system(
            "You are a support agent for an online shop. Use the tools to help the customer. \
             Never ship an order before its card was charged.",
        )
        .toolbox(desk)
        .require("ship_order", "charge_card")
        .forbid_after_untrusted("issue_refund")
        .failure_options(ToolFailureOptions::default().timeout(Duration::from_secs(10)))
        .build()
        .expect("the support agent's configuration is valid")
}

/// The user's request.
pub const USER_REQUEST: &str =
    "Hi, please charge my card and ship order 1042. When will it arrive? Postcode SW1A 1AA.";

/// The model side: the conversation exactly as the model saw it.
pub fn model_side(result: &AgentResult) -> String {
    reticent_examples::transcript(&result.messages)
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

/// The effects ledger: every call of a tool that can change the world, and whether it did.
pub fn ledger(result: &AgentResult) -> String {
    let mut out = String::new();
    for effect in &result.effects {
        let outcome = match effect.outcome {
            EffectOutcome::Applied => "applied",
            EffectOutcome::Failed => "failed",
            EffectOutcome::Unknown => "UNKNOWN: reconcile before retrying",
        };
        let _ = writeln!(
            out,
            "  [{}] {}({}) — {outcome}",
            effect.call_id, effect.tool, effect.arguments
        );
    }
    if result.tainted_by.is_empty() {
        let _ = writeln!(out, "  untrusted output in the conversation: none");
    } else {
        let _ = writeln!(
            out,
            "  untrusted output entered the conversation from call(s): {}",
            result.tainted_by.join(", ")
        );
    }
    out
}

fn rule(title: &str) -> String {
    format!(
        "── {title} {}",
        "─".repeat(78usize.saturating_sub(title.len() + 4))
    )
}

/// The whole report the example prints for one conversation.
pub fn report(result: &AgentResult) -> String {
    format!(
        "{}\n{}\n{}\n{}\n{}\n{}\n{}\n  stop reason: {:?}, turns: {}, tokens in/out: {}/{}\n\n  answer: {}\n",
        rule("What the model saw"),
        model_side(result),
        rule("What the caller got: every failure, with its full error"),
        caller_side(result),
        rule("The effects ledger"),
        ledger(result),
        rule("Summary"),
        result.stop_reason,
        result.turns,
        result.usage.input_tokens,
        result.usage.output_tokens,
        result.output,
    )
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), reticent_examples::Report> {
    let real = reticent_examples::model_from_env()?;
    match &real {
        Some(_) => println!(
            "Running against {}.\n",
            reticent_examples::model_spec().unwrap_or_default()
        ),
        None => {
            println!(
                "Running offline on a scripted model (set RETICENT_MODEL to use a real one).\n"
            )
        }
    }
    let conversations = [
        (USER_REQUEST, SupportDesk::new(), script()),
        (
            SECOND_REQUEST,
            SupportDesk::with_hanging_gateway(),
            script_after_failure(),
        ),
    ];
    for (i, (request, desk, script)) in conversations.into_iter().enumerate() {
        let desk = Arc::new(desk);
        let result = match &real {
            // A real model's answer is printed as it streams in (unless RETICENT_STREAM=0).
            Some(model) if reticent_examples::streaming() => {
                println!("━━ Conversation {} ━━ streaming\n", i + 1);
                let agent = agent(Arc::clone(model), Arc::clone(&desk));
                reticent_examples::run_live(&agent, request).await?
            }
            Some(model) => {
                agent(Arc::clone(model), Arc::clone(&desk))
                    .run(request)
                    .await?
            }
            None => {
                agent(ScriptedModel::new(script), Arc::clone(&desk))
                    .run(request)
                    .await?
            }
        };
        println!("━━ Conversation {} ━━ {request}\n", i + 1);
        print!("{}", report(&result));
        println!(
            "  refunds the refund tool actually issued: {}\n",
            desk.refunds_issued()
        );
    }
    Ok(())
}
