use std::time::Duration;

use reticent::{Tool, ToolAnnotations};

/// Not this description.
#[reticent::tool(
    name = "delete-order",
    description = "Delete an order for good.",
    read_only = false,
    destructive,
    idempotent = true,
    open_world,
    timeout = "1m30s",
    max_output = "16KiB"
)]
fn delete_order(order_id: String) {
    let _ = order_id;
}

/// Look up an order.
#[reticent::tool(read_only, timeout = "250ms", max_output = "4096")]
fn lookup_order(order_id: String) -> String {
    order_id
}

/// No options at all.
#[reticent::tool()]
fn plain() {}

fn main() {
    let def = DeleteOrder.definition();
    assert_eq!(def.name, "delete-order");
    assert_eq!(def.description, "Delete an order for good.");
    assert_eq!(
        def.annotations,
        ToolAnnotations::new()
            .destructive(true)
            .idempotent(true)
            .open_world(true)
    );
    assert_eq!(DeleteOrder.timeout(), Some(Duration::from_secs(90)));
    assert!(LookupOrder.definition().annotations.read_only);
    assert_eq!(LookupOrder.timeout(), Some(Duration::from_millis(250)));
    assert_eq!(Plain.timeout(), None);
    assert_eq!(DeleteOrder.max_output(), Some(16 * 1024));
    assert_eq!(LookupOrder.max_output(), Some(4096));
    assert_eq!(Plain.max_output(), None);
    assert_eq!(Plain.definition().annotations, ToolAnnotations::default());
}
