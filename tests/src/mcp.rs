//! Serving tools over MCP in a test: an rmcp client connected to a server over an in-memory
//! duplex that keeps every byte the client received, and a failure hook that collects. Spans
//! are recorded with [`capture_spans`](crate::spans::capture_spans).

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use reticent::ToolFailure;
use reticent::mcp::McpServer;
use reticent::mcp::rmcp::ServiceExt;
use reticent::mcp::rmcp::model::CallToolResult;
use reticent::mcp::rmcp::service::{RoleClient, RoleServer, RunningService};
use tokio::io::{AsyncRead, ReadBuf};

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
        let read = buf.filled()[before..].to_vec();
        self.seen.lock().unwrap().extend_from_slice(&read);
        poll
    }
}

/// An rmcp client connected to a server, and everything it received on the wire.
#[allow(missing_debug_implementations)] // rmcp's running services are not `Debug`
pub struct Connection {
    /// The client, ready to list and call tools.
    pub client: RunningService<RoleClient, ()>,
    received: Arc<Mutex<Vec<u8>>>,
    /// Dropping the server's side closes the connection.
    _server: RunningService<RoleServer, McpServer>,
}

impl Connection {
    /// Every byte the server sent the client so far, as text.
    pub fn received(&self) -> String {
        String::from_utf8(self.received.lock().unwrap().clone()).expect("the wire is UTF-8")
    }
}

/// Serves `server` on one end of an in-memory duplex and connects rmcp's client to the other.
pub async fn connect(server: McpServer) -> Connection {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(client_end);
    let received = Arc::new(Mutex::new(Vec::new()));
    let tap = Tap {
        inner: read,
        seen: Arc::clone(&received),
    };
    let (server, client) = tokio::join!(server.serve(server_end), ().serve((tap, write)));
    Connection {
        client: client.expect("the client completes the handshake"),
        received,
        _server: server.expect("the server completes the handshake"),
    }
}

/// The text of a result's only content block.
pub fn text(result: &CallToolResult) -> &str {
    assert_eq!(result.content.len(), 1, "one content block: {result:?}");
    match result.content[0].as_text() {
        Some(text) => &text.text,
        None => panic!("expected text content, got {result:?}"),
    }
}

/// Failures a server reported through `on_failure`.
#[derive(Clone, Debug, Default)]
pub struct Failures(Arc<Mutex<Vec<ToolFailure>>>);

impl Failures {
    /// A hook for [`McpServerBuilder::on_failure`](reticent::mcp::McpServerBuilder::on_failure).
    pub fn hook(&self) -> impl Fn(&ToolFailure) + Send + Sync + 'static {
        let failures = Arc::clone(&self.0);
        move |failure| failures.lock().unwrap().push(failure.clone())
    }

    /// Every failure reported so far, in order.
    pub fn all(&self) -> Vec<ToolFailure> {
        self.0.lock().unwrap().clone()
    }

    /// The only failure reported.
    pub fn one(&self) -> ToolFailure {
        let all = self.all();
        assert_eq!(all.len(), 1, "expected one failure: {all:#?}");
        all.into_iter().next().unwrap()
    }
}
