//! The service the `restate` task test starts, kills and starts again: an MCP server (over
//! streamable HTTP) whose `#[tool(task)]` calls are Restate workflows, and the Restate endpoint
//! that runs them, in one process. What the tools do and every failure the server reports
//! (with its whole error) are appended to files in the state folder, outside the process.
//!
//! ```text
//! restate_tasks --port RESTATE_PORT --dir STATE_DIR --mcp-port PORT --ingress URL
//! ```
//!
//! An export does not finish while the file `STATE_DIR/hold-export` exists.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use restate_sdk::prelude::*;
use reticent::mcp::rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use reticent::mcp::{McpServer, TaskWorkflow};
use reticent_tests::restate_tasks::{CANARY, HOLD};
use reticent_tests::service::{self, append};

#[derive(Debug, thiserror::Error)]
#[error("the export store refused the upload to {0}")]
struct StoreError(String);

/// The exports, counting what they do in a file.
struct Exports {
    dir: PathBuf,
}

#[reticent::tools]
impl Exports {
    /// Export the ledger; takes a while.
    #[tool(task, read_only)]
    async fn export_ledger(&self, rows: u32) -> String {
        append(&self.dir, "exports.log", "started");
        while self.dir.join(HOLD).exists() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        append(&self.dir, "exports.log", "done");
        format!("exported {rows} rows")
    }

    /// Export to the store, which refuses the upload.
    #[tool(task)]
    async fn export_to_store(&self) -> Result<String, StoreError> {
        Err(StoreError(CANARY.to_owned()))
    }
}

fn arg(args: &[String], name: &str) -> String {
    service::arg(
        args,
        name,
        "restate_tasks --port RESTATE_PORT --dir STATE_DIR --mcp-port PORT --ingress URL",
    )
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let port = |name| -> u16 { arg(&args, name).parse().expect("a port number") };
    let (mcp_port, restate_port) = (port("--mcp-port"), port("--port"));
    let dir = PathBuf::from(arg(&args, "--dir"));
    let failures = dir.clone();
    let server = McpServer::builder()
        .name("exports")
        .toolbox(Arc::new(Exports { dir }))
        .durable_tasks(arg(&args, "--ingress"))
        .on_failure(move |failure| append(&failures, "failures.log", &failure.error_chain()))
        .build()
        .expect("the tools are valid");
    let endpoint = Endpoint::builder().bind(TaskWorkflow::new(&server)).build();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", mcp_port))
        .await
        .expect("the MCP port is free");
    let mcp = server.serve_http(listener, StreamableHttpServerConfig::default());
    let restate = HttpServer::new(endpoint).listen_and_serve(([127, 0, 0, 1], restate_port).into());
    let (served, ()) = tokio::join!(mcp, restate);
    served.expect("the MCP server serves");
}
