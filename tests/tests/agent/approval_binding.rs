//! A decision holds for the call it was made for, and for no other: two calls of one response
//! that share an id are told apart before anything sees them, a call decided twice is refused,
//! and a stored state edited to put another tool or other arguments under an approved call's id
//! runs nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use reticent::{
    Agent, Decision, Decisions, Message, ModelResponse, ResumeError, RunState, ScriptedModel,
    StopReason, ToolCall,
    agent::{CallDigest, PendingCall, Verdict},
};
use reticent_tests::shop::{Shop, calls, refund, results, waiting};
use serde_json::{Value, json};

/// A bank whose one tool closes an account, and needs a person's approval to.
#[derive(Debug, Default)]
struct Bank {
    closed: AtomicUsize,
}

#[reticent::tools]
impl Bank {
    /// Close a customer's account.
    #[tool(destructive, needs_approval)]
    async fn close_account(&self, account: String) -> String {
        self.closed.fetch_add(1, Ordering::SeqCst);
        format!("closed {account}")
    }
}

impl Bank {
    fn closed(&self) -> usize {
        self.closed.load(Ordering::SeqCst)
    }
}

/// An agent over the shop and the bank: refunds and account closures need approval.
fn agent(model: ScriptedModel, shop: &Arc<Shop>, bank: &Arc<Bank>) -> Agent {
    Agent::builder(model)
        .toolbox(Arc::clone(shop))
        .toolbox(Arc::clone(bank))
        .require_approval("issue_refund")
        .build()
        .unwrap()
}

fn close(id: &str) -> ToolCall {
    ToolCall::new(id, "close_account", json!({"account": "ACC-1"}))
}

/// What a person decides, call by call: no account is closed, everything else is approved.
fn keep_accounts_open(pending: &[PendingCall]) -> Decisions {
    pending.iter().fold(Decisions::new(), |decisions, call| {
        if call.tool == "close_account" {
            decisions.reject(call)
        } else {
            decisions.approve(call)
        }
    })
}

fn refused(error: ResumeError) -> reticent::failures::ResumeRefused {
    match error {
        ResumeError::Refused(refused) => refused,
        other => panic!("expected a refusal, got {other}"),
    }
}

/// The ids of the calls in the last assistant message of `messages`.
fn last_call_ids(messages: &[Message]) -> Vec<&str> {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                Some(tool_calls.iter().map(|c| c.id.as_str()).collect())
            }
            _ => None,
        })
        .unwrap_or_default()
}

// ---- duplicate call ids ----------------------------------------------------------------------

/// The scenario of the report: a provider gives both calls of a response the id `c1`; the
/// person rejects the account closure and approves the refund. Before, the two calls were one
/// id in the decisions, the approval (given last) decided both, the closure ran, and
/// `problems()` saw nothing wrong.
#[tokio::test]
async fn two_calls_of_one_response_with_one_id_are_told_apart_and_the_rejected_one_never_runs() {
    let (shop, bank) = (Shop::new(), Arc::new(Bank::default()));
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![close("c1"), refund("c1", 4_500)]),
        ModelResponse::text("Refunded; the account stays open."),
    ]);
    let agent = agent(model.clone(), &shop, &bank);
    let paused = agent
        .run("Refund ORD-7 and close my account")
        .await
        .unwrap();
    assert_eq!(paused.stop_reason, StopReason::AwaitingApproval);

    // The first call keeps the id the model gave it; the second has one of its own, in the
    // transcript and the trajectory as in the pending calls.
    let pending: Vec<(&str, &str)> = paused
        .pending
        .iter()
        .map(|p| (p.call_id.as_str(), p.tool.as_str()))
        .collect();
    assert_eq!(pending, [("c1", "close_account"), ("c1_2", "issue_refund")]);
    assert_eq!(last_call_ids(&paused.messages), ["c1", "c1_2"]);
    let recorded: Vec<&str> = paused
        .trajectory
        .responses()
        .next()
        .unwrap()
        .tool_calls
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(recorded, ["c1", "c1_2"]);

    let decisions = keep_accounts_open(&paused.pending);
    assert!(decisions.problems(&paused.pending).is_empty());
    let done = agent
        .resume(paused.state.unwrap(), decisions)
        .await
        .unwrap();

    assert_eq!(bank.closed(), 0, "the rejected closure never ran");
    assert_eq!(Shop::count(&shop.refunds), 1, "the approved refund ran");
    assert_eq!(
        results(&done.messages),
        [
            ("c1", "Tool 'close_account' was not approved", true),
            ("c1_2", "refunded 4500 on ORD-7", false),
        ]
    );
    // The model is shown each result under the id of its call in its own message.
    let next = &model.requests()[1].messages;
    assert_eq!(last_call_ids(next), ["c1", "c1_2"]);
    assert_eq!(
        results(next).iter().map(|r| r.0).collect::<Vec<_>>(),
        ["c1", "c1_2"]
    );
}

#[tokio::test]
async fn a_call_decided_twice_is_refused_and_the_problems_name_it() {
    let (shop, bank) = (Shop::new(), Arc::new(Bank::default()));
    let model = ScriptedModel::new(vec![ModelResponse::tool_calls(vec![
        close("c1"),
        refund("c1", 4_500),
    ])]);
    let agent = agent(model, &shop, &bank);
    let paused = agent.run("Refund and close").await.unwrap();
    let (closure, refund) = (
        waiting(&paused.pending, "c1"),
        waiting(&paused.pending, "c1_2"),
    );

    // A caller that keys its decisions by the id the model gave: `c1` is decided twice. The
    // second decision does not replace the first; both are refused.
    let decisions = Decisions::new()
        .reject(closure)
        .decide("c1", Decision::for_call(refund, Verdict::Approve));
    let problems = decisions.problems(&paused.pending);
    assert_eq!(
        problems,
        [
            "call `c1_2` of `issue_refund` awaits approval and has no decision",
            "the call `c1` is decided twice; give each call one decision",
        ]
    );
    let error = agent
        .resume(paused.state.clone().unwrap(), decisions)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("cannot resume the run: {}", problems.join("; "))
    );
    assert_eq!(refused(error).state, paused.state.unwrap());
    assert_eq!(bank.closed(), 0, "nothing ran");
    assert_eq!(Shop::count(&shop.refunds), 0, "nothing ran");

    // In JSON, a call decided twice does not read: before, the last decision won.
    let error =
        serde_json::from_str::<Decisions>(r#"{"c1": "reject", "c1": "approve"}"#).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the call `c1` is decided twice; give each call one decision at line 1 column 21"
    );
}

#[tokio::test]
async fn a_state_whose_unfinished_turn_repeats_an_id_is_refused() {
    let (shop, bank) = (Shop::new(), Arc::new(Bank::default()));
    let model = ScriptedModel::new(vec![ModelResponse::tool_calls(vec![
        close("c1"),
        refund("c2", 4_500),
    ])]);
    let agent = agent(model, &shop, &bank);
    let paused = agent.run("Refund and close").await.unwrap();
    let decisions = keep_accounts_open(&paused.pending);
    // A state written otherwise (or changed) that gives both calls one id.
    let mut json = serde_json::to_value(paused.state.unwrap()).unwrap();
    json["open_turn"][1]["call"]["id"] = json!("c1");
    let state: RunState = serde_json::from_value(json).unwrap();

    let problem = "2 calls have the id `c1`, and a decision cannot tell them apart";
    assert!(
        decisions
            .problems(&state.pending())
            .contains(&problem.to_owned()),
        "{:?}",
        decisions.problems(&state.pending())
    );
    let error = agent.resume(state, decisions).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("cannot resume the run: {problem}")
    );
    assert_eq!(bank.closed(), 0);
    assert_eq!(Shop::count(&shop.refunds), 0);
}

// ---- decisions bound to their calls ----------------------------------------------------------

/// A refund of 45.00 waits for approval, and a person approves it as they saw it.
async fn an_approved_refund(
    shop: &Arc<Shop>,
    bank: &Arc<Bank>,
) -> (Agent, Value, Decisions, PendingCall) {
    let model = ScriptedModel::new(vec![
        calls([refund("c1", 4_500)]),
        ModelResponse::text("Refunded."),
    ]);
    let agent = agent(model, shop, bank);
    let paused = agent.run("Refund ORD-7").await.unwrap();
    let seen = paused.pending[0].clone();
    let decisions = Decisions::new().approve(&seen);
    let state = serde_json::to_value(paused.state.unwrap()).unwrap();
    (agent, state, decisions, seen)
}

/// `state` with the arguments or the tool of the waiting call (and of the transcript's call)
/// replaced, as an edit of stored state would.
fn swapped(state: &Value, tool: &str, arguments: Value, status: &str) -> RunState {
    let mut state = state.clone();
    for path in ["/open_turn/0/call", "/messages/1/tool_calls/0"] {
        let call = state.pointer_mut(path).expect("the state holds the call");
        call["name"] = json!(tool);
        call["arguments"] = arguments.clone();
    }
    state["open_turn"][0]["status"] = json!(status);
    serde_json::from_value(state).unwrap()
}

#[tokio::test]
async fn an_approval_does_not_carry_over_to_other_arguments_or_another_tool() {
    let swaps = [
        // The refund's arguments swapped: every order, not ORD-7.
        (
            "issue_refund",
            json!({"order_id": "SWAPARG-ALL-ORDERS", "amount_cents": 4_500}),
            "awaiting_approval",
        ),
        // Another tool under the approved call's id, waiting or about to start.
        (
            "close_account",
            json!({"account": "ACC-1"}),
            "awaiting_approval",
        ),
        ("close_account", json!({"account": "ACC-1"}), "not_started"),
    ];
    for (tool, arguments, status) in swaps {
        let (shop, bank) = (Shop::new(), Arc::new(Bank::default()));
        let (agent, state, decisions, seen) = an_approved_refund(&shop, &bank).await;
        let state = swapped(&state, tool, arguments.clone(), status);
        assert_ne!(CallDigest::of(tool, &arguments), seen.digest());

        let error = agent.resume(state.clone(), decisions).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "cannot resume the run: the decision for `c1` was made for another call: the \
                 call that waits under that id (`{tool}`) differs in its tool or its arguments \
                 from the one decided on"
            ),
            "{tool} {arguments} {status}"
        );
        assert_eq!(refused(error).state, state, "the state comes back as given");
        assert_eq!(
            Shop::count(&shop.refunds),
            0,
            "{tool} {arguments}: nothing ran"
        );
        assert_eq!(bank.closed(), 0, "{tool} {arguments}: nothing ran");
    }
}

#[tokio::test]
async fn the_same_call_in_another_key_order_is_still_the_approved_call() {
    let (shop, bank) = (Shop::new(), Arc::new(Bank::default()));
    let (agent, state, decisions, _) = an_approved_refund(&shop, &bank).await;
    let state = swapped(
        &state,
        "issue_refund",
        json!({"amount_cents": 4_500, "order_id": "ORD-7"}),
        "awaiting_approval",
    );
    let done = agent.resume(state, decisions).await.unwrap();
    assert_eq!(done.output, "Refunded.");
    assert_eq!(Shop::count(&shop.refunds), 1);
}

#[tokio::test]
async fn an_approval_given_by_id_alone_is_refused_and_a_rejection_by_id_alone_holds() {
    let (shop, bank) = (Shop::new(), Arc::new(Bank::default()));
    let (agent, state, _, seen) = an_approved_refund(&shop, &bank).await;
    let state: RunState = serde_json::from_value(state).unwrap();

    // A UI that knows only ids: `"approve"` cannot say which call it approves.
    let by_id: Decisions = serde_json::from_value(json!({"c1": "approve"})).unwrap();
    let problem = "the approval of `c1` (issue_refund) does not say which call it approves: \
                   approve the pending call itself (`Decisions::approve`), or give its digest \
                   (`{\"approve\": DIGEST}`)";
    assert_eq!(by_id.problems(&state.pending()), [problem]);
    let error = agent.resume(state.clone(), by_id).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("cannot resume the run: {problem}")
    );
    assert_eq!(Shop::count(&shop.refunds), 0, "nothing ran");

    // Given the pending call's digest, the same UI's approval names the call.
    let bound: Decisions =
        serde_json::from_value(json!({"c1": {"approve": seen.digest().to_string()}})).unwrap();
    assert_eq!(bound, Decisions::new().approve(&seen));
    assert!(bound.problems(&state.pending()).is_empty());

    // A rejection runs nothing whatever the call is: by id alone, it holds.
    let reject: Decisions = serde_json::from_value(json!({"c1": "reject"})).unwrap();
    let done = agent.resume(state, reject).await.unwrap();
    assert_eq!(Shop::count(&shop.refunds), 0);
    assert_eq!(
        results(&done.messages),
        [("c1", "Tool 'issue_refund' was not approved", true)]
    );
}

#[tokio::test]
async fn a_pending_call_written_as_json_gives_its_digest_for_the_answer() {
    let (shop, bank) = (Shop::new(), Arc::new(Bank::default()));
    let (_, state, _, seen) = an_approved_refund(&shop, &bank).await;
    let arguments = json!({"order_id": "ORD-7", "amount_cents": 4_500});
    let digest = CallDigest::of("issue_refund", &arguments);
    assert_eq!(seen.digest(), digest);
    assert_eq!(
        serde_json::to_value(&seen).unwrap(),
        json!({
            "call_id": "c1",
            "tool": "issue_refund",
            "arguments": arguments,
            "reason": "approval",
            "digest": digest.to_string(),
        })
    );
    // Read back, the digest is the call's own, whatever the text said.
    let mut json = serde_json::to_value(&seen).unwrap();
    json["digest"] = json!(CallDigest::of("close_account", &json!({})).to_string());
    let read: PendingCall = serde_json::from_value(json).unwrap();
    assert_eq!(read.digest(), digest);
    let state: RunState = serde_json::from_value(state).unwrap();
    assert_eq!(state.pending(), [seen]);
}
