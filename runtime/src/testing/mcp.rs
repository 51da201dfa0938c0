//! The bytes an MCP client receives when it makes a check's calls on an
//! [`McpServer`](crate::mcp::McpServer) serving the check's tools: rmcp's own client, on one
//! end of an in-memory duplex whose reads are copied.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

use crate::mcp::McpServer;
use crate::tool::Tool;

/// A reader that keeps a copy of everything read through it.
struct Tap<R> {
    inner: R,
    seen: Arc<Mutex<Vec<u8>>>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Tap<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = &buf.filled()[before..];
        self.seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .extend_from_slice(read);
        poll
    }
}

/// Serves `tools`, makes `calls` with a client, and returns every byte the client received.
/// A call the server answers with a protocol error is kept as received; a connection that
/// cannot be made is an error.
pub(super) async fn received(
    tools: &[Arc<dyn Tool>],
    calls: &[(String, Value)],
) -> Result<String, String> {
    let mut server = McpServer::builder();
    for tool in tools {
        server = server.tool_arc(Arc::clone(tool));
    }
    let server = server
        .build()
        .map_err(|e| format!("the server could not be built: {e}"))?;
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(client_end);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let tap = Tap {
        inner: read,
        seen: Arc::clone(&seen),
    };
    let (server, client) = tokio::join!(server.serve(server_end), ().serve((tap, write)));
    let server = server.map_err(|e| format!("the server did not start: {e}"))?;
    let client = client.map_err(|e| format!("the client did not connect: {e}"))?;
    for (tool, arguments) in calls {
        let mut params = CallToolRequestParams::new(tool.clone());
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments.clone());
        }
        // a refused call's answer is in the bytes already
        let _ = client.call_tool(params).await;
    }
    drop(client);
    drop(server);
    let bytes = seen
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone();
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
