//! The bytes an MCP client receives when it makes a check's calls on an
//! [`McpServer`](crate::mcp::McpServer) serving the check's tools: rmcp's own client, on one
//! end of an in-memory duplex whose reads are copied.

use std::fmt;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RoleServer, RunningService};
use rmcp::{ClientHandler, ServiceExt};
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

/// An rmcp client connected to an [`McpServer`] over an in-memory duplex, and every byte the
/// client received: what [`LeakCheck`](super::LeakCheck) reads, and what a test of your own
/// server's answers can read too.
///
/// The client is `C`: `()`, which declares no capabilities, unless made with
/// [`connect_as`](Self::connect_as) (for example a `ClientConfig` that declares MCP's tasks
/// extension, to follow the tasks of `#[tool(task)]` tools).
pub struct McpConnection<C: ClientHandler = ()> {
    /// The client, ready to list and call tools.
    pub client: RunningService<RoleClient, C>,
    received: Arc<Mutex<Vec<u8>>>,
    /// Dropping the server's side closes the connection.
    _server: RunningService<RoleServer, McpServer>,
}

impl<C: ClientHandler> fmt::Debug for McpConnection<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpConnection")
            .field("received_bytes", &self.received_bytes().len())
            .finish_non_exhaustive()
    }
}

impl McpConnection {
    /// Serves `server` on one end of an in-memory duplex and connects rmcp's client to the
    /// other; `Err` says which side could not complete the handshake.
    pub async fn connect(server: McpServer) -> Result<Self, String> {
        Self::connect_as(server, ()).await
    }
}

impl<C: ClientHandler> McpConnection<C> {
    /// [`connect`](McpConnection::connect), with `client` as the client.
    pub async fn connect_as(server: McpServer, client: C) -> Result<Self, String> {
        let (server_end, client_end) = tokio::io::duplex(64 * 1024);
        let (read, write) = tokio::io::split(client_end);
        let received = Arc::new(Mutex::new(Vec::new()));
        let tap = Tap {
            inner: read,
            seen: Arc::clone(&received),
        };
        let (server, client) = tokio::join!(server.serve(server_end), client.serve((tap, write)));
        Ok(Self {
            client: client.map_err(|e| format!("the client did not connect: {e}"))?,
            received,
            _server: server.map_err(|e| format!("the server did not start: {e}"))?,
        })
    }

    /// Every byte the server sent the client so far.
    pub fn received_bytes(&self) -> Vec<u8> {
        self.received
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Every byte the server sent the client so far, as text.
    ///
    /// # Panics
    ///
    /// When the bytes are not UTF-8, which JSON-RPC always is.
    #[track_caller]
    pub fn received(&self) -> String {
        String::from_utf8(self.received_bytes()).expect("the MCP wire is UTF-8")
    }
}

/// Serves `tools`, makes `calls` with a client, and returns every byte the client received
/// (bytes that are not UTF-8 replaced, so that the search still runs). A call the server
/// answers with an error is kept as received; a connection that cannot be made is an error.
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
    let connection = McpConnection::connect(server).await?;
    for (tool, arguments) in calls {
        let mut params = CallToolRequestParams::new(tool.clone());
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments.clone());
        }
        // a refused call's answer is in the bytes already
        let _ = connection.client.call_tool(params).await;
    }
    Ok(String::from_utf8_lossy(&connection.received_bytes()).into_owned())
}
