//! Integration tests live in `tests/`. What the tests share with the test programs in
//! `src/bin/` lives here.

/// What the `restate_desk` service and the `restate_*` tests that drive it agree on.
pub mod restate_desk {
    /// The workflow's name.
    pub const WORKFLOW: &str = "Desk";

    /// The secret the desk's failing charge carries in its error: never in Restate's journal,
    /// nor in a run's outcome.
    pub const CANARY: &str = "CANARY-restate-9d41-postgres://pay:s3cr3t@10.0.0.9/ledger";

    /// While this file exists in the desk's state folder, a transfer does not finish.
    pub const HOLD_TRANSFER: &str = "hold-transfer";
}
