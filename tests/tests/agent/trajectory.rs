//! The trajectory: every request and response of a run, holding only what the model saw; it
//! goes to JSON and back without loss, and `ReplayModel` replays it, refusing clearly when a
//! request diverges from the recording.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use reticent::{
    Agent, AgentError, AgentResult, Message, ModelResponse, ReplayModel, RunOptions, ScriptedModel,
    StopReason, ToolCall, ToolFailureMode, ToolFailureOptions, Trajectory, Usage,
};
use serde_json::{Value, json};

#[derive(Debug, thiserror::Error)]
#[error("gateway returned 503 via postgres://pay:hunter2@10.0.0.7/pay")]
struct GatewayError;

/// A shop whose card gateway is down until it is switched on.
#[derive(Default)]
struct Shop {
    gateway_up: AtomicBool,
}

#[reticent::tools]
impl Shop {
    /// Charge the customer's card.
    #[tool]
    fn charge_card(&self, amount_cents: u64) -> Result<String, GatewayError> {
        if self.gateway_up.load(Ordering::SeqCst) {
            Ok(format!("charged {amount_cents} cents"))
        } else {
            Err(GatewayError)
        }
    }

    /// Find the nearest depot.
    #[tool(read_only)]
    fn nearest_depot(&self, lat: f64, lon: f64) -> String {
        format!("depot 7 near {lat:.2},{lon:.2}")
    }
}

const SYSTEM: &str = "You are a shop assistant.";

fn script() -> Vec<ModelResponse> {
    vec![
        ModelResponse::tool_calls(vec![
            ToolCall::new(
                "c1",
                "nearest_depot",
                // Floats that JSON parsers commonly get wrong in the last digit.
                json!({"lat": 985.6906946328695, "lon": 212.91890726713459}),
            ),
            ToolCall::new("c2", "charge_card", json!({"amount_cents": 4200})),
        ])
        .with_text("Checking.")
        .with_usage(Usage::new(120, 30)),
        ModelResponse::tool_call(
            "c3",
            "charge_card",
            Value::String(r#"{"amount_cents": 4200"#.into()),
        )
        .with_usage(Usage::new(180, 20)),
        ModelResponse::tool_call("c4", "charge_card", json!({"amount_cents": 4200}))
            .with_usage(Usage::new(200, 10)),
        ModelResponse::text("The payment failed; nothing was charged.")
            .with_usage(Usage::new(220, 15)),
    ]
}

fn agent(model: impl reticent::Model, shop: Arc<Shop>) -> Agent {
    Agent::builder(model)
        .system(SYSTEM)
        .toolbox(shop)
        .build()
        .unwrap()
}

fn history() -> RunOptions {
    RunOptions::default().history(vec![
        Message::user("Hi"),
        Message::Assistant {
            text: Some("Hello! How can I help?".into()),
            tool_calls: vec![],
        },
    ])
}

async fn record() -> (AgentResult, ScriptedModel) {
    let model = ScriptedModel::new(script());
    let result = agent(model.clone(), Arc::new(Shop::default()))
        .run_with("Pay for my order", history())
        .await
        .unwrap();
    (result, model)
}

#[tokio::test]
async fn the_trajectory_rebuilds_every_request_exactly() {
    let (result, model) = record().await;
    let trajectory = &result.trajectory;

    // The run hit the failure limit: its last request offered no tools.
    assert_eq!(result.stop_reason, StopReason::FailureLimit);
    assert_eq!(trajectory.len(), 4);
    assert!(!trajectory.is_empty());
    assert_eq!(trajectory.requests(), model.requests());
    assert!(trajectory.requests()[3].tools.is_empty());
    assert_eq!(
        trajectory.request(0).unwrap().system.as_deref(),
        Some(SYSTEM)
    );
    assert_eq!(trajectory.request(4), None);
    assert_eq!(
        trajectory.responses().cloned().collect::<Vec<_>>(),
        script()
    );
    assert_eq!(trajectory.messages(), result.messages.as_slice());
}

#[tokio::test]
async fn the_trajectory_goes_to_json_and_back_without_loss() {
    let (result, _) = record().await;
    let recorded = result.trajectory;

    let json = serde_json::to_string(&recorded).unwrap();
    let loaded: Trajectory = serde_json::from_str(&json).unwrap();
    assert_eq!(loaded, recorded);
    assert_eq!(loaded.requests(), recorded.requests());
    // Serializing the loaded copy gives the same text.
    assert_eq!(serde_json::to_string(&loaded).unwrap(), json);

    let pretty = serde_json::to_string_pretty(&recorded).unwrap();
    assert_eq!(
        serde_json::from_str::<Trajectory>(&pretty).unwrap(),
        recorded
    );
    let value = serde_json::to_value(&recorded).unwrap();
    assert_eq!(
        serde_json::from_value::<Trajectory>(value).unwrap(),
        recorded
    );
}

#[tokio::test]
async fn the_trajectory_holds_what_the_model_saw_and_nothing_else() {
    let (result, _) = record().await;
    let json = serde_json::to_string(&result.trajectory).unwrap();

    assert!(json.contains("Tool 'charge_card' failed with GatewayError"));
    assert!(json.contains("Tools are now disabled for this conversation"));
    assert!(!json.contains("hunter2"), "{json}");
    assert!(!json.contains("gateway returned 503"), "{json}");
    // The caller's record still has the message.
    assert!(
        result
            .tool_failures
            .iter()
            .any(|f| f.error.to_string().contains("hunter2"))
    );
}

#[tokio::test]
async fn a_loaded_trajectory_replays_the_run() {
    let (recorded, _) = record().await;
    let json = serde_json::to_string(&recorded.trajectory).unwrap();
    let loaded: Trajectory = serde_json::from_str(&json).unwrap();
    let replay = ReplayModel::new(loaded);

    let replayed = agent(replay.clone(), Arc::new(Shop::default()))
        .run_with("Pay for my order", history())
        .await
        .unwrap();

    assert_eq!(replay.remaining(), 0);
    assert_eq!(replayed.output, recorded.output);
    assert_eq!(replayed.messages, recorded.messages);
    assert_eq!(replayed.stop_reason, recorded.stop_reason);
    assert_eq!(replayed.usage, recorded.usage);
    assert_eq!(replayed.usage, Usage::new(720, 75));
    assert_eq!(replayed.turns, recorded.turns);
    assert_eq!(replayed.trajectory, recorded.trajectory);
    let kinds = |r: &AgentResult| -> Vec<String> {
        r.tool_failures.iter().map(|f| f.kind.clone()).collect()
    };
    assert_eq!(kinds(&replayed), kinds(&recorded));
}

fn diverged(error: AgentError) -> String {
    match error {
        AgentError::Model { error, .. } => error.message().to_owned(),
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_different_input_diverges_at_the_first_request() {
    let (recorded, _) = record().await;
    let replay = ReplayModel::new(recorded.trajectory);

    let error = agent(replay.clone(), Arc::new(Shop::default()))
        .run_with("Pay for order 7", history())
        .await
        .unwrap_err();

    assert_eq!(
        diverged(error),
        "request 1 diverges from the recording: message 3 differs: recorded a user message \
         \"Pay for my order\", got a user message \"Pay for order 7\""
    );
    assert_eq!(replay.remaining(), 4);
}

#[tokio::test]
async fn a_tool_that_behaves_differently_diverges_where_its_result_is_sent() {
    let (recorded, _) = record().await;
    let replay = ReplayModel::new(recorded.trajectory);
    let shop = Arc::new(Shop::default());
    shop.gateway_up.store(true, Ordering::SeqCst);

    let error = agent(replay, shop)
        .run_with("Pay for my order", history())
        .await
        .unwrap_err();

    assert_eq!(
        diverged(error),
        "request 2 diverges from the recording: message 6 differs: recorded the result of call \
         'c2' to 'charge_card' (error) \"Tool 'charge_card' failed with GatewayError\", got the \
         result of call 'c2' to 'charge_card' (ok) \"charged 4200 cents\""
    );
}

#[tokio::test]
async fn another_disclosure_setting_diverges_because_the_model_saw_other_text() {
    let (recorded, _) = record().await;
    let replay = ReplayModel::new(recorded.trajectory);
    let agent = Agent::builder(replay)
        .system(SYSTEM)
        .toolbox(Arc::new(Shop::default()))
        .failure_options(ToolFailureOptions::default().include_error_message(true))
        .build()
        .unwrap();

    let error = agent
        .run_with("Pay for my order", history())
        .await
        .unwrap_err();

    let message = diverged(error);
    assert!(
        message.starts_with(
            "request 2 diverges from the recording: message 6 differs: recorded the result of \
             call 'c2' to 'charge_card' (error) \"Tool 'charge_card' failed with GatewayError\", \
             got the result of call 'c2' to 'charge_card' (error) \"Tool 'charge_card' failed \
             with GatewayError: gateway returned 503"
        ),
        "{message}"
    );
}

#[tokio::test]
async fn a_different_system_prompt_or_tool_set_diverges() {
    let (recorded, _) = record().await;

    let other_system = Agent::builder(ReplayModel::new(recorded.trajectory.clone()))
        .system("You are a pirate.")
        .toolbox(Arc::new(Shop::default()))
        .build()
        .unwrap();
    let error = other_system
        .run_with("Pay for my order", history())
        .await
        .unwrap_err();
    assert_eq!(
        diverged(error),
        "request 1 diverges from the recording: the system prompt differs"
    );

    /// Refund an order.
    #[reticent::tool]
    fn refund_order(order_id: String) -> String {
        order_id
    }
    let more_tools = Agent::builder(ReplayModel::new(recorded.trajectory))
        .system(SYSTEM)
        .toolbox(Arc::new(Shop::default()))
        .tool(RefundOrder)
        .build()
        .unwrap();
    let error = more_tools
        .run_with("Pay for my order", history())
        .await
        .unwrap_err();
    assert_eq!(
        diverged(error),
        "request 1 diverges from the recording: 3 tools were offered, the recording offered 2"
    );
}

#[tokio::test]
async fn a_request_past_the_end_of_the_recording_diverges() {
    let recorded = Agent::builder(ScriptedModel::new(vec![ModelResponse::text("Hi!")]))
        .build()
        .unwrap()
        .run("Hello")
        .await
        .unwrap()
        .trajectory;
    let replay = Agent::builder(ReplayModel::new(recorded)).build().unwrap();

    assert_eq!(replay.run("Hello").await.unwrap().output, "Hi!");
    let error = replay.run("Hello").await.unwrap_err();

    assert_eq!(
        diverged(error),
        "request 2 diverges from the recording: the recording has only 1 response(s)"
    );
}

#[tokio::test]
async fn a_partial_result_carries_a_trajectory_too() {
    let model = ScriptedModel::new(script());
    let error = Agent::builder(model)
        .system(SYSTEM)
        .toolbox(Arc::new(Shop::default()))
        .failure_mode(ToolFailureMode::Propagate)
        .build()
        .unwrap()
        .run("Pay for my order")
        .await
        .unwrap_err();

    let trajectory = &error.partial().trajectory;
    assert_eq!(trajectory.len(), 1);
    let json = serde_json::to_string(trajectory).unwrap();
    assert_eq!(
        &serde_json::from_str::<Trajectory>(&json).unwrap(),
        trajectory
    );
    assert!(!json.contains("hunter2"));
}
