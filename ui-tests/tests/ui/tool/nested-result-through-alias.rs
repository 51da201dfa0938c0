#[derive(Debug, serde::Serialize, thiserror::Error)]
#[error("cannot reach {dsn}")]
struct DbError {
    dsn: String,
}

type Lookup = Result<String, DbError>;

/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: String) -> std::io::Result<Lookup> {
    Ok(Ok(order_id))
}

fn main() {}
