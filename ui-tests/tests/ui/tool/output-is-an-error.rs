#[derive(Debug, serde::Serialize, thiserror::Error)]
#[error("cannot reach {dsn}")]
struct DbError {
    dsn: String,
}

/// Check the database.
#[reticent::tool]
fn check_database() -> DbError {
    DbError { dsn: "postgres://db".into() }
}

fn main() {}
