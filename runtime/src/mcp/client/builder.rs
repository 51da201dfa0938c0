//! [`McpClientBuilder`]: how a server's tools are named and disclosed, and how to reach the
//! server.

use std::collections::HashMap;
use std::fmt;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::RoleClient;
use rmcp::transport::IntoTransport;
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use tokio_util::sync::CancellationToken;

use super::child::ChildProcess;
use super::error::{McpClientError, McpToolError};
use super::http::Checked;
use super::notes::{self, Listener, Routes};
use super::oauth::{Authorized, Authorizer, OAuth};
use super::remote_tool::Connection;
use super::stdio::StdioTransport;
use super::unreadable::Marker;
use super::{McpClient, Naming};
use crate::render;
use crate::secret::Secret;
use crate::tool::LogLevel;

/// How long connecting may take unless configured otherwise.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long `tools()` may wait for the server's list unless configured otherwise.
const DEFAULT_LIST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a call may take unless configured otherwise: the MCP TypeScript SDK's default
/// request timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest message read from a server unless configured otherwise: room for a 20 MB
/// result sent twice, as text and as `structuredContent` (as the MCP Python SDK sends a tool's
/// string), with its JSON escapes, so that the caller gets it whole.
const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 * 1024 * 1024;

/// Builds an [`McpClient`]: the settings for one server's tools, then how to reach it
/// ([`stdio`](Self::stdio), [`http`](Self::http), [`connect`](Self::connect)). Start with
/// [`McpClient::builder`].
#[must_use = "connect with `.stdio(..)`, `.http(..)` or `.connect(..)`"]
#[derive(Clone)]
pub struct McpClientBuilder {
    name: Option<String>,
    headers: Vec<(String, Secret<String>)>,
    naming: Naming,
    kind: &'static str,
    include_error_message: bool,
    trusted_output: bool,
    timeout: Duration,
    idle_timeout: Option<Duration>,
    list_timeout: Duration,
    connect_timeout: Duration,
    log_level: Option<LogLevel>,
    oauth: Option<OAuth>,
    max_output: Option<usize>,
    max_message_size: usize,
}

impl McpClientBuilder {
    pub(super) fn new() -> Self {
        Self {
            name: None,
            headers: Vec::new(),
            naming: Naming::default(),
            kind: McpToolError::KIND,
            include_error_message: false,
            trusted_output: false,
            timeout: DEFAULT_TIMEOUT,
            idle_timeout: None,
            list_timeout: DEFAULT_LIST_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            log_level: None,
            oauth: None,
            max_output: None,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
        }
    }

    /// What errors and logs call the server. Default: the name the server gives for itself
    /// in its `initialize` result (before that, the program or the URL's host).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Prefixes the name of each of the server's tools, so that two servers' tools cannot
    /// collide (`.prefix("github_")` makes `create_issue` `github_create_issue`). The result
    /// must still be a valid tool name. Default: no prefix.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.naming.prefix = prefix.into();
        self
    }

    /// Names the server's tool `remote` `local` here, without the prefix: for a tool whose
    /// name is not a valid tool name (`stats.count`, which MCP allows) or collides with
    /// another. `remote` must be one of the server's tools.
    pub fn rename(mut self, remote: impl Into<String>, local: impl Into<String>) -> Self {
        self.naming.renames.push((remote.into(), local.into()));
        self
    }

    /// Leaves the server's tool `remote` out. `remote` must be one of the server's tools.
    pub fn exclude(mut self, remote: impl Into<String>) -> Self {
        self.naming.excluded.push(remote.into());
        self
    }

    /// The kind the model is shown when one of the server's tools reports a failure
    /// (`Tool 'NAME' failed with KIND`). Default: [`McpToolError::KIND`], `McpToolError`.
    ///
    /// A fixed name from your own vocabulary (`GithubError`), never text from elsewhere.
    pub fn failure_kind(mut self, kind: &'static str) -> Self {
        self.kind = kind;
        self
    }

    /// Shows the model the text of the server's tool errors after the kind
    /// (`Tool 'NAME' failed with McpToolError: TEXT`), cut to a bounded length. Off by
    /// default: the text is written by another program and can hold anything.
    ///
    /// Protocol errors and lost connections are still shown by their kind only. With
    /// untrusted output (the default), a failure whose text is shown taints the run.
    pub fn include_error_message(mut self, include: bool) -> Self {
        self.include_error_message = include;
        self
    }

    /// Marks the server's output as trusted: its tools' results do not taint the run (see
    /// [`Tool::untrusted_output`](crate::Tool::untrusted_output)). Off by default: what a
    /// server returns can hold instructions planted by someone else.
    pub fn trusted_output(mut self, trusted: bool) -> Self {
        self.trusted_output = trusted;
        self
    }

    /// How long any one call of the server's tools may take. Default 60s.
    ///
    /// It is each tool's own time limit, as `#[tool(timeout = ..)]` is: an agent, or an
    /// [`McpServer`](crate::mcp::McpServer) serving the tool, applies the shorter of this and
    /// its own, reports a call that runs out of it as timed out, and the server is sent
    /// `notifications/cancelled`. A call made directly with [`Tool::call`](crate::Tool::call)
    /// fails with [`McpCallError::TimedOut`](super::McpCallError::TimedOut) a second after it.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long a call may go without the server's answer or a progress report that moves
    /// it on. Default: no such bound, only [`timeout`](Self::timeout).
    ///
    /// Every call is sent with a progress token. A call whose progress keeps coming may run
    /// past `idle` as long as it likes, but never past its time limit; one that goes quiet
    /// for `idle` fails with [`McpCallError::Silent`](super::McpCallError::Silent) (kind
    /// `McpTimeout`, its effect unknown), and the server is sent `notifications/cancelled`.
    /// Set it to stop a long call early when its server has stopped reporting, without
    /// cutting short one that has not.
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = Some(idle);
        self
    }

    /// Asks the server, when it connects, to send log lines at `level` and above
    /// (`logging/setLevel`), if it says it has logging. Default: not asked; the server sends
    /// what it sends by itself.
    ///
    /// A server's log lines (`notifications/message`) go to the caller of every call of this
    /// client running when they arrive (MCP ties a log line to no request), as a local tool's
    /// [`ToolContext::log`](crate::ToolContext::log) lines do: as
    /// [`AgentEvent::ToolLog`](crate::AgentEvent::ToolLog) on an agent's event stream, and as
    /// events on the call's span. Its progress goes to the call it is for, as
    /// [`AgentEvent::ToolProgress`](crate::AgentEvent::ToolProgress). Both are cut to 2 KiB
    /// and never shown to the model.
    pub fn log_level(mut self, level: LogLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// How long [`McpClient::tools`] may wait for the server's list of tools, every page of
    /// it. Default 30s.
    pub fn list_timeout(mut self, timeout: Duration) -> Self {
        self.list_timeout = timeout;
        self
    }

    /// How long starting the server and the `initialize` handshake may take. Default 30s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The output budget of the server's tools, in bytes: the most of a successful result an
    /// agent shows the model, as `#[tool(max_output = ..)]` is for a local tool (see
    /// [`Tool::max_output`](crate::Tool::max_output)). Default: none of its own, so the
    /// agent's [`max_tool_output`](crate::AgentBuilder::max_tool_output) applies (64 KiB
    /// unless set). The caller gets the whole result either way.
    pub fn max_output(mut self, bytes: usize) -> Self {
        self.max_output = Some(bytes);
        self
    }

    /// The longest message read from the server, in bytes: a longer one is refused as it is
    /// read, never held whole, and the call it answers fails with
    /// [`McpCallError::Unreadable`](super::McpCallError::Unreadable) (stdio, or a JSON body
    /// over HTTP) or [`McpCallError::Disconnected`](super::McpCallError::Disconnected) (an
    /// event of an HTTP response stream). Default 64 MiB: a 20 MB result reaches the caller
    /// whole (and the model as its budget allows), also when the server sends it twice (as
    /// text and as `structuredContent`, as the MCP Python SDK does), and a 100 MB one is
    /// refused.
    ///
    /// It bounds what [`stdio`](Self::stdio) and [`http`](Self::http) read; a transport
    /// given to [`connect`](Self::connect) reads with its own limits.
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// Starts the server as a child process and talks to it over its stdin and stdout.
    ///
    /// The process is killed when the client is dropped, whether or not it would exit on
    /// its own when its stdin closes; [`McpClient::close`] gives it a moment to exit first.
    /// Its stderr is left as `command` has it (inherited unless set).
    ///
    /// Its stdout must carry nothing but MCP messages, one a line, as MCP requires. A line
    /// that is not one (or is longer than [`max_message_size`](Self::max_message_size)) cannot
    /// be tied to a request, so it fails every call waiting at that moment with
    /// [`McpCallError::Unreadable`](super::McpCallError::Unreadable); before the handshake is
    /// done, such a line is skipped.
    pub async fn stdio(
        self,
        command: impl Into<tokio::process::Command>,
    ) -> Result<McpClient, McpClientError> {
        let mut command = command.into();
        let program = command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let spawn_error = |source| McpClientError::Spawn {
            program: program.clone(),
            source,
        };
        let mut child = command.spawn().map_err(spawn_error)?;
        let pipes = child.stdout.take().zip(child.stdin.take());
        // From here on, the process is killed if connecting fails.
        let process = Arc::new(ChildProcess::new(child));
        let Some((stdout, stdin)) = pipes else {
            return Err(spawn_error(std::io::Error::other(
                "the child process has no stdin or stdout pipe",
            )));
        };
        let marker = Marker::new();
        let max_line = self.max_message_size;
        self.start(
            StdioTransport::new(stdout, stdin, marker, max_line),
            marker,
            program,
            Some(process),
        )
        .await
    }

    /// Sends `name: value` with every HTTP request, such as
    /// `.header("authorization", format!("Bearer {token}"))`. The value is kept out of
    /// `Debug` output and logs. For [`http`](Self::http) only.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), Secret::new(value.into())));
        self
    }

    /// Authorizes with OAuth when the server asks for it (a 401): see
    /// [`OAuth`](super::oauth::OAuth). For [`http`](Self::http) only; connecting may then
    /// take one authorization longer than the [`connect_timeout`](Self::connect_timeout)
    /// (the user's step and the exchanges with the authorization server, each at its bound).
    pub fn oauth(mut self, oauth: OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Connects to a server over streamable HTTP at `url` (like `http://127.0.0.1:8000/mcp`).
    ///
    /// HTTPS uses rustls with the platform's certificate verifier, as the model providers
    /// do. Redirects are not followed: give the server's final URL. A response stream that
    /// breaks is resumed at most three times within a few seconds, after which the calls
    /// waiting on it fail with [`McpCallError::Disconnected`](super::McpCallError::Disconnected)
    /// (rmcp's own default retries without end, so a server that went away would leave
    /// them waiting).
    ///
    /// An answer that cannot be read (not JSON, or a JSON body over
    /// [`max_message_size`](Self::max_message_size)) fails its call with
    /// [`McpCallError::Unreadable`](super::McpCallError::Unreadable); a stream event over it
    /// ends the answer's stream, and the call with
    /// [`McpCallError::Disconnected`](super::McpCallError::Disconnected).
    pub async fn http(mut self, url: impl Into<String>) -> Result<McpClient, McpClientError> {
        let url: String = url.into();
        let label = host(&url);
        let setup_error = |reason: String| McpClientError::HttpClient {
            server: self.name.clone().unwrap_or_else(|| label.clone()),
            reason,
        };
        let mut headers = HashMap::with_capacity(self.headers.len());
        for (name, value) in &self.headers {
            let header_name = HeaderName::try_from(name.as_str())
                .map_err(|_| setup_error(format!("`{name}` is not a valid header name")))?;
            let mut header_value =
                HeaderValue::try_from(value.expose().as_str()).map_err(|_| {
                    setup_error(format!("the value of `{name}` is not a valid header value"))
                })?;
            header_value.set_sensitive(true);
            headers.insert(header_name, header_value);
        }
        let client = crate::http_client::client_builder()
            .and_then(|builder| {
                builder
                    // No idle connections kept: reusing one whose last response was not read
                    // to its end stalls on delayed ACKs.
                    .pool_max_idle_per_host(0)
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|e| e.to_string())
            })
            .map_err(setup_error)?;
        let mut reconnect = ExponentialBackoff::default();
        reconnect.max_times = Some(3);
        reconnect.base_duration = Duration::from_millis(250);
        reconnect.max_delay = Some(Duration::from_secs(2));
        let mut config = StreamableHttpClientTransportConfig::with_uri(url)
            .custom_headers(headers)
            .max_json_response_size(self.max_message_size)
            .max_sse_event_size(self.max_message_size);
        config.retry_config = Arc::new(reconnect);
        let marker = Marker::new();
        match self.oauth.take() {
            Some(oauth) => {
                // Connecting may include one authorization.
                self.connect_timeout += oauth.bound();
                let authorizer = Authorizer::new(oauth, config.uri.to_string());
                let client = Authorized::new(client, authorizer);
                let transport = StreamableHttpClientTransport::with_client(
                    Checked::new(client, marker),
                    config,
                );
                self.start(transport, marker, label, None).await
            }
            None => {
                let transport = StreamableHttpClientTransport::with_client(
                    Checked::new(client, marker),
                    config,
                );
                self.start(transport, marker, label, None).await
            }
        }
    }

    /// Connects over any transport rmcp's client takes, such as one end of a
    /// `tokio::io::duplex` served by an in-process [`McpServer`](crate::mcp::McpServer).
    ///
    /// What such a transport cannot decode, it skips: the call it answered then waits until
    /// its timeout. [`stdio`](Self::stdio) and [`http`](Self::http) fail it at once.
    pub async fn connect<T, E, A>(self, transport: T) -> Result<McpClient, McpClientError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        self.start(transport, Marker::new(), "MCP server".to_owned(), None)
            .await
    }

    /// The `initialize` handshake, within the connect timeout.
    async fn start<T, E, A>(
        self,
        transport: T,
        marker: Marker,
        fallback_name: String,
        process: Option<Arc<ChildProcess>>,
    ) -> Result<McpClient, McpClientError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        // The handshake is `initialize`, so the version offered is the newest that has one:
        // from 2026-07-28 on, the lifecycle moved into each request's `_meta` and a server
        // answering `initialize` can never name it.
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("reticent", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let initialize = |source| McpClientError::Initialize {
            server: self.name.clone().unwrap_or_else(|| fallback_name.clone()),
            source,
        };
        let routes = Arc::new(Routes::default());
        let listener = Listener::new(info, Arc::clone(&routes));
        let connect = async {
            let service = listener.serve(transport).await?;
            if let Some(level) = self.log_level {
                notes::ask_for_logs(service.peer(), level).await;
            }
            Ok::<_, rmcp::service::ClientInitializeError>(service)
        };
        let service = match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(Ok(service)) => service,
            Ok(Err(error)) => return Err(initialize(error.into())),
            Err(_) => {
                return Err(initialize(
                    format!(
                        "no answer within {}",
                        render::format_duration(self.connect_timeout)
                    )
                    .into(),
                ));
            }
        };
        let server_name = service
            .peer_info()
            .and_then(|info| info.server_info.as_ref().map(|s| s.name.clone()))
            .filter(|name| !name.is_empty());
        let server = self.name.or(server_name).unwrap_or(fallback_name);
        let connection = Connection {
            peer: service.peer().clone(),
            server: Arc::from(render::bounded(&server, 2 * render::MAX_NAME_LEN).as_ref()),
            kind: self.kind,
            include_error_message: self.include_error_message,
            trusted_output: self.trusted_output,
            timeout: self.timeout,
            idle_timeout: self.idle_timeout,
            max_output: self.max_output,
            routes,
            closed: CancellationToken::new(),
            process: process.as_ref().map(Arc::downgrade),
            marker,
        };
        Ok(McpClient {
            service: Some(service),
            connection: Arc::new(connection),
            process,
            naming: self.naming,
            list_timeout: self.list_timeout,
        })
    }
}

impl fmt::Debug for McpClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClientBuilder")
            .field("name", &self.name)
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(name, _)| name)
                    .collect::<Vec<_>>(),
            )
            .field("naming", &self.naming)
            .field("kind", &self.kind)
            .field("include_error_message", &self.include_error_message)
            .field("trusted_output", &self.trusted_output)
            .field("timeout", &self.timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("log_level", &self.log_level)
            .field("list_timeout", &self.list_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("oauth", &self.oauth)
            .field("max_output", &self.max_output)
            .field("max_message_size", &self.max_message_size)
            .finish()
    }
}

/// The host (and port) of `url`, to name a server before it names itself; never the rest,
/// which can hold credentials.
fn host(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(url) => match (url.host_str(), url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            (None, _) => "MCP server".to_owned(),
        },
        Err(_) => "MCP server".to_owned(),
    }
}
