use reticent::Tool;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema)]
struct Receipt {
    refunded_cents: u64,
}

/// Refund a payment.
#[reticent::tool(title = "Refund a payment", destructive, needs_approval)]
fn refund(payment_id: String) -> Receipt {
    let _ = payment_id;
    Receipt { refunded_cents: 0 }
}

/// Count refunds.
#[reticent::tool(output_schema = false, read_only)]
fn count_refunds() -> u64 {
    0
}

/// Count payments, with the output schema written out as on.
#[reticent::tool(output_schema = true)]
fn count_payments() -> u64 {
    0
}

/// Export the ledger, which takes a while: served over MCP as a task.
#[reticent::tool(task, read_only)]
async fn export_ledger() -> String {
    String::new()
}

/// Export a page, written out as not a task.
#[reticent::tool(task = false)]
fn export_page() -> String {
    String::new()
}

fn main() {
    let refund = Refund.definition();
    assert_eq!(refund.title.as_deref(), Some("Refund a payment"));
    assert_eq!(refund.output_schema.as_ref().unwrap()["type"], "object");
    assert!(!refund.wraps_output());
    assert!(Refund.needs_approval());
    assert!(CountRefunds.definition().output_schema.is_none());
    assert!(!CountRefunds.needs_approval());
    assert!(CountPayments.definition().wraps_output());
    assert!(ExportLedger.definition().task);
    assert!(!ExportPage.definition().task);
    assert!(!Refund.definition().task);
}
