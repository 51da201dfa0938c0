//! Approvals in process: a call that needs approval stops the run before any call of its turn
//! runs, `Agent::resume` goes on with the decisions, a rejected call is refused with a fixed
//! text and never satisfies a prerequisite, and the state survives JSON and a new agent in a
//! new task.

use std::sync::Arc;

use reticent::{
    Agent, AgentEvent, BuildError, Decision, Decisions, Message, ModelResponse, ResumeError,
    RunState, ScriptedModel, StopReason,
    agent::{PendingReason, Verdict},
    failures::{EffectOutcome, kinds},
};
use reticent_tests::shop::{
    NeedsApproval, Shop, Wire, calls, ledger, lookup, refund, results, ship, waiting,
};
use serde_json::json;

fn agent(model: ScriptedModel, shop: &Arc<Shop>) -> Agent {
    Agent::builder(model)
        .toolbox(Arc::clone(shop))
        .require_approval("issue_refund")
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_call_that_needs_approval_stops_the_run_before_any_call_of_its_turn_runs() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![lookup("c1"), refund("c2", 4_500)])
            .with_text("I'll look the order up and refund it."),
    ]);
    let result = agent(model.clone(), &shop)
        .run("Refund ORD-7")
        .await
        .unwrap();

    assert_eq!(result.stop_reason, StopReason::AwaitingApproval);
    assert_eq!(result.output, "I'll look the order up and refund it.");
    assert_eq!(result.pending.len(), 1);
    let pending = &result.pending[0];
    assert_eq!(
        (
            pending.call_id.as_str(),
            pending.tool.as_str(),
            pending.reason
        ),
        ("c2", "issue_refund", PendingReason::Approval)
    );
    assert_eq!(pending.arguments["amount_cents"], 4_500);
    // Nothing of the turn ran, not even the read-only lookup; the ledger is empty.
    assert_eq!(Shop::count(&shop.lookups), 0);
    assert_eq!(Shop::count(&shop.refunds), 0);
    assert!(result.effects.is_empty());
    assert!(result.tool_failures.is_empty());
    // The transcript ends with the model's calls, which wait for their results.
    assert!(matches!(
        result.messages.last(),
        Some(Message::Assistant { tool_calls, .. }) if tool_calls.len() == 2
    ));
    let state = result.state.expect("a paused run can go on");
    assert_eq!(state.pending(), result.pending);
    assert_eq!(state.turns(), 1);
    assert_eq!(model.remaining(), 0);
}

#[tokio::test]
async fn an_approved_call_runs_with_its_turn_when_the_run_is_resumed() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![lookup("c1"), refund("c2", 4_500)]),
        ModelResponse::text("Refunded 45.00 on ORD-7."),
    ]);
    let agent = agent(model.clone(), &shop);
    let paused = agent.run("Refund ORD-7").await.unwrap();
    let result = agent
        .resume(
            paused.state.unwrap(),
            Decisions::new().approve(waiting(&paused.pending, "c2")),
        )
        .await
        .unwrap();

    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(result.output, "Refunded 45.00 on ORD-7.");
    assert!(result.pending.is_empty());
    assert!(result.state.is_none());
    assert_eq!(Shop::count(&shop.lookups), 1);
    assert_eq!(Shop::count(&shop.refunds), 1);
    assert_eq!(
        results(&result.messages),
        [
            ("c1", "ORD-7: 129.00, delivered", false),
            ("c2", "refunded 4500 on ORD-7", false),
        ]
    );
    assert_eq!(
        ledger(&result.effects),
        [("issue_refund", "c2", EffectOutcome::Applied)]
    );
    assert_eq!(result.turns, 2);
    assert_eq!(result.trajectory.len(), 2);
    // The second request carried both results, in call order.
    let requests = model.requests();
    assert_eq!(results(&requests[1].messages).len(), 2);
}

#[tokio::test]
async fn a_rejected_call_is_refused_with_a_fixed_text_and_recorded_like_any_refusal() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![lookup("c1"), refund("c2", 500_000)]),
        // The model tries to ship, which needs a successful refund first.
        calls([ship("c3")]),
        ModelResponse::text("The refund was not approved."),
    ]);
    let agent = Agent::builder(model.clone())
        .toolbox(Arc::clone(&shop))
        .require_approval("issue_refund")
        .require("ship_order", "issue_refund")
        .build()
        .unwrap();
    let paused = agent.run("Refund ORD-7 in full").await.unwrap();
    let result = agent
        .resume(
            paused.state.unwrap(),
            Decisions::new().reject(waiting(&paused.pending, "c2")),
        )
        .await
        .unwrap();

    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(Shop::count(&shop.refunds), 0, "a rejected call never runs");
    assert_eq!(Shop::count(&shop.lookups), 1, "the rest of its turn runs");
    assert_eq!(Shop::count(&shop.shipments), 0);
    let shown = results(&result.messages);
    assert_eq!(shown[0], ("c1", "ORD-7: 129.00, delivered", false));
    assert_eq!(
        shown[1],
        ("c2", "Tool 'issue_refund' was not approved", true)
    );
    // A rejected call never satisfies a prerequisite.
    assert_eq!(
        shown[2],
        (
            "c3",
            "Tool 'ship_order' was refused: it requires a successful call of 'issue_refund' \
             earlier in this conversation",
            true
        )
    );
    let rejected = &result.tool_failures[0];
    assert_eq!(rejected.kind, kinds::NOT_APPROVED);
    assert_eq!(rejected.call_id, "c2");
    assert_eq!(rejected.arguments["amount_cents"], 500_000);
    let error = rejected
        .error
        .downcast_ref::<reticent::failures::NotApproved>()
        .expect("the caller's error says the call was not approved");
    assert_eq!(error.call_id, "c2");
    assert_eq!(
        ledger(&result.effects),
        [
            ("issue_refund", "c2", EffectOutcome::Failed),
            ("ship_order", "c3", EffectOutcome::Failed),
        ]
    );
    assert_eq!(result.tool_stats["issue_refund"].calls, 1);
    assert_eq!(result.tool_stats["issue_refund"].failures, 1);
}

/// An agent that asks approval for refunds over 100.00.
fn large_refunds_need_approval(model: ScriptedModel, shop: &Arc<Shop>) -> Agent {
    Agent::builder(model)
        .toolbox(Arc::clone(shop))
        .require_approval_if("issue_refund", |args| {
            args["amount_cents"].as_u64() > Some(10_000)
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_predicate_over_the_arguments_picks_the_calls_that_need_approval() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![
        calls([refund("c1", 4_500)]),
        calls([refund("c2", 50_000)]),
        ModelResponse::text("Done."),
    ]);
    let agent = large_refunds_need_approval(model, &shop);
    let paused = agent.run("Refund twice").await.unwrap();
    assert_eq!(paused.stop_reason, StopReason::AwaitingApproval);
    assert_eq!(
        Shop::count(&shop.refunds),
        1,
        "the small refund ran at once"
    );
    assert_eq!(paused.pending.len(), 1);
    assert_eq!(paused.pending[0].call_id, "c2");
    // What ran before the pause is on the paused result.
    assert_eq!(
        ledger(&paused.effects),
        [("issue_refund", "c1", EffectOutcome::Applied)]
    );

    let done = agent
        .resume(
            paused.state.unwrap(),
            Decisions::new().approve(waiting(&paused.pending, "c2")),
        )
        .await
        .unwrap();
    assert_eq!(done.output, "Done.");
    assert_eq!(Shop::count(&shop.refunds), 2);
}

#[tokio::test]
async fn arguments_handed_over_as_text_are_parsed_for_the_predicate() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![ModelResponse::tool_call(
        "c1",
        "issue_refund",
        json!(r#"{"order_id": "ORD-7", "amount_cents": 50000}"#),
    )]);
    let agent = large_refunds_need_approval(model, &shop);
    let paused = agent.run("Refund").await.unwrap();
    assert_eq!(paused.stop_reason, StopReason::AwaitingApproval);
    assert_eq!(Shop::count(&shop.refunds), 0);
}

#[tokio::test]
async fn a_predicate_that_panics_asks_for_approval() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![calls([refund("c1", 1)])]);
    let agent = Agent::builder(model)
        .toolbox(Arc::clone(&shop))
        .require_approval_if("issue_refund", |_| panic!("rule engine unavailable"))
        .build()
        .unwrap();
    let paused = agent.run("Refund").await.unwrap();
    assert_eq!(paused.stop_reason, StopReason::AwaitingApproval);
    assert_eq!(Shop::count(&shop.refunds), 0);
}

#[tokio::test]
async fn a_tool_that_needs_approval_of_itself_stops_the_run() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call(
            "c1",
            "approved_refund",
            json!({"order_id": "ORD-7", "amount_cents": 100}),
        ),
        ModelResponse::text("Refunded."),
    ]);
    let agent = Agent::builder(model)
        .tool(NeedsApproval::new(&shop))
        .build()
        .unwrap();
    let paused = agent.run("Refund").await.unwrap();
    assert_eq!(paused.stop_reason, StopReason::AwaitingApproval);
    assert_eq!(paused.pending[0].tool, "approved_refund");
    let done = agent
        .resume(
            paused.state.unwrap(),
            Decisions::new().approve(waiting(&paused.pending, "c1")),
        )
        .await
        .unwrap();
    assert_eq!(done.output, "Refunded.");
    assert_eq!(Shop::count(&shop.refunds), 1);
}

#[tokio::test]
async fn a_call_another_rule_refuses_is_refused_without_asking() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![
        calls([ship("c1")]),
        ModelResponse::text("I could not ship it."),
    ]);
    let agent = Agent::builder(model)
        .toolbox(Arc::clone(&shop))
        .require_approval("ship_order")
        .require("ship_order", "issue_refund")
        .build()
        .unwrap();
    let result = agent.run("Ship ORD-7").await.unwrap();
    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(result.tool_failures[0].kind, kinds::PREREQUISITE);
}

#[test]
fn an_approval_rule_that_names_an_unknown_tool_is_refused_when_the_agent_is_built() {
    let error = Agent::builder(ScriptedModel::new(vec![]))
        .toolbox(Shop::new())
        .require_approval("issue_refnud")
        .build()
        .unwrap_err();
    assert!(matches!(
        &error,
        BuildError::UnknownTool { name, rule, .. }
            if name == "issue_refnud" && rule == "require_approval(\"issue_refnud\")"
    ));
    let error = Agent::builder(ScriptedModel::new(vec![]))
        .toolbox(Shop::new())
        .require_approval_if("refund", |_| true)
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "require_approval_if(\"refund\", ..) names the tool `refund`, which is not registered; \
         the tools are: lookup_order, issue_refund, ship_order, charge_card, transfer_funds"
    );
}

#[tokio::test]
async fn resume_refuses_missing_and_stray_decisions_and_hands_the_state_back() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![ModelResponse::tool_calls(vec![
        refund("c1", 100),
        refund("c2", 200),
    ])]);
    let agent = agent(model, &shop);
    let state = agent.run("Refund twice").await.unwrap().state.unwrap();
    let pending = state.pending();
    let (c1, c2) = (waiting(&pending, "c1"), waiting(&pending, "c2"));

    let refused = |error: ResumeError| match error {
        ResumeError::Refused(refused) => refused,
        other => panic!("expected a refusal, got {other}"),
    };
    let error = agent
        .resume(state.clone(), Decisions::new().approve(c1))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot resume the run: call `c2` of `issue_refund` awaits approval and has no decision"
    );
    let refusal = refused(error);
    assert_eq!(refusal.undecided.len(), 1);
    assert_eq!(refusal.state, state, "the state comes back as it was given");

    let error = agent
        .resume(
            state.clone(),
            Decisions::new()
                .applied(c1, json!("done"))
                .approve(c2)
                .decide("c9", Decision::new(Verdict::Reject, None)),
        )
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot resume the run: `c1` (issue_refund) waits for approval and never ran: it can \
         be approved or rejected, not applied; there is a decision for `c9`, which is not \
         waiting for one"
    );
    assert_eq!(Shop::count(&shop.refunds), 0, "nothing ran");

    // A run that waits on nothing resumes with no decisions.
    let done = agent
        .resume(state, Decisions::new().approve(c1).approve(c2))
        .await;
    // The script has no more responses: the model call fails, after both refunds ran.
    let partial = done.unwrap_err().into_run_error().unwrap().into_partial();
    assert_eq!(Shop::count(&shop.refunds), 2);
    assert_eq!(results(&partial.messages).len(), 2);
}

#[tokio::test]
async fn a_state_saved_as_json_is_resumed_by_a_new_agent_in_a_new_task() {
    let shop = Shop::new();
    let first = ScriptedModel::new(vec![
        calls([lookup("c1")]),
        ModelResponse::tool_calls(vec![refund("c2", 4_500), refund("c3", 900)]),
    ]);
    let paused = agent(first.clone(), &shop)
        .run("Refund ORD-7")
        .await
        .unwrap();
    assert_eq!(paused.stop_reason, StopReason::AwaitingApproval);
    let json = serde_json::to_string(&paused.state.unwrap()).unwrap();
    drop(first);

    // Another agent, built the same way, with a model that answers from here on.
    let shop_again = Arc::clone(&shop);
    let handle = tokio::spawn(async move {
        let state: RunState = serde_json::from_str(&json).unwrap();
        assert_eq!(
            state
                .pending()
                .iter()
                .map(|p| p.call_id.as_str())
                .collect::<Vec<_>>(),
            ["c2", "c3"]
        );
        let second = ScriptedModel::new(vec![ModelResponse::text(
            "Refunded 45.00; 9.00 was not approved.",
        )]);
        let agent = agent(second.clone(), &shop_again);
        // As a person's answer arrives: the approval names its call by digest; a rejection
        // may name it by id alone.
        let digest = waiting(&state.pending(), "c2").digest().to_string();
        let decisions: Decisions =
            serde_json::from_value(json!({"c2": {"approve": digest}, "c3": "reject"})).unwrap();
        let result = agent.resume(state, decisions).await.unwrap();
        (result, second.requests())
    });
    let (result, requests) = handle.await.unwrap();

    assert_eq!(result.output, "Refunded 45.00; 9.00 was not approved.");
    assert_eq!(
        Shop::count(&shop.lookups),
        1,
        "the first turn did not run again"
    );
    assert_eq!(Shop::count(&shop.refunds), 1);
    assert_eq!(result.turns, 3, "the turns before the pause count");
    assert_eq!(result.trajectory.len(), 3);
    assert_eq!(
        results(&result.messages),
        [
            ("c1", "ORD-7: 129.00, delivered", false),
            ("c2", "refunded 4500 on ORD-7", false),
            ("c3", "Tool 'issue_refund' was not approved", true),
        ]
    );
    // The new model saw the whole conversation.
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].messages,
        result.messages[..result.messages.len() - 1]
    );
    assert_eq!(requests[0].messages[0], Message::user("Refund ORD-7"));
}

#[tokio::test]
async fn a_run_can_wait_for_approval_more_than_once() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![
        calls([refund("c1", 1)]),
        ModelResponse::tool_call(
            "c2",
            "issue_refund",
            json!({"order_id": "ORD-8", "amount_cents": 2}),
        ),
        ModelResponse::text("Both refunded."),
    ]);
    let agent = agent(model, &shop);
    let first = agent.run("Refund both").await.unwrap();
    let second = agent
        .resume(
            first.state.unwrap(),
            Decisions::new().approve(waiting(&first.pending, "c1")),
        )
        .await
        .unwrap();
    assert_eq!(second.stop_reason, StopReason::AwaitingApproval);
    assert_eq!(second.pending[0].call_id, "c2");
    let done = agent
        .resume(
            second.state.unwrap(),
            Decisions::new().approve(waiting(&second.pending, "c2")),
        )
        .await
        .unwrap();
    assert_eq!(done.output, "Both refunded.");
    assert_eq!(Shop::count(&shop.refunds), 2);
    assert_eq!(done.turns, 3);
}

#[tokio::test]
async fn the_event_stream_ends_with_the_paused_result() {
    use futures::StreamExt;
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![calls([refund("c1", 1)])]);
    let events: Vec<AgentEvent> = agent(model, &shop).run_stream("Refund").collect().await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolStarted { .. })),
        "no call started"
    );
    match events.last() {
        Some(AgentEvent::Finished(Ok(result))) => {
            assert_eq!(result.stop_reason, StopReason::AwaitingApproval)
        }
        other => panic!("expected the paused result last, got {other:?}"),
    }
}

#[tokio::test]
async fn decisions_can_be_checked_against_the_pending_calls_before_they_are_used() {
    let shop = Shop::new();
    let model = ScriptedModel::new(vec![calls([refund("c1", 100), refund("c2", 200)])]);
    let paused = agent(model, &shop).run("Refund twice").await.unwrap();
    let (c1, c2) = (
        waiting(&paused.pending, "c1"),
        waiting(&paused.pending, "c2"),
    );
    let fits = Decisions::new().approve(c1).reject(c2);
    assert!(fits.problems(&paused.pending).is_empty());
    let problems = Decisions::new()
        .approve(c1)
        .decide("c3", Decision::new(Verdict::Approve, None))
        .problems(&paused.pending);
    assert_eq!(
        problems,
        [
            "call `c2` of `issue_refund` awaits approval and has no decision",
            "there is a decision for `c3`, which is not waiting for one",
        ]
    );
}

#[tokio::test]
async fn a_tool_whose_arguments_are_checked_still_needs_approval() {
    // The agent holds a tool with constraints behind the check it runs before each call; the
    // tool's own word that it needs approval must reach through that.
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_call("c1", "wire", json!({"amount_cents": 500})),
        ModelResponse::text("Sent."),
    ]);
    let agent = Agent::builder(model).tool(Wire).build().unwrap();
    let paused = agent.run("Send 5.00").await.unwrap();
    assert_eq!(paused.stop_reason, StopReason::AwaitingApproval);
    assert_eq!(paused.pending[0].tool, "wire");
    assert!(paused.tool_failures.is_empty());
    let done = agent
        .resume(
            paused.state.unwrap(),
            Decisions::new().approve(waiting(&paused.pending, "c1")),
        )
        .await
        .unwrap();
    assert_eq!(done.output, "Sent.");
    assert_eq!(results(&done.messages), [("c1", "sent 500", false)]);
}
