#[derive(Debug, thiserror::Error)]
#[error("cannot open /srv/app/secrets.db")]
struct StoreError;

#[derive(Debug, thiserror::Error, reticent::Disclose)]
#[error("`{field}` is invalid: {reason}")]
#[disclose(argument)]
struct InvalidField {
    field: String,
    reason: StoreError,
}

fn main() {}
