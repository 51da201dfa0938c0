use reticent::{Disclose, Disclosure};

#[derive(Debug, thiserror::Error, Disclose)]
#[error("dates look like 2024-05-01")]
#[disclose(argument)]
struct BadDate;

#[derive(Debug, thiserror::Error, Disclose)]
#[error("the ledger at {0} is unreachable")]
#[disclose(kind = "LedgerDown")]
struct LedgerError(String);

#[derive(Debug, thiserror::Error, Disclose)]
#[error("quota exceeded")]
struct QuotaError;

#[derive(Debug, thiserror::Error, Disclose)]
#[disclose(argument)]
enum DateError {
    #[error("dates look like 2024-05-01")]
    Format,
    #[error("there is no day {0}")]
    Day(u8),
}

#[derive(Debug, thiserror::Error, Disclose)]
enum Never {}

fn main() {
    assert_eq!(BadDate.disclosure(), Disclosure::Argument);
    assert_eq!(
        LedgerError("db-1".into()).disclosure(),
        Disclosure::Kind("LedgerDown")
    );
    assert_eq!(QuotaError.disclosure(), Disclosure::Kind("QuotaError"));
    assert_eq!(DateError::Day(40).disclosure(), Disclosure::Argument);
    assert_eq!(DateError::Format.disclosure(), Disclosure::Argument);
    let _ = |never: &Never| never.disclosure();
}
