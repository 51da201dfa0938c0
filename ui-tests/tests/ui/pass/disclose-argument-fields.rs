use reticent::{Disclose, Disclosure};

#[derive(Debug, thiserror::Error)]
#[error("query failed on postgres://app:hunter2@db.internal/customers")]
struct DbError;

#[derive(Debug)]
struct Range {
    min: u32,
    max: u32,
}

#[derive(Debug, thiserror::Error, Disclose)]
enum CustomerError {
    #[error("no customer {0}; customer ids look like C-1042")]
    #[disclose(argument)]
    NotFound(String),
    #[error("page {0} is out of range")]
    #[disclose(argument)]
    Page(u32),
    #[error("unknown fields {0:?}")]
    #[disclose(argument)]
    UnknownFields(Vec<String>),
    #[error("the limit must be from {} to {}", .0.min, .0.max)]
    #[disclose(argument)]
    Limit(Range),
    /// Not the model's fault: the source stays with the caller.
    #[error("customer database unavailable")]
    Database(#[source] DbError),
}

/// A whole argument struct of plain fields.
#[derive(Debug, thiserror::Error, Disclose)]
#[error("`{field}` must be {rule}")]
#[disclose(argument)]
struct InvalidField {
    field: &'static str,
    rule: String,
}

fn main() {
    assert_eq!(
        CustomerError::NotFound("x".into()).disclosure(),
        Disclosure::Argument
    );
    assert_eq!(CustomerError::Page(9).disclosure(), Disclosure::Argument);
    assert_eq!(
        CustomerError::UnknownFields(vec!["a".into()]).disclosure(),
        Disclosure::Argument
    );
    let limit = CustomerError::Limit(Range { min: 1, max: 100 });
    assert_eq!(limit.disclosure(), Disclosure::Argument);
    assert_eq!(limit.to_string(), "the limit must be from 1 to 100");
    assert_eq!(
        CustomerError::Database(DbError).disclosure(),
        Disclosure::Kind("CustomerError::Database")
    );
    let invalid = InvalidField {
        field: "limit",
        rule: "a number".into(),
    };
    assert_eq!(invalid.disclosure(), Disclosure::Argument);
}
