use std::error::Error;
use std::fmt;

// Not an error type itself, but it lends one out, and its `Display` is the error's.
#[derive(Debug)]
struct Lent(std::io::Error);

impl AsRef<dyn Error + Send + Sync> for Lent {
    fn as_ref(&self) -> &(dyn Error + Send + Sync + 'static) {
        &self.0
    }
}

impl fmt::Display for Lent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum CustomerError {
    #[error("bad customer reference: {0}")]
    #[disclose(argument)]
    BadRef(Lent),
}

fn main() {}
