use std::error::Error;
use std::fmt;
use std::ops::Deref;

// Not an error type itself, but it derefs to one, and its `Display` is the error's.
#[derive(Debug)]
struct Opaque(Box<dyn Error + Send + Sync>);

impl Deref for Opaque {
    type Target = dyn Error + Send + Sync;
    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl fmt::Display for Opaque {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum CustomerError {
    #[error("bad customer reference: {0}")]
    #[disclose(argument)]
    BadRef(Opaque),
}

fn main() {}
