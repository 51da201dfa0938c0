//! The support-desk example, run as a test: the model side shows type names only, the caller
//! side has the full errors, and the gateway's connection string never reaches the model; and
//! the same desk against llmock on every provider, streamed and not, with the connection
//! string in no request body llmock received.

#[allow(dead_code)]
#[path = "../examples/support_desk.rs"]
mod support_desk;

use std::sync::Arc;

use reticent::{ScriptedModel, StopReason, failures::EffectOutcome};
use support_desk::{
    GATEWAY_DSN, SECOND_REQUEST, SupportDesk, USER_REQUEST, agent, caller_side, ledger, model_side,
    report, script, script_after_failure,
};

#[tokio::test]
async fn the_model_sees_less_than_the_caller() {
    let model = ScriptedModel::new(script());
    let result = agent(model.clone(), Arc::new(SupportDesk::new()))
        .run(USER_REQUEST)
        .await
        .expect("the scripted run completes");
    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(model.remaining(), 0, "the whole script was used");

    let model_text = model_side(&result);
    let caller_text = caller_side(&result);
    let printed = report(&result);

    // The four failures the demo exists to show, as the model saw them.
    for line in [
        "Invalid arguments for tool 'lookup_order': no order \"1042\"; order ids look like ORD-1042",
        "Tool 'ship_order' was refused: it requires a successful call of 'charge_card' earlier in this conversation",
        "Tool 'charge_card' failed with GatewayError",
        "Tool 'estimate_delivery' timed out after 1s and was stopped; whether it took effect is unknown",
    ] {
        assert!(
            model_text.contains(line),
            "model side lacks {line:?}:\n{model_text}"
        );
        assert!(
            caller_text.contains(line),
            "caller side lacks what the model saw {line:?}"
        );
    }
    // The model never saw the connection string ...
    assert!(!model_text.contains("hunter2"), "{model_text}");
    for request in model.requests() {
        let sent = serde_json::to_string(&request).unwrap();
        assert!(
            !sent.contains("hunter2"),
            "a model request holds the secret: {sent}"
        );
    }
    let trajectory = serde_json::to_string(&result.trajectory).unwrap();
    assert!(!trajectory.contains("hunter2"));
    // ... while the caller has it, in the record and in what the example prints.
    assert!(caller_text.contains(GATEWAY_DSN), "{caller_text}");
    assert!(printed.contains(GATEWAY_DSN));
    let gateway = result
        .tool_failures
        .iter()
        .find(|f| f.tool == "charge_card")
        .expect("the charge failed");
    assert_eq!(gateway.kind, "GatewayError");
    assert!(gateway.error.to_string().contains(GATEWAY_DSN));

    let timed_out: Vec<_> = result
        .tool_failures
        .iter()
        .filter(|f| f.timed_out)
        .collect();
    assert_eq!(timed_out.len(), 1);
    assert_eq!(timed_out[0].tool, "estimate_delivery");
    assert_eq!(result.tool_failures.len(), 4);
}

#[tokio::test]
async fn a_timed_out_charge_is_unknown_and_a_planted_refund_is_refused() {
    let model = ScriptedModel::new(script_after_failure());
    let desk = Arc::new(SupportDesk::with_hanging_gateway());
    let result = agent(model.clone(), Arc::clone(&desk))
        .run(SECOND_REQUEST)
        .await
        .expect("the scripted run completes");
    assert_eq!(result.stop_reason, StopReason::Completed);
    assert_eq!(model.remaining(), 0);

    // The charge timed out: nobody knows whether it went through, and the ledger says so.
    let effects: Vec<_> = result
        .effects
        .iter()
        .map(|e| (e.call_id.as_str(), e.tool.as_str(), e.outcome))
        .collect();
    assert_eq!(
        effects,
        [
            ("call_1", "charge_card", EffectOutcome::Unknown),
            ("call_3", "issue_refund", EffectOutcome::Failed),
        ]
    );
    let model_text = model_side(&result);
    assert!(model_text.contains(
        "Tool 'charge_card' timed out after 1s and was stopped; whether it took effect is unknown"
    ));

    // The email tainted the run; the refund it asked for was refused and never ran.
    assert_eq!(result.tainted_by, ["call_2"]);
    assert!(model_text.contains(
        "Tool 'issue_refund' was refused by the rule forbid_after_untrusted(\"issue_refund\")"
    ));
    assert_eq!(desk.refunds_issued(), 0);
    let printed = report(&result);
    assert!(
        printed.contains("UNKNOWN: reconcile before retrying"),
        "{printed}"
    );
    assert!(
        ledger(&result).contains("untrusted output entered the conversation from call(s): call_2")
    );
}

#[tokio::test]
async fn the_desks_definitions_carry_attributes_and_an_output_schema() {
    use reticent::{Tool, ToolContext, Toolbox};
    use serde_json::json;

    let tools = Arc::new(SupportDesk::new()).tools();
    let find = |name: &str| -> Arc<dyn Tool> {
        tools
            .iter()
            .find(|tool| tool.definition().name == name)
            .cloned()
            .unwrap_or_else(|| panic!("no tool {name}"))
    };
    let open_ticket = find("open_ticket");
    let definition = open_ticket.definition();
    assert_eq!(definition.title.as_deref(), Some("Open a support ticket"));
    let priority = &definition.parameters["properties"]["priority"];
    assert_eq!(
        (
            &priority["minimum"],
            &priority["maximum"],
            &priority["default"]
        ),
        (&json!(1), &json!(5), &json!(3))
    );
    assert_eq!(
        definition.parameters["required"],
        json!(["order_id", "summary"])
    );
    let output = definition.output_schema.as_ref().expect("an output schema");
    assert_eq!(output["type"], "object");
    assert_eq!(output["properties"]["priority"]["type"], "integer");
    let ticket = open_ticket
        .call(
            json!({"order_id": "ORD-1042", "summary": "Retry the payment."}),
            ToolContext::default(),
        )
        .await
        .expect("a ticket");
    assert_eq!(ticket["priority"], 3);

    // The carrier's word for the parameter is the argument's name; `zip` is read too.
    let estimate = find("estimate_delivery");
    let properties = &estimate.definition().parameters["properties"];
    assert!(properties.get("postcode").is_some() && properties.get("postal_code").is_none());
}

/// The providers `from_spec` builds, at llmock.
const SPECS: [&str; 4] = [
    "openai:gpt-4o-mini",
    "openai-responses:gpt-4o-mini",
    "anthropic:claude-sonnet-4-5",
    "gemini:gemini-2.0-flash",
];

#[tokio::test]
async fn the_desk_completes_on_every_provider_against_llmock() {
    use futures::StreamExt;
    use reticent::AgentEvent;
    use reticent_tests::llmock::{Faults, Llmock};
    use serde_json::json;

    let what = "the support desk on every provider against llmock";
    let Some(server) = Llmock::start(what, &Faults::none()).await else {
        return;
    };
    let lookup = |var: &str| -> Option<String> {
        match var {
            "OPENAI_BASE_URL" => Some(server.openai_base()),
            "ANTHROPIC_BASE_URL" => Some(server.anthropic_base()),
            "GEMINI_BASE_URL" => Some(server.gemini_base()),
            v if v.ends_with("_API_KEY") => Some("sk-llmock-0123456789".to_owned()),
            _ => None,
        }
    };
    for spec in SPECS {
        for stream in [false, true] {
            let name = format!("{spec} (stream: {stream})");
            server.reset().await;
            // the model looks the order up and charges it at once; then llmock answers in text
            server
                .script(json!([{"type": "reply", "tool_calls": [
                    {"name": "lookup_order", "arguments": {"order_id": "ORD-1042"}},
                    {"name": "charge_card", "arguments": {"order_id": "ORD-1042"}}
                ]}]))
                .await;
            let model = reticent::providers::from_spec(spec, lookup).unwrap();
            let agent = agent(model, Arc::new(SupportDesk::new()));
            let result = if stream {
                let mut events = agent.run_stream(USER_REQUEST);
                let mut finished = None;
                while let Some(event) = events.next().await {
                    if let AgentEvent::Finished(result) = event {
                        finished = Some(result);
                    }
                }
                finished.expect("the run finishes")
            } else {
                agent.run(USER_REQUEST).await
            };
            let result = result.unwrap_or_else(|e| panic!("{name}: {e}\n{}", server.log()));
            assert_eq!(result.stop_reason, StopReason::Completed, "{name}");
            assert!(result.turns >= 2, "{name}");
            let gateway = result
                .tool_failures
                .iter()
                .find(|f| f.tool == "charge_card")
                .unwrap_or_else(|| panic!("{name}: the charge failed"));
            assert!(gateway.error.to_string().contains(GATEWAY_DSN), "{name}");

            let journal = server.requests().await;
            assert!(journal.len() >= 2, "{name}: {journal:?}");
            let mut shown = false;
            for record in &journal {
                assert_eq!(record.status, 200, "{name}: {record:?}");
                assert_eq!(record.stream, stream, "{name}: {record:?}");
                let body = record.body.as_ref().expect("the body is kept").to_string();
                assert!(!body.contains("hunter2"), "{name}: {body}");
                shown |= body.contains("Tool 'charge_card' failed with GatewayError");
            }
            assert!(shown, "{name}: no request showed the model the failure");
        }
    }
}

/// The desk's tools under `reticent::testing`, as a user's CI would check them: what the model
/// is shown for an error of the desk's own type, and the gateway's connection string, planted
/// by the desk itself, in no channel the model reads while the caller has it.
#[tokio::test]
async fn the_leak_check_passes_on_the_desk() {
    use reticent::Toolbox;
    use reticent::testing::{LeakCheck, assert_model_sees};
    use reticent_examples::support_desk::OrderError;

    let tools = Arc::new(SupportDesk::new()).tools();
    let lookup_order = tools
        .iter()
        .find(|t| t.definition().name == "lookup_order")
        .expect("the desk has lookup_order");
    assert_model_sees!(
        &**lookup_order,
        OrderError::Database(GATEWAY_DSN.into()),
        "Tool 'lookup_order' failed with OrderError::Database"
    );
    assert_model_sees!(
        &**lookup_order,
        OrderError::NotFound("1042".into()),
        "Invalid arguments for tool 'lookup_order': no order \"1042\"; order ids look like ORD-1042"
    );

    let report = LeakCheck::new(GATEWAY_DSN)
        .toolbox(Arc::new(SupportDesk::new()))
        .call("lookup_order", serde_json::json!({"order_id": "1042"}))
        .call("charge_card", serde_json::json!({"order_id": "ORD-1042"}))
        .run()
        .await;
    report.assert_no_leak();
    assert_eq!(
        report.caller_channels()[0],
        "tool_failures[1] (charge_card)"
    );
}
