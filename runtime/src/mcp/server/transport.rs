//! Serving an [`McpServer`]: stdio, streamable HTTP, or any transport rmcp takes.

use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::service::{RoleServer, RunningService};
use rmcp::transport::IntoTransport;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use super::session::{Session, Watched};
use super::{HttpSessions, McpServer};
use crate::error::BoxError;

/// How long open connections get to close when an HTTP server shuts down.
const CLOSE_WITHIN: Duration = Duration::from_secs(5);

/// Why a server could not serve a connection.
#[derive(Debug, thiserror::Error)]
#[error("{context}")]
pub struct ServeError {
    context: &'static str,
    #[source]
    source: BoxError,
}

impl ServeError {
    fn new(context: &'static str, source: impl Into<BoxError>) -> Self {
        Self {
            context,
            source: source.into(),
        }
    }
}

impl McpServer {
    /// Serves one connection on `transport`: anything rmcp can serve on, such as a pair of
    /// async reader and writer (`tokio::io::duplex` in tests) or a child process's pipes.
    ///
    /// Returns once the client's `initialize` handshake is done; the connection is served in
    /// the background until the client disconnects or the returned service is cancelled or
    /// dropped. Wait for the end with [`RunningService::waiting`].
    pub async fn serve<T, E, A>(
        self,
        transport: T,
    ) -> Result<RunningService<RoleServer, Self>, ServeError>
    where
        T: IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        // When the client closes its end, the calls still running are stopped at once.
        let transport = Watched {
            inner: transport.into_transport(),
            closed: self.session.closed.clone(),
        };
        rmcp::ServiceExt::serve(self, transport)
            .await
            .map_err(|e| ServeError::new("the MCP connection could not be initialized", e))
    }

    /// Serves the client on this process's stdin and stdout until the client closes stdin.
    ///
    /// This is how desktop and IDE clients run a server they start themselves. Nothing else
    /// may write to stdout: log to stderr.
    ///
    /// When the client closes stdin, calls still running are cancelled (their tools' tokens
    /// too) and this returns at once; clients wait only a few seconds for the server to exit
    /// before they kill it. A sync tool abandoned this way keeps its thread on tokio's
    /// blocking pool until it returns, and a tokio runtime that is dropped waits for those
    /// threads: end `main` with `runtime.shutdown_background()` (or `shutdown_timeout`) rather
    /// than letting `#[tokio::main]` drop the runtime, as the `mcp_server` example does.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let running = self.serve(rmcp::transport::stdio()).await?;
        running
            .waiting()
            .await
            .map_err(|e| ServeError::new("the MCP server task failed", e))?;
        Ok(())
    }

    /// The server as rmcp's streamable HTTP tower service, [`StreamableHttpService`], to mount
    /// in a router of your own (for example with axum's `Router::nest_service("/mcp", ..)`).
    ///
    /// Sessions are kept in memory ([`HttpSessions`]: rmcp's `LocalSessionManager`, with the
    /// window of [`sse_polling`](super::McpServerBuilder::sse_polling) when it is set).
    /// `config` sets the allowed hosts (loopback only by default), stateful or stateless mode
    /// and the shutdown token; when that token is cancelled, the calls still running are
    /// cancelled at once.
    ///
    /// Set `TCP_NODELAY` on every connection the server accepts
    /// ([`TcpStream::set_nodelay`](tokio::net::TcpStream::set_nodelay)), as
    /// [`serve_http`](Self::serve_http) does. A stateful session's answers
    /// are event streams written in small pieces, and without it Nagle's algorithm holds
    /// each answer's last piece until the client's delayed acknowledgement: about 40 ms a
    /// call on Linux instead of a fraction of a millisecond.
    pub fn http_service(
        &self,
        config: StreamableHttpServerConfig,
    ) -> StreamableHttpService<McpServer, HttpSessions> {
        let inner = Arc::clone(&self.inner);
        let shutdown = config.cancellation_token.clone();
        // Polling closes a session's streams; a stateless server has none.
        let polling = self.inner.polling.filter(|_| config.legacy_session_mode);
        StreamableHttpService::new(
            move || {
                Ok(McpServer::with_session(
                    &inner,
                    Session::ending_with(&shutdown),
                ))
            },
            Arc::new(HttpSessions::new(polling)),
            config,
        )
    }

    /// Serves streamable HTTP (HTTP/1.1) on `listener`, at every path, until
    /// `config.cancellation_token` is cancelled; then it stops accepting connections, cancels
    /// the calls still running, closes open connections gracefully and returns once they are
    /// closed (connections still open after five seconds are dropped).
    ///
    /// ```no_run
    /// use reticent::mcp::McpServer;
    /// use reticent::mcp::rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # /// Add two numbers.
    /// # #[reticent::tool]
    /// # fn add(a: i64, b: i64) -> i64 { a + b }
    /// let server = McpServer::builder().tool(Add).build()?;
    ///
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// server
    ///     .serve_http(listener, StreamableHttpServerConfig::default())
    ///     .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn serve_http(
        self,
        listener: TcpListener,
        config: StreamableHttpServerConfig,
    ) -> Result<(), ServeError> {
        let shutdown = config.cancellation_token.clone();
        let service = TowerToHyperService::new(self.http_service(config));
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        // See `http_service`: without it, a stateful call takes 40 ms.
                        if let Err(error) = stream.set_nodelay(true) {
                            tracing::debug!(%error, "could not set TCP_NODELAY on an MCP HTTP connection");
                        }
                        stream
                    }
                    Err(error) => {
                        // Out of file descriptors and the like: wait, and keep serving.
                        tracing::warn!(%error, "could not accept an MCP HTTP connection");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                },
                // Connections that ended, so the set does not grow.
                Some(_) = connections.join_next(), if !connections.is_empty() => continue,
                () = shutdown.cancelled() => break,
            };
            let service = service.clone();
            let shutdown = shutdown.clone();
            connections.spawn(async move {
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service);
                let mut connection = std::pin::pin!(connection);
                let result = tokio::select! {
                    result = connection.as_mut() => result,
                    () = shutdown.cancelled() => {
                        connection.as_mut().graceful_shutdown();
                        connection.await
                    }
                };
                if let Err(error) = result {
                    tracing::debug!(%error, "an MCP HTTP connection ended with an error");
                }
            });
        }
        drop(listener);
        let closed = async { while connections.join_next().await.is_some() {} };
        if tokio::time::timeout(CLOSE_WITHIN, closed).await.is_err() {
            tracing::warn!(
                open = connections.len(),
                "MCP HTTP connections still open at shutdown were dropped"
            );
        }
        Ok(())
    }
}
