#[derive(Debug)]
struct DbError {
    dsn: String,
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("query failed")
    }
}

impl std::error::Error for DbError {}

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum CustomerError {
    #[error("bad customer reference: {0:?}")]
    #[disclose(argument)]
    BadRef(DbError),
}

fn main() {}
