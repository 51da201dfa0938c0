use std::fmt;
use std::ops::Deref;

use reticent::{Disclose, Disclosure};

#[derive(Debug, thiserror::Error)]
#[error("query failed on postgres://app:hunter2@db.internal/customers")]
struct DbError;

#[derive(Debug)]
struct Range {
    min: u32,
    max: u32,
}

/// Derefs to something that is not an error: an argument message may format it.
#[derive(Debug)]
struct Name(String);

impl Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
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
    #[error("no team named {0}")]
    #[disclose(argument)]
    Team(Name),
    #[error("`{0}` is not a field")]
    #[disclose(argument)]
    Field(&'static str),
    #[error("{0} is not a region")]
    #[disclose(argument)]
    Region(Box<str>),
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
    let team = CustomerError::Team(Name("ops".into()));
    assert_eq!(team.disclosure(), Disclosure::Argument);
    assert_eq!(team.to_string(), "no team named ops");
    assert_eq!(
        CustomerError::Field("x").disclosure(),
        Disclosure::Argument
    );
    assert_eq!(
        CustomerError::Region("mars".into()).disclosure(),
        Disclosure::Argument
    );
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
