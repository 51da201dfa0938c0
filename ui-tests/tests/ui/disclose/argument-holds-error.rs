#[derive(Debug, thiserror::Error)]
#[error("query failed on postgres://app:hunter2@db.internal/customers")]
struct DbError;

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum CustomerError {
    #[error("bad customer reference: {0}")]
    #[disclose(argument)]
    BadRef(DbError),
}

fn main() {}
