//! Durable runs on a real Restate server: the `restate_desk` service (`src/bin/restate_desk.rs`)
//! is started, killed and started again; approvals wait on durable promises, and a run survives
//! its service's crash. The `restate_tasks` service's MCP tasks survive its restart too.
//!
//! One test binary, a module per concern, and the server and the desk's processes in
//! [`support`]. The server is found through `RETICENT_RESTATE_SERVER`, else installed once into
//! `target/restate-server`; when it cannot be, or `RETICENT_SKIP_RESTATE=1`, the tests skip,
//! loudly.
#![forbid(unsafe_code)]

mod approval;
mod crash;
mod support;
mod task;
