#[derive(Debug, serde::Serialize, thiserror::Error)]
#[error("cannot reach {dsn}")]
struct DbError {
    dsn: String,
}

/// Look up an order.
#[reticent::tool]
fn lookup_order(order_id: String) -> Result<Result<String, DbError>, std::io::Error> {
    Ok(Ok(order_id))
}

fn main() {}
