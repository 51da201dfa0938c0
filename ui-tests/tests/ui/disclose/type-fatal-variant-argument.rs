#[derive(Debug, thiserror::Error, reticent::Disclose)]
#[disclose(fatal)]
enum PolicyError {
    #[error("the policy engine is down")]
    EngineDown,
    #[error("amounts are in cents, like 1250")]
    #[disclose(argument)]
    BadAmount,
}

fn main() {}
