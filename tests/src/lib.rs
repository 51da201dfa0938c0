//! The support code of reticent's integration tests: what the test binaries under `tests/`
//! share, and what they share with the test programs in `src/bin/`. Each module serves one
//! concern:
//!
//! - [`transcript`]: reading the messages of a run and the requests a model received;
//! - [`spans`]: recording the `tracing` spans a test makes, and the events in them, kept apart
//!   from every other test in the same process;
//! - [`mcp`]: an rmcp client connected to a server in memory, a failure hook that collects, the
//!   MCP Python SDK's virtual environment, the `mcp_server` example's binary, what the
//!   hostile server `hostile_mcp` (in `src/bin/`) answers, and the server and client the MCP
//!   conformance suite tests (`conformance_server`, `conformance_client`);
//! - [`provider`]: a scripted HTTP/1.1 server on loopback for the providers, the fixtures, and
//!   the streaming scenarios every provider must pass;
//! - [`conformance`]: how each provider's API spells an answer, for the conformance suite
//!   every provider passes;
//! - [`leak`]: the failing tools, strategies and checks of the leak property and the canary
//!   tests;
//! - [`shop`]: the tools of the approval, resume and step-executor tests, which count what they
//!   did;
//! - [`pattern`]: a `pattern` whose match cannot finish, tools that carry it, and a guard for a
//!   test whose check may stall its thread;
//! - [`llmock`]: the fault-injecting mock of the model APIs, run as a child process, with its
//!   journal of requests and its verdict on the client;
//! - [`restate_desk`]: what the `restate_desk` service and the `restate` tests agree on;
//! - [`restate_tasks`]: what the `restate_tasks` service and its `restate` test agree on;
//! - [`service`]: what the Restate services in `src/bin/` share: their arguments, and the
//!   files they count in.
#![warn(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    rust_2018_idioms
)]
#![forbid(unsafe_code)]

pub mod conformance;
pub mod leak;
pub mod llmock;
pub mod mcp;
pub mod pattern;
pub mod provider;
pub mod service;
pub mod shop;
pub mod spans;
pub mod transcript;

/// What the `restate_desk` service and the `restate` tests that drive it agree on.
pub mod restate_desk {
    /// The workflow's name.
    pub const WORKFLOW: &str = "Desk";

    /// The secret the desk's failing charge carries in its error: never in Restate's journal,
    /// nor in a run's outcome.
    pub const CANARY: &str = "CANARY-restate-9d41-postgres://pay:s3cr3t@10.0.0.9/ledger";

    /// While this file exists in the desk's state folder, a transfer does not finish.
    pub const HOLD_TRANSFER: &str = "hold-transfer";
}

/// What the `restate_tasks` service (an MCP server whose tasks are Restate workflows) and the
/// `restate` test that drives it agree on.
pub mod restate_tasks {
    /// The secret the failing export carries in its error: in no answer and never in
    /// Restate's journal, only in the server's own log of failures.
    pub const CANARY: &str = "CANARY-tasks-41c7-s3://exports:k3y@10.0.0.7/ledger";

    /// While this file exists in the service's state folder, an export does not finish.
    pub const HOLD: &str = "hold-export";
}
