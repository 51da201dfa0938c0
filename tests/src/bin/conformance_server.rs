//! The server the MCP conformance suite's server scenarios test
//! ([`reticent_tests::mcp::conformance::server`]), over streamable HTTP on loopback.
//!
//! ```text
//! conformance_server [PORT]    # prints its URL, http://127.0.0.1:PORT/mcp, then serves
//! ```
//!
//! With no port (or 0) it takes a free one. It serves until it is killed.

use std::io::Write as _;

use reticent::mcp::rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use reticent_tests::mcp::conformance;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = match std::env::args().nth(1) {
        Some(port) => port.parse().map_err(|_| format!("not a port: {port}"))?,
        None => 0,
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let address = listener.local_addr()?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "http://{address}/mcp")?;
    stdout.flush()?;
    conformance::server()
        .serve_http(listener, StreamableHttpServerConfig::default())
        .await?;
    Ok(())
}
