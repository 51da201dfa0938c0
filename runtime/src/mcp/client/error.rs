//! What can go wrong with an MCP server's tools: connecting and listing them
//! ([`McpClientError`]), a tool that reports a failure ([`McpToolError`]), and a call that
//! does not get a result ([`McpCallError`]).

use std::fmt;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceError;

use crate::error::{BoxError, Disclose, Disclosure};
use crate::render;

/// A name from a server, quoted and cut to a length a log line can hold.
fn quoted(name: &str) -> String {
    format!("{:?}", render::bounded(name, 2 * render::MAX_NAME_LEN))
}

/// Why a server could not be connected to, or its tools could not be listed or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpClientError {
    /// The server's program could not be started.
    #[error("could not start the MCP server {}", quoted(program))]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The HTTP client could not be set up (its TLS configuration).
    #[error("could not set up the HTTP client for the MCP server `{server}`: {reason}")]
    HttpClient {
        /// The server.
        server: String,
        /// Why.
        reason: String,
    },
    /// The server did not complete the `initialize` handshake.
    #[error("the MCP server `{server}` did not complete the initialize handshake")]
    Initialize {
        /// The server.
        server: String,
        /// Why.
        #[source]
        source: BoxError,
    },
    /// `tools/list` failed.
    #[error("could not list the tools of the MCP server `{server}`")]
    ListTools {
        /// The server.
        server: String,
        /// Why.
        #[source]
        source: Box<ServiceError>,
    },
    /// The server did not answer `tools/list` (every page) within the client's
    /// [`list_timeout`](super::McpClientBuilder::list_timeout).
    #[error(
        "the MCP server `{server}` did not answer tools/list within {}",
        render::format_duration(*timeout)
    )]
    ListToolsTimedOut {
        /// The server.
        server: String,
        /// The limit.
        timeout: Duration,
    },
    /// The server's answer to `tools/list` could not be read: it is not JSON, is nested
    /// deeper than the parser goes (128 levels), or is larger than the client's
    /// `max_message_size` (64 MiB unless set).
    #[error("the MCP server `{server}` answered tools/list with something that cannot be read")]
    ListToolsUnreadable {
        /// The server.
        server: String,
        /// What was wrong with the answer.
        #[source]
        source: BoxError,
    },
    /// A tool's name, with the prefix, is not a valid tool name.
    #[error(
        "the MCP server `{server}` has a tool named {}, which makes the tool name {}; tool \
         names must match ^[a-zA-Z0-9_-]{{1,64}}$: give it a valid name with \
         .rename({}, \"NEW_NAME\") or leave it out with .exclude({})",
        quoted(remote),
        quoted(name),
        quoted(remote),
        quoted(remote)
    )]
    InvalidToolName {
        /// The server.
        server: String,
        /// The tool's name on the server.
        remote: String,
        /// The name it would have had.
        name: String,
    },
    /// A tool's input schema is not an object schema, or is not a schema the validator can
    /// compile (for example a `$ref` to another document).
    #[error(
        "the input schema of the tool {} on the MCP server `{server}` cannot be used: {reason}; \
         leave the tool out with .exclude({})",
        quoted(remote),
        quoted(remote)
    )]
    InvalidSchema {
        /// The server.
        server: String,
        /// The tool's name on the server.
        remote: String,
        /// Why.
        reason: String,
    },
    /// Two of the server's tools would have the same name.
    #[error(
        "two tools of the MCP server `{server}` would be named {}; rename one with \
         .rename(REMOTE_NAME, \"NEW_NAME\")",
        quoted(name)
    )]
    DuplicateTool {
        /// The server.
        server: String,
        /// The name.
        name: String,
    },
    /// [`rename`](super::McpClientBuilder::rename) or
    /// [`exclude`](super::McpClientBuilder::exclude) names a tool the server does not list.
    #[error(
        "{option}({}) names a tool the MCP server `{server}` does not list; it lists: {}",
        quoted(name), known.join(", ")
    )]
    UnknownTool {
        /// The server.
        server: String,
        /// The option: `rename` or `exclude`.
        option: &'static str,
        /// The name it gave.
        name: String,
        /// The tools the server lists.
        known: Vec<String>,
    },
}

/// An MCP server's tool reported that it failed (a result with `isError: true`).
///
/// The text is the server's, written by another program: it can hold anything, from a stack
/// trace to a password. The model is shown only the kind (`McpToolError`, or the one the
/// client was built with) unless the client opts in with
/// [`McpClientBuilder::include_error_message`](super::McpClientBuilder::include_error_message);
/// the caller gets all of it here, in [`ToolFailure::error`](crate::ToolFailure::error)
/// (`failure.error.downcast_ref::<McpToolError>()`).
///
/// Its `Display` is the server's text.
#[derive(Clone)]
pub struct McpToolError {
    pub(super) server: Arc<str>,
    pub(super) tool: Arc<str>,
    pub(super) content: String,
    pub(super) structured_content: Option<serde_json::Value>,
    pub(super) kind: &'static str,
}

impl McpToolError {
    /// The kind the model is shown unless the client was built with another.
    pub const KIND: &'static str = "McpToolError";

    /// The server, as the client names it.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The tool's name on the server (without the client's prefix).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The result's text content, joined by newlines, as it would be shown had the call
    /// succeeded; the structured content as JSON when there is no text.
    pub fn content(&self) -> &str {
        &self.content
    }

    /// The result's `structuredContent`, if it had one.
    pub fn structured_content(&self) -> Option<&serde_json::Value> {
        self.structured_content.as_ref()
    }
}

impl fmt::Debug for McpToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpToolError")
            .field("server", &self.server)
            .field("tool", &self.tool)
            .field("content", &self.content)
            .field("structured_content", &self.structured_content)
            .field("kind", &self.kind)
            .finish()
    }
}

impl fmt::Display for McpToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.content.is_empty() {
            f.write_str("the tool reported a failure without text")
        } else {
            f.write_str(&self.content)
        }
    }
}

impl std::error::Error for McpToolError {}

impl Disclose for McpToolError {
    fn disclosure(&self) -> Disclosure {
        Disclosure::Kind(self.kind)
    }
}

/// A call of an MCP server's tool that got no result: the model sees the kind only
/// (`McpProtocolError`, `McpUnreadableAnswer`, `McpDisconnected`, `McpTimeout`,
/// `McpCancelled`), the caller everything.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpCallError {
    /// The server answered with a JSON-RPC error (an unknown tool, parameters it refused, a
    /// failure of its own), or with something that is not a tool result.
    #[error("the MCP server `{server}` answered the call of `{tool}` with an error")]
    Protocol {
        /// The server.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The error, with the server's message.
        #[source]
        source: ServiceError,
    },
    /// The server's answer could not be read: it is not JSON, is nested deeper than the
    /// parser goes (128 levels), is larger than the client's `max_message_size`, or (over
    /// HTTP) is a response that is neither a JSON-RPC message nor a stream of them. Whether
    /// the call took effect is unknown.
    ///
    /// Over stdio, a line that is not a JSON-RPC message names no request, so it fails every
    /// call waiting at that moment (MCP allows a server nothing else on its stdout).
    ///
    /// What was wrong is the source, not the message: it can quote the server's answer.
    #[error("the answer of the MCP server `{server}` to the call of `{tool}` cannot be read")]
    Unreadable {
        /// The server.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// What was wrong with the answer.
        #[source]
        source: BoxError,
    },
    /// The server did not answer within a second past the client's
    /// [`timeout`](super::McpClientBuilder::timeout); the server was sent
    /// `notifications/cancelled`. Whether the call took effect is unknown.
    ///
    /// Only a call made outside an agent or a server ([`Tool::call`](crate::Tool::call))
    /// ends this way: an agent or an [`McpServer`](crate::mcp::McpServer) applies the same
    /// limit itself, first, and reports a timeout as it does for any tool.
    #[error(
        "the MCP server `{server}` did not answer the call of `{tool}` within {}",
        render::format_duration(*timeout)
    )]
    TimedOut {
        /// The server.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// How long the call waited.
        timeout: Duration,
    },
    /// The server sent neither the answer nor progress that moved the call on for the
    /// client's [`idle_timeout`](super::McpClientBuilder::idle_timeout); the server was sent
    /// `notifications/cancelled`. Whether the call took effect is unknown.
    #[error(
        "the MCP server `{server}` sent neither an answer nor progress for the call of `{tool}` within {}",
        render::format_duration(*idle)
    )]
    Silent {
        /// The server.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// How long the call went without either.
        idle: Duration,
    },
    /// The connection ended during the call: the server's process exited, the HTTP
    /// connection failed, or the client was dropped. Whether the call took effect is unknown.
    #[error(
        "the connection to the MCP server `{server}` ended during the call of `{tool}`{}",
        match exit_status { Some(status) => format!(" (the server's process ended: {status})"), None => String::new() }
    )]
    Disconnected {
        /// The server.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// How the server's process ended, for a server started as a child process that has.
        exit_status: Option<ExitStatus>,
        /// The transport's error; `None` when the client was closed.
        #[source]
        source: Option<ServiceError>,
    },
    /// The client had been closed or dropped before the call; the call was not sent. Keep
    /// the [`McpClient`](super::McpClient) alive as long as its tools are used.
    #[error("the MCP client of `{server}` was closed before the call of `{tool}`")]
    Closed {
        /// The server.
        server: String,
        /// The tool's name on the server.
        tool: String,
    },
    /// The call's [`ToolContext::cancellation`](crate::ToolContext::cancellation) token was
    /// cancelled; the server was sent `notifications/cancelled`. Whether the call took effect
    /// is unknown.
    #[error("the call of `{tool}` on the MCP server `{server}` was cancelled")]
    Cancelled {
        /// The server.
        server: String,
        /// The tool's name on the server.
        tool: String,
    },
}

impl McpCallError {
    /// The kind of [`McpCallError::Protocol`].
    pub const PROTOCOL: &'static str = "McpProtocolError";
    /// The kind of [`McpCallError::Unreadable`].
    pub const UNREADABLE: &'static str = "McpUnreadableAnswer";
    /// The kind of [`McpCallError::TimedOut`] and [`McpCallError::Silent`].
    pub const TIMED_OUT: &'static str = "McpTimeout";
    /// The kind of [`McpCallError::Disconnected`] and [`McpCallError::Closed`].
    pub const DISCONNECTED: &'static str = "McpDisconnected";
    /// The kind of [`McpCallError::Cancelled`].
    pub const CANCELLED: &'static str = "McpCancelled";

    /// The kind the model is shown.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Protocol { .. } => Self::PROTOCOL,
            Self::Unreadable { .. } => Self::UNREADABLE,
            Self::TimedOut { .. } | Self::Silent { .. } => Self::TIMED_OUT,
            Self::Disconnected { .. } | Self::Closed { .. } => Self::DISCONNECTED,
            Self::Cancelled { .. } => Self::CANCELLED,
        }
    }

    /// Whether the call may have taken effect on the server: it was sent and then cut off
    /// ([`Disconnected`](Self::Disconnected), [`Cancelled`](Self::Cancelled),
    /// [`TimedOut`](Self::TimedOut)), or its answer could not be read
    /// ([`Unreadable`](Self::Unreadable)). The effects ledger records such calls as
    /// [`EffectOutcome::Unknown`](crate::failures::EffectOutcome::Unknown).
    pub fn effect_unknown(&self) -> bool {
        matches!(
            self,
            Self::Unreadable { .. }
                | Self::TimedOut { .. }
                | Self::Silent { .. }
                | Self::Disconnected { .. }
                | Self::Cancelled { .. }
        )
    }
}

impl Disclose for McpCallError {
    fn disclosure(&self) -> Disclosure {
        Disclosure::Kind(self.kind())
    }
}
