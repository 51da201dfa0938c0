#[derive(Debug, serde::Serialize, thiserror::Error)]
#[error("cannot reach {dsn}")]
struct DbError {
    dsn: String,
}

type Outcome<T> = Result<T, DbError>;

struct Shop;

#[reticent::tools]
impl Shop {
    /// Look up an order.
    #[tool]
    async fn lookup_order(&self, order_id: String) -> Outcome<Outcome<String>> {
        Ok(Ok(order_id))
    }
}

fn main() {}
