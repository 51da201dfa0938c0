//! `.require(tool, prerequisite)` refuses `tool` unless `prerequisite` succeeded earlier in the
//! same run; a failed prerequisite never counts. `build()` refuses rules that name unknown
//! tools, and duplicate tool names.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use reticent::{
    Agent, BuildError, ModelResponse, ScriptedModel, StopReason, ToolCall, ToolResult,
    failures::PrerequisiteNotMet,
};
use reticent_tests::transcript::{last_tool_result, shown};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
#[error("gateway returned 503")]
struct GatewayError;

/// A shop whose card gateway can be switched off, counting shipments.
#[derive(Default)]
struct Shop {
    gateway_down: AtomicBool,
    shipped: AtomicUsize,
}

impl Shop {
    fn with_gateway_down() -> Arc<Self> {
        let shop = Self::default();
        shop.gateway_down.store(true, Ordering::SeqCst);
        Arc::new(shop)
    }
}

#[reticent::tools]
impl Shop {
    /// Charge the customer's card.
    #[tool]
    fn charge_card(&self, amount_cents: u64) -> Result<String, GatewayError> {
        if self.gateway_down.swap(false, Ordering::SeqCst) {
            Err(GatewayError)
        } else {
            Ok(format!("charged {amount_cents} cents"))
        }
    }

    /// Check the delivery address.
    #[tool(read_only)]
    fn verify_address(&self, order_id: String) -> String {
        format!("{order_id}: address ok")
    }

    /// Ship an order.
    #[tool(destructive)]
    fn ship_order(&self, order_id: String) -> String {
        self.shipped.fetch_add(1, Ordering::SeqCst);
        format!("{order_id} shipped")
    }
}

fn charge(id: &str) -> ToolCall {
    ToolCall::new(id, "charge_card", json!({"amount_cents": 4200}))
}

fn ship(id: &str) -> ToolCall {
    ToolCall::new(id, "ship_order", json!({"order_id": "ORD-1042"}))
}

fn verify(id: &str) -> ToolCall {
    ToolCall::new(id, "verify_address", json!({"order_id": "ORD-1042"}))
}

fn one(call: ToolCall) -> ModelResponse {
    ModelResponse::tool_calls(vec![call])
}

const REFUSED: &str = "Tool 'ship_order' was refused: it requires a successful call of \
     'charge_card' earlier in this conversation";

fn agent(model: &ScriptedModel, shop: &Arc<Shop>) -> Agent {
    Agent::builder(model.clone())
        .toolbox(Arc::clone(shop))
        .require("ship_order", "charge_card")
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_tool_is_refused_until_its_prerequisite_succeeded() {
    let model = ScriptedModel::new(vec![
        one(ship("c1")),
        one(charge("c2")),
        one(ship("c3")),
        ModelResponse::text("Charged and shipped."),
    ]);
    let shop = Arc::new(Shop::default());

    let result = agent(&model, &shop).run("Ship ORD-1042").await.unwrap();

    let requests = model.requests();
    assert_eq!(
        last_tool_result(&requests[1]),
        &ToolResult {
            call_id: "c1".into(),
            name: "ship_order".into(),
            content: REFUSED.into(),
            is_error: true,
        }
    );
    assert_eq!(
        last_tool_result(&requests[3]),
        &ToolResult {
            call_id: "c3".into(),
            name: "ship_order".into(),
            content: "ORD-1042 shipped".into(),
            is_error: false,
        }
    );
    assert_eq!(shop.shipped.load(Ordering::SeqCst), 1);
    assert_eq!(result.stop_reason, StopReason::Completed);

    let failure = &result.tool_failures[0];
    assert_eq!(failure.call_id, "c1");
    assert_eq!(failure.kind, "prerequisite");
    assert_eq!(failure.shown_to_model, REFUSED);
    let refused = failure.error.downcast_ref::<PrerequisiteNotMet>().unwrap();
    assert_eq!(
        (refused.tool.as_str(), refused.prerequisite.as_str()),
        ("ship_order", "charge_card")
    );
    assert_eq!(
        failure.error.to_string(),
        "`ship_order` requires a successful `charge_card` earlier in the run"
    );
}

#[tokio::test]
async fn a_failed_prerequisite_never_counts() {
    let model = ScriptedModel::new(vec![
        one(charge("c1")),
        one(ship("c2")),
        one(charge("c3")),
        one(ship("c4")),
        ModelResponse::text("Shipped after the second charge."),
    ]);
    let shop = Shop::with_gateway_down();

    let result = agent(&model, &shop).run("Ship ORD-1042").await.unwrap();

    let shown = shown(&result.messages);
    assert_eq!(
        shown,
        [
            ("c1", "Tool 'charge_card' failed with GatewayError"),
            ("c2", REFUSED),
            ("c3", "charged 4200 cents"),
            ("c4", "ORD-1042 shipped"),
        ]
    );
    assert_eq!(shop.shipped.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_prerequisite_called_in_the_same_turn_has_not_succeeded_earlier() {
    // The calls of one turn run concurrently: the charge is not "earlier" than the shipment.
    let model = ScriptedModel::new(vec![
        ModelResponse::tool_calls(vec![charge("c1"), ship("c2")]),
        one(ship("c3")),
        ModelResponse::text("Shipped."),
    ]);
    let shop = Arc::new(Shop::default());

    let result = agent(&model, &shop).run("Ship ORD-1042").await.unwrap();

    let shown = shown(&result.messages);
    assert_eq!(
        shown,
        [
            ("c1", "charged 4200 cents"),
            ("c2", REFUSED),
            ("c3", "ORD-1042 shipped"),
        ]
    );
}

#[tokio::test]
async fn every_missing_prerequisite_is_named() {
    let model = ScriptedModel::new(vec![
        one(ship("c1")),
        one(verify("c2")),
        one(ship("c3")),
        one(charge("c4")),
        one(ship("c5")),
        ModelResponse::text("Shipped."),
    ]);
    let shop = Arc::new(Shop::default());
    let agent = Agent::builder(model.clone())
        .toolbox(Arc::clone(&shop))
        .require("ship_order", "charge_card")
        .require("ship_order", "verify_address")
        .build()
        .unwrap();

    agent.run("Ship ORD-1042").await.unwrap();

    let requests = model.requests();
    assert_eq!(
        last_tool_result(&requests[1]).content,
        "Tool 'ship_order' was refused: it requires a successful call of 'charge_card' and \
         'verify_address' earlier in this conversation"
    );
    assert_eq!(last_tool_result(&requests[3]).content, REFUSED);
    assert_eq!(last_tool_result(&requests[5]).content, "ORD-1042 shipped");
}

#[tokio::test]
async fn prerequisites_hold_per_run() {
    let model = ScriptedModel::new(vec![
        one(charge("c1")),
        one(ship("c2")),
        ModelResponse::text("Shipped."),
        // The second run.
        one(ship("c1")),
        ModelResponse::text("I need to charge first."),
    ]);
    let shop = Arc::new(Shop::default());
    let agent = agent(&model, &shop);

    agent.run("Ship ORD-1042").await.unwrap();
    let second = agent.run("Ship ORD-1042 again").await.unwrap();

    assert_eq!(second.tool_failures.len(), 1);
    assert_eq!(second.tool_failures[0].kind, "prerequisite");
    assert_eq!(shop.shipped.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_rule_naming_an_unknown_tool_is_refused() {
    let error = Agent::builder(ScriptedModel::default())
        .toolbox(Arc::new(Shop::default()))
        .require("ship_order", "charge_cart")
        .build()
        .unwrap_err();

    assert_eq!(
        error.to_string(),
        "require(\"ship_order\", \"charge_cart\") names the tool `charge_cart`, which is not \
         registered; the tools are: charge_card, verify_address, ship_order"
    );
    let BuildError::UnknownTool { name, rule, known } = error else {
        panic!("expected UnknownTool, got {error:?}");
    };
    assert_eq!(name, "charge_cart");
    assert_eq!(rule, r#"require("ship_order", "charge_cart")"#);
    assert_eq!(known, ["charge_card", "verify_address", "ship_order"]);

    let error = Agent::builder(ScriptedModel::default())
        .toolbox(Arc::new(Shop::default()))
        .require("refund_order", "charge_card")
        .build()
        .unwrap_err();
    assert!(
        matches!(&error, BuildError::UnknownTool { name, .. } if name == "refund_order"),
        "{error:?}"
    );

    let error = Agent::builder(ScriptedModel::default())
        .require("ship_order", "charge_card")
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "require(\"ship_order\", \"charge_card\") names the tool `ship_order`, which is not \
         registered; no tools are registered"
    );
}

/// Ship an order (a second tool of the same name).
#[reticent::tool]
fn ship_order(order_id: String) -> String {
    order_id
}

#[tokio::test]
async fn duplicate_tool_names_are_refused() {
    let error = Agent::builder(ScriptedModel::default())
        .toolbox(Arc::new(Shop::default()))
        .tool(ShipOrder)
        .build()
        .unwrap_err();

    assert_eq!(
        error,
        BuildError::DuplicateTool {
            name: "ship_order".into()
        }
    );
    assert_eq!(
        error.to_string(),
        "two tools are named `ship_order`; tool names must be unique"
    );

    let error = Agent::builder(ScriptedModel::default())
        .tool(ShipOrder)
        .tool(ShipOrder)
        .build()
        .unwrap_err();
    assert!(matches!(error, BuildError::DuplicateTool { .. }));
}
