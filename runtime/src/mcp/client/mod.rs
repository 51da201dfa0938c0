//! [`McpClient`]: an MCP server's tools, for an agent. See the [module docs](crate::mcp).

mod builder;
mod child;
mod error;
mod http;
mod notes;
pub mod oauth;
mod remote_tool;
mod stdio;
mod task;
mod unreadable;

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ServerPeerInfo;
use rmcp::service::{Peer, RoleClient, RunningService};

pub use builder::McpClientBuilder;
use child::ChildProcess;
pub use error::{McpCallError, McpClientError, McpToolError};
use remote_tool::{Connection, RemoteTool};

use crate::tool::Tool;

/// How long [`McpClient::close`] gives the connection, then the server's process, to end.
const CLOSE_GRACE: Duration = Duration::from_secs(3);

/// A connection to one MCP server, whose tools an agent can call.
///
/// ```no_run
/// use reticent::mcp::McpClient;
/// use reticent::{Agent, ScriptedModel};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let model = ScriptedModel::new(vec![]);
/// let mut command = tokio::process::Command::new("uvx");
/// command.arg("mcp-server-time");
/// let time = McpClient::builder().prefix("time_").stdio(command).await?;
/// let agent = Agent::builder(model).tools(time.tools().await?).build()?;
/// let result = agent.run("What time is it in Tokyo?").await?;
/// # let _ = result;
/// # Ok(())
/// # }
/// ```
///
/// The client owns the connection: keep it alive as long as its tools are used. Dropping it
/// closes the connection (and kills a server it started); its tools then fail with
/// [`McpCallError::Closed`].
pub struct McpClient {
    /// `None` only inside [`McpClient::close`].
    service: Option<RunningService<RoleClient, notes::Listener>>,
    connection: Arc<Connection>,
    /// Dropped with the client: the process is killed.
    process: Option<Arc<ChildProcess>>,
    naming: Naming,
    /// How long [`tools`](Self::tools) waits for the list.
    list_timeout: Duration,
}

/// How the server's tools are named here.
#[derive(Clone, Debug, Default)]
pub(crate) struct Naming {
    prefix: String,
    /// `(remote, local)`.
    renames: Vec<(String, String)>,
    excluded: Vec<String>,
}

impl McpClient {
    /// Starts building a client.
    pub fn builder() -> McpClientBuilder {
        McpClientBuilder::new()
    }

    /// Starts `command` and connects to it over stdio, with the default settings (see
    /// [`McpClientBuilder::stdio`]).
    pub async fn stdio(
        command: impl Into<tokio::process::Command>,
    ) -> Result<Self, McpClientError> {
        Self::builder().stdio(command).await
    }

    /// Connects to the server at `url` over streamable HTTP, with the default settings (see
    /// [`McpClientBuilder::http`]).
    pub async fn http(url: impl Into<String>) -> Result<Self, McpClientError> {
        Self::builder().http(url).await
    }

    /// Lists the server's tools (every page) and returns them as tools for an agent:
    /// `Agent::builder(model).tools(client.tools().await?)`.
    ///
    /// Each keeps the server's description, input schema and annotations (MCP's defaults for
    /// absent hints: destructive and open-world). A tool whose name, with the prefix, is not
    /// a valid tool name is refused with [`McpClientError::InvalidToolName`], naming it and
    /// the fix ([`rename`](McpClientBuilder::rename) or
    /// [`exclude`](McpClientBuilder::exclude)), rather than left out: an agent that silently
    /// lacks a tool is harder to debug than one that does not build. Each input schema is
    /// compiled here, once; one the validator cannot compile is refused the same way.
    ///
    /// The server's list is read anew on every call (servers can change it), within the
    /// client's [`list_timeout`](McpClientBuilder::list_timeout) (30s unless set): a server
    /// that does not answer in time fails it with [`McpClientError::ListToolsTimedOut`], an
    /// answer that cannot be read with [`McpClientError::ListToolsUnreadable`].
    pub async fn tools(&self) -> Result<Vec<Arc<dyn Tool>>, McpClientError> {
        let server = || self.connection.server.to_string();
        let listing = self.connection.peer.list_all_tools();
        let listed = match tokio::time::timeout(self.list_timeout, listing).await {
            Ok(Ok(listed)) => listed,
            Ok(Err(source)) => {
                return Err(match self.connection.marker.reason(&source) {
                    Some(reason) => McpClientError::ListToolsUnreadable {
                        server: server(),
                        source: reason.into(),
                    },
                    None => McpClientError::ListTools {
                        server: server(),
                        source: Box::new(source),
                    },
                });
            }
            Err(_) => {
                return Err(McpClientError::ListToolsTimedOut {
                    server: server(),
                    timeout: self.list_timeout,
                });
            }
        };
        let known = || listed.iter().map(|t| t.name.to_string()).collect();
        let lists = |name: &str| listed.iter().any(|t| t.name == name);
        let naming = &self.naming;
        for (option, name) in naming
            .renames
            .iter()
            .map(|(remote, _)| ("rename", remote))
            .chain(naming.excluded.iter().map(|remote| ("exclude", remote)))
        {
            if !lists(name) {
                return Err(McpClientError::UnknownTool {
                    server: server(),
                    option,
                    name: name.clone(),
                    known: known(),
                });
            }
        }

        let mut names = HashSet::with_capacity(listed.len());
        let mut tools: Vec<Arc<dyn Tool>> = Vec::with_capacity(listed.len());
        for tool in listed.iter().cloned() {
            if naming.excluded.iter().any(|name| *name == tool.name) {
                continue;
            }
            let name = match naming
                .renames
                .iter()
                .find(|(remote, _)| *remote == tool.name)
            {
                Some((_, local)) => local.clone(),
                None => format!("{}{}", naming.prefix, tool.name),
            };
            if !crate::tool::is_valid_tool_name(&name) {
                return Err(McpClientError::InvalidToolName {
                    server: server(),
                    remote: tool.name.to_string(),
                    name,
                });
            }
            if !names.insert(name.clone()) {
                return Err(McpClientError::DuplicateTool {
                    server: server(),
                    name,
                });
            }
            tools.push(Arc::new(RemoteTool::new(tool, name, &self.connection)?));
        }
        Ok(tools)
    }

    /// What errors call the server (see [`McpClientBuilder::name`]).
    pub fn name(&self) -> &str {
        &self.connection.server
    }

    /// What the server said about itself when the connection was made: its name and
    /// version, the protocol version, its instructions.
    pub fn server_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.connection.peer.peer_info()
    }

    /// The process id of a server started with [`McpClientBuilder::stdio`].
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(|p| p.pid())
    }

    /// rmcp's handle on the connection, for what reticent does not wrap (resources, prompts).
    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.connection.peer
    }

    /// Closes the connection and waits for it to end: a server started over stdio has its
    /// stdin closed and a moment (3 seconds) to exit, then is killed. Dropping the client
    /// instead kills it at once.
    pub async fn close(mut self) {
        self.connection.closed.cancel();
        if let Some(mut service) = self.service.take() {
            let _ = service.close_with_timeout(CLOSE_GRACE).await;
        }
        if let Some(process) = self.process.take() {
            process.shut_down(CLOSE_GRACE).await;
        }
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        // Calls in flight end now, as `Disconnected`; later ones as `Closed`. Dropping the
        // service ends the connection; dropping the process kills it.
        self.connection.closed.cancel();
    }
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let connection = &*self.connection;
        f.debug_struct("McpClient")
            .field("name", &connection.server)
            .field("pid", &self.pid())
            .field("naming", &self.naming)
            .field("kind", &connection.kind)
            .field("include_error_message", &connection.include_error_message)
            .field("trusted_output", &connection.trusted_output)
            .field("timeout", &connection.timeout)
            .field("idle_timeout", &connection.idle_timeout)
            .field("list_timeout", &self.list_timeout)
            .finish_non_exhaustive()
    }
}
