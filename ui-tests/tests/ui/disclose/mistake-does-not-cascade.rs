use reticent::{Disclose, Disclosure};

#[derive(Debug, thiserror::Error, Disclose)]
enum OrderError {
    #[error("no such order")]
    #[disclose(kind = "")]
    NotFound,
}

fn main() {
    // The `Disclose` impl still exists: only the empty kind is reported.
    let _: Disclosure = OrderError::NotFound.disclosure();
}
