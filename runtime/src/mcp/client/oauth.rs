//! OAuth 2.1 for an MCP server reached over HTTP ([`McpClientBuilder::oauth`]), on rmcp's
//! `auth` support: the server's 401 names its protected-resource metadata (RFC 9728), that
//! names the authorization server, whose metadata (RFC 8414 or OpenID discovery) gives the
//! endpoints; the client is pre-registered, identified by a metadata document URL, or
//! registered dynamically; the user authorizes in a browser (PKCE S256, the `resource`
//! parameter of RFC 8707); tokens are refreshed when they expire and when the server
//! refuses one. Unattended programs use the client credentials grant (with a client secret,
//! or a private key: `private_key_jwt`) or enterprise-managed authorization instead of the
//! user's step.
//!
//! [`McpClientBuilder::oauth`]: super::McpClientBuilder::oauth

mod jwt;
mod legacy;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata,
    AuthorizationRequest, AuthorizationSession, ClientCredentialsConfig, CredentialRefreshGuard,
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest, WWWAuthenticateParams,
};
pub use rmcp::transport::auth::{CredentialStore, InMemoryCredentialStore, StoredCredentials};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use std::collections::HashMap;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Mutex;

use crate::error::BoxError;
use crate::render;
use crate::secret::Secret;

pub use jwt::{InvalidKey, SigningKey};

/// How long one exchange with the authorization server may take unless configured otherwise:
/// a metadata document, the registration, a token.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the user's step may take unless configured otherwise.
const DEFAULT_AUTHORIZE_TIMEOUT: Duration = Duration::from_secs(300);

/// How many times one request is sent again after the server refused its token (a 401, then
/// perhaps a 403 for more scope): each time after a refresh or a new authorization.
const MAX_REAUTHORIZATIONS: u32 = 2;

/// The user's step of an authorization: open `url` (the authorization server's page) in a
/// browser, let the user approve, and return the URL the browser was sent back to (the
/// redirect URI, with `code` and `state`).
///
/// Any `Fn(String) -> impl Future<Output = Result<String, BoxError>>` is one. For a program
/// run in a terminal, [`LoopbackAuthorize`] prints the URL and reads the redirect on a
/// loopback port.
pub trait Authorize: Send + Sync + 'static {
    /// Has the user authorize at `url`; the URL the browser was redirected to.
    fn authorize(&self, url: String) -> BoxFuture<'static, Result<String, BoxError>>;
}

impl<F, Fut> Authorize for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, BoxError>> + Send + 'static,
{
    fn authorize(&self, url: String) -> BoxFuture<'static, Result<String, BoxError>> {
        Box::pin(self(url))
    }
}

/// How [`McpClient`](super::McpClient) gets and keeps an access token for a server that
/// requires OAuth. Give it to [`McpClientBuilder::oauth`](super::McpClientBuilder::oauth).
///
/// ```no_run
/// use reticent::mcp::McpClient;
/// use reticent::mcp::oauth::OAuth;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // Prints the authorization URL and reads the browser's redirect on 127.0.0.1.
/// let oauth = OAuth::loopback().await?.client_name("my-agent");
/// let client = McpClient::builder()
///     .oauth(oauth)
///     .http("https://mcp.example.com/mcp")
///     .await?;
/// # let _ = client;
/// # Ok(())
/// # }
/// ```
///
/// Nothing is asked of the server until it answers 401; then the client reads its
/// protected-resource metadata (from the 401's `resource_metadata`, else the well-known
/// URLs), refuses one whose `resource` is not this server, reads the authorization server's
/// metadata, identifies itself (a pre-registered client first, then a
/// [client metadata document](Self::client_metadata_url) if the server supports them, then
/// dynamic registration), has the user authorize through [`Authorize`] with PKCE (S256) and
/// the `resource` parameter, and sends the request again with the token.
///
/// Scopes: those [set](Self::scopes), else the 401's `scope`, else the resource's
/// `scopes_supported`, else none. A 403 `insufficient_scope` asks the user again for the
/// scopes it names (three times at most per connection).
///
/// Tokens are kept in the [store](Self::store) (in memory unless set), refreshed when they
/// expire and when the server refuses one, and never appear in `Debug` output, errors or
/// logs. Every exchange with the authorization server is bounded by
/// [`timeout`](Self::timeout), the user's step by
/// [`authorize_timeout`](Self::authorize_timeout).
#[derive(Clone)]
pub struct OAuth {
    grant: Grant,
    store: Arc<dyn CredentialStore>,
    client_name: String,
    client_id: Option<String>,
    client_secret: Option<Secret<String>>,
    client_metadata_url: Option<String>,
    scopes: Vec<String>,
    timeout: Duration,
    authorize_timeout: Duration,
}

/// How the client gets a token.
#[derive(Clone)]
enum Grant {
    /// The user authorizes in a browser (authorization code with PKCE).
    Code {
        redirect_uri: String,
        authorize: Arc<dyn Authorize>,
    },
    /// The client authenticates as itself with its secret, with no user (client credentials).
    ClientCredentials,
    /// The client authenticates as itself with an assertion signed by its private key, with
    /// no user (client credentials with `private_key_jwt`).
    ClientCredentialsJwt(SigningKey),
    /// An ID token from the enterprise's identity provider, exchanged there for an
    /// authorization grant (ID-JAG), then at the server's authorization server for a token.
    Enterprise(Arc<IdentityProvider>),
}

/// The enterprise identity provider of [`OAuth::enterprise`]: where the user's ID token is
/// exchanged for an authorization grant (RFC 8693 token exchange), as a public client there.
#[derive(Clone)]
pub struct IdentityProvider {
    issuer: String,
    token_endpoint: String,
    client_id: String,
    id_token: Secret<String>,
}

impl IdentityProvider {
    /// The identity provider `issuer`, its `token_endpoint`, this client's id there, and the
    /// user's ID token from it.
    pub fn new(
        issuer: impl Into<String>,
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        id_token: impl Into<String>,
    ) -> Self {
        Self {
            issuer: issuer.into(),
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            id_token: Secret::from(id_token.into()),
        }
    }
}

impl fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("id_token", &self.id_token)
            .finish()
    }
}

impl OAuth {
    /// OAuth whose user step is `authorize`, redirected to `redirect_uri`.
    pub fn new(redirect_uri: impl Into<String>, authorize: impl Authorize) -> Self {
        Self::with_grant(Grant::Code {
            redirect_uri: redirect_uri.into(),
            authorize: Arc::new(authorize),
        })
    }

    /// OAuth with no user, for a program that runs unattended: the client authenticates as
    /// itself with a client id and secret issued by the authorization server (the client
    /// credentials grant, with the secret sent as the server's metadata asks), for the
    /// [scopes](Self::scopes) set or those the server names, and the server's URL as the
    /// `resource`. A refused or expired token is replaced by a new exchange.
    pub fn client_credentials(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        let mut oauth = Self::with_grant(Grant::ClientCredentials);
        oauth.client_id = Some(client_id.into());
        oauth.client_secret = Some(Secret::from(secret.into()));
        oauth
    }

    /// OAuth with no user, for a program that runs unattended, authenticated by a private key
    /// instead of a secret: the client credentials grant with `private_key_jwt` client
    /// authentication (RFC 7523 §2.2). Each token request carries a fresh client assertion, a
    /// JWT signed with `key`, whose issuer and subject are `client_id` and whose audience is
    /// the authorization server's issuer, valid for five minutes. The authorization server
    /// checks it with the public key registered for the client (in its JWKS).
    ///
    /// As with [`client_credentials`](Self::client_credentials): the [scopes](Self::scopes)
    /// set or those the server names, the server's URL as the `resource`, and a new exchange
    /// for a refused or expired token. The authorization server's metadata must name its
    /// `issuer`; when it lists the methods or algorithms it accepts, `private_key_jwt` and the
    /// key's algorithm must be among them, and its token endpoint must be HTTPS (or loopback,
    /// with the MCP server on loopback too). The key and the assertions appear in no `Debug`
    /// output, error, log or span.
    ///
    /// ```no_run
    /// use reticent::mcp::oauth::{OAuth, SigningKey};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let pem = std::fs::read_to_string("client-key.pem")?;
    /// let oauth = OAuth::client_credentials_jwt("my-agent", SigningKey::from_pem(&pem)?);
    /// # let _ = oauth;
    /// # Ok(())
    /// # }
    /// ```
    pub fn client_credentials_jwt(client_id: impl Into<String>, key: SigningKey) -> Self {
        let mut oauth = Self::with_grant(Grant::ClientCredentialsJwt(key));
        oauth.client_id = Some(client_id.into());
        oauth
    }

    /// Enterprise-managed authorization (cross-app access), with no user step: the user's
    /// ID token from the enterprise's identity provider is exchanged there for an
    /// authorization grant for this server, which the server's authorization server (found
    /// by discovery) exchanges for a token. `client_id` and `secret` are this client's at the
    /// server's authorization server (sent with HTTP Basic). An expired or refused token is
    /// replaced by a new exchange, for as long as the ID token is accepted.
    pub fn enterprise(
        identity_provider: IdentityProvider,
        client_id: impl Into<String>,
        secret: impl Into<String>,
    ) -> Self {
        let mut oauth = Self::with_grant(Grant::Enterprise(Arc::new(identity_provider)));
        oauth.client_id = Some(client_id.into());
        oauth.client_secret = Some(Secret::from(secret.into()));
        oauth
    }

    fn with_grant(grant: Grant) -> Self {
        Self {
            grant,
            store: Arc::new(InMemoryCredentialStore::new()),
            client_name: "reticent".to_owned(),
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            scopes: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            authorize_timeout: DEFAULT_AUTHORIZE_TIMEOUT,
        }
    }

    /// The default for a program run in a terminal: [`LoopbackAuthorize`] on a free port of
    /// 127.0.0.1, which prints the authorization URL on stderr and reads the browser's
    /// redirect to `http://127.0.0.1:PORT/callback`.
    pub async fn loopback() -> std::io::Result<Self> {
        let loopback = LoopbackAuthorize::bind().await?;
        Ok(Self::new(loopback.redirect_uri(), loopback))
    }

    /// The name the client registers under (dynamic registration). Default `reticent`.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// A client registered with the authorization server beforehand: no registration is
    /// made. With a secret, the token endpoint is sent it (HTTP Basic, or in the body when
    /// the server supports only that).
    pub fn preregistered(mut self, client_id: impl Into<String>, secret: Option<String>) -> Self {
        self.client_id = Some(client_id.into());
        self.client_secret = secret.map(Secret::from);
        self
    }

    /// The HTTPS URL of this client's metadata document, used as its client id by an
    /// authorization server that supports client ID metadata documents, instead of
    /// registering.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The scopes to ask for. Default: those the server names (see above).
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Where the client id and tokens are kept: rmcp's [`CredentialStore`] (load, save,
    /// clear), for example one that writes them to the system's keychain. Default: in
    /// memory ([`InMemoryCredentialStore`]), for the life of the client. Tokens found there
    /// are used without asking the user.
    pub fn store(mut self, store: impl CredentialStore + 'static) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// How long one exchange with the authorization server may take (a metadata document,
    /// the registration, a token). Default 30s.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long the user's step may take. Default 5 minutes.
    pub fn authorize_timeout(mut self, timeout: Duration) -> Self {
        self.authorize_timeout = timeout;
        self
    }

    /// How much longer connecting may take with OAuth: one authorization, every exchange of
    /// it at its bound (discovery, with the 2025-03-26 location's three requests; the
    /// registration; the token; the store).
    pub(super) fn bound(&self) -> Duration {
        self.authorize_timeout + 7 * self.timeout
    }
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (grant, redirect_uri) = match &self.grant {
            Grant::Code { redirect_uri, .. } => ("authorization_code", Some(redirect_uri)),
            Grant::ClientCredentials => ("client_credentials", None),
            Grant::ClientCredentialsJwt(_) => ("client_credentials (private_key_jwt)", None),
            Grant::Enterprise(_) => ("enterprise_managed", None),
        };
        f.debug_struct("OAuth")
            .field("grant", &grant)
            .field("redirect_uri", &redirect_uri)
            .field("client_name", &self.client_name)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field(
                "signing_key",
                &match &self.grant {
                    Grant::ClientCredentialsJwt(key) => Some(key),
                    _ => None,
                },
            )
            .field(
                "identity_provider",
                &match &self.grant {
                    Grant::Enterprise(idp) => Some(idp),
                    _ => None,
                },
            )
            .field("timeout", &self.timeout)
            .field("authorize_timeout", &self.authorize_timeout)
            .finish_non_exhaustive()
    }
}

/// The user's step for a program run in a terminal: prints the authorization URL on stderr
/// (the user opens it), then waits on a loopback port for the browser's redirect and answers
/// it with a page saying the window can be closed.
pub struct LoopbackAuthorize {
    listener: Arc<Mutex<tokio::net::TcpListener>>,
    port: u16,
}

impl LoopbackAuthorize {
    /// Listens on a free port of 127.0.0.1.
    pub async fn bind() -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        Ok(Self {
            listener: Arc::new(Mutex::new(listener)),
            port,
        })
    }

    /// `http://127.0.0.1:PORT/callback`: the redirect URI to register.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }
}

impl fmt::Debug for LoopbackAuthorize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackAuthorize")
            .field("port", &self.port)
            .finish()
    }
}

impl Authorize for LoopbackAuthorize {
    fn authorize(&self, url: String) -> BoxFuture<'static, Result<String, BoxError>> {
        let listener = Arc::clone(&self.listener);
        let port = self.port;
        Box::pin(async move {
            eprintln!("Open this URL in a browser to authorize the MCP client:\n{url}");
            let listener = listener.lock().await;
            loop {
                let (mut stream, _) = listener.accept().await?;
                // A connection that sends nothing must not hold the step up.
                let head = tokio::time::timeout(Duration::from_secs(10), read_head(&mut stream))
                    .await
                    .unwrap_or_else(|_| Ok(String::new()))?;
                let target = head
                    .lines()
                    .next()
                    .and_then(|line| line.strip_prefix("GET "))
                    .and_then(|rest| rest.split(' ').next())
                    .filter(|target| target.starts_with("/callback?"));
                let Some(target) = target else {
                    let _ = stream
                        .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                    continue;
                };
                let page = "Authorization complete: you can close this window.";
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
                return Ok(format!("http://127.0.0.1:{port}{target}"));
            }
        })
    }
}

/// A request's head, up to 16 KiB.
async fn read_head(stream: &mut tokio::net::TcpStream) -> std::io::Result<String> {
    let mut head = Vec::with_capacity(1024);
    let mut buffer = [0u8; 1024];
    while head.len() < 16 * 1024 && !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = stream.read(&mut buffer).await?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

/// The largest answer read from the authorization server.
const MAX_ANSWER: usize = 1024 * 1024;

/// rmcp's OAuth requests, made with reticent's HTTP client (rustls with ring and the
/// platform's verifier, as the providers), each bounded by the OAuth timeout and its answer
/// by [`MAX_ANSWER`].
struct OAuthHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    timeout: Duration,
}

impl OAuthHttp {
    fn new(timeout: Duration) -> Result<Self, AuthError> {
        let build = |policy| {
            crate::http_client::client_builder()
                .and_then(|builder| {
                    builder
                        .redirect(policy)
                        .timeout(timeout)
                        .build()
                        .map_err(|e| e.to_string())
                })
                .map_err(AuthError::InternalError)
        };
        Ok(Self {
            follow: build(reqwest::redirect::Policy::limited(5))?,
            stop: build(reqwest::redirect::Policy::none())?,
            timeout,
        })
    }
}

impl OAuthHttpClient for OAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        let boxed = |error: &dyn fmt::Display| -> OAuthHttpClientError { error.to_string().into() };
        Box::pin(async move {
            let client = match request.redirect_policy {
                OAuthHttpRedirectPolicy::Stop => &self.stop,
                _ => &self.follow,
            };
            let timeout = request
                .timeout
                .map_or(self.timeout, |asked| asked.min(self.timeout));
            let mut outgoing =
                reqwest::Request::try_from(request.request).map_err(|e| boxed(&e))?;
            *outgoing.timeout_mut() = Some(timeout);
            let mut response = client.execute(outgoing).await.map_err(|e| boxed(&e))?;
            let mut answer = hyper::Response::builder()
                .status(response.status())
                .version(response.version());
            for (name, value) in response.headers() {
                answer = answer.header(name, value);
            }
            let body = read_answer(&mut response).await?;
            answer.body(body).map_err(|e| boxed(&e))
        })
    }
}

impl OAuthHttp {
    /// GETs `url`, following no redirect: the answer's status and body.
    async fn get(
        &self,
        url: reqwest::Url,
    ) -> Result<(reqwest::StatusCode, Vec<u8>), OAuthHttpClientError> {
        let mut response = self
            .stop
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        Ok((status, read_answer(&mut response).await?))
    }

    /// POSTs `form` (`application/x-www-form-urlencoded`) to `url`, following no redirect:
    /// the answer's status and body.
    async fn post_form(
        &self,
        url: reqwest::Url,
        form: String,
    ) -> Result<(reqwest::StatusCode, Vec<u8>), OAuthHttpClientError> {
        let mut response = self
            .stop
            .post(url)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .body(form)
            .send()
            .await
            // Without the URL: the error says what failed, never what was sent.
            .map_err(|e| e.without_url().to_string())?;
        let status = response.status();
        Ok((status, read_answer(&mut response).await?))
    }
}

/// The body of `response`, refused past [`MAX_ANSWER`] bytes.
async fn read_answer(response: &mut reqwest::Response) -> Result<Vec<u8>, OAuthHttpClientError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if chunk.len() > MAX_ANSWER - body.len() {
            return Err(format!("the answer is larger than {MAX_ANSWER} bytes").into());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The store given to rmcp's manager: the user's, shared by every manager of the connection.
struct Shared(Arc<dyn CredentialStore>);

type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, AuthError>> + Send + 'a>>;

impl CredentialStore for Shared {
    fn load<'a, 'b>(&'a self) -> StoreFuture<'b, Option<StoredCredentials>>
    where
        'a: 'b,
        Self: 'b,
    {
        self.0.load()
    }

    fn save<'a, 'b>(&'a self, credentials: StoredCredentials) -> StoreFuture<'b, ()>
    where
        'a: 'b,
        Self: 'b,
    {
        self.0.save(credentials)
    }

    fn clear<'a, 'b>(&'a self) -> StoreFuture<'b, ()>
    where
        'a: 'b,
        Self: 'b,
    {
        self.0.clear()
    }

    fn on_refresh_token_rejected<'a, 'c, 'b>(
        &'a self,
        credentials: &'c StoredCredentials,
    ) -> StoreFuture<'b, ()>
    where
        'a: 'b,
        'c: 'b,
        Self: 'b,
    {
        self.0.on_refresh_token_rejected(credentials)
    }

    fn acquire_refresh_guard<'a, 'b>(&'a self) -> StoreFuture<'b, Option<CredentialRefreshGuard>>
    where
        'a: 'b,
        Self: 'b,
    {
        self.0.acquire_refresh_guard()
    }
}

/// One connection's authorization: rmcp's manager once the server first asked for a token.
pub(super) struct Authorizer {
    oauth: OAuth,
    /// The server's URL: the resource.
    resource: String,
    manager: Mutex<Option<AuthorizationManager>>,
    /// The authorization server's metadata, as discovery found it.
    metadata: std::sync::Mutex<Option<AuthorizationMetadata>>,
}

/// `future`, failed as a timeout after `limit`.
async fn bounded<T>(
    limit: Duration,
    what: &str,
    future: impl Future<Output = Result<T, AuthError>>,
) -> Result<T, AuthError> {
    match tokio::time::timeout(limit, future).await {
        Ok(result) => result,
        Err(_) => Err(AuthError::InternalError(format!(
            "{what} did not finish within {}",
            render::format_duration(limit)
        ))),
    }
}

impl Authorizer {
    pub(super) fn new(oauth: OAuth, resource: String) -> Arc<Self> {
        Arc::new(Self {
            oauth,
            resource,
            manager: Mutex::new(None),
            metadata: std::sync::Mutex::new(None),
        })
    }

    async fn new_manager(&self) -> Result<AuthorizationManager, AuthError> {
        let http = Arc::new(OAuthHttp::new(self.oauth.timeout)?);
        let mut manager =
            AuthorizationManager::new_with_oauth_http_client(self.resource.as_str(), http).await?;
        manager.set_credential_store(Shared(Arc::clone(&self.oauth.store)));
        Ok(manager)
    }

    /// The token to send: the one kept, refreshed if it expired; `None` before the first
    /// authorization. Tokens left in the store by an earlier connection are used (their
    /// server's metadata read first, to refresh them).
    async fn token(&self) -> Result<Option<String>, AuthError> {
        let limit = self.oauth.timeout;
        let mut manager = self.manager.lock().await;
        if manager.is_none() {
            let stored = bounded(limit, "reading the token store", self.oauth.store.load()).await?;
            if stored.is_none_or(|stored| stored.token_response.is_none()) {
                return Ok(None);
            }
            let mut fresh = self.new_manager().await?;
            let initialized = match self.discover(&mut fresh, None).await {
                Ok(()) => {
                    bounded(
                        limit,
                        "reading the token store",
                        fresh.initialize_from_store(),
                    )
                    .await
                }
                Err(error) => Err(error),
            };
            match initialized {
                Ok(true) => *manager = Some(fresh),
                Ok(false) => return Ok(None),
                Err(error) => {
                    tracing::warn!(%error, "the stored OAuth tokens cannot be used; the server will be asked anew");
                    return Ok(None);
                }
            }
        }
        let Some(manager) = manager.as_mut() else {
            return Ok(None);
        };
        match bounded(limit, "refreshing the token", manager.get_access_token()).await {
            Ok(token) => Ok(Some(token)),
            // An expired client-credentials token: a new exchange, no need to be refused.
            Err(AuthError::AuthorizationRequired)
                if !matches!(self.oauth.grant, Grant::Code { .. }) =>
            {
                let scopes = manager.get_current_scopes().await;
                self.exchange_unattended(manager, scopes).await?;
                bounded(limit, "reading the token", manager.get_access_token())
                    .await
                    .map(Some)
            }
            Err(AuthError::AuthorizationRequired) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Discovery, from the 401's `challenge` if there is one: the authorization server's
    /// metadata, kept here and set on `manager`. rmcp's discovery (protected-resource metadata
    /// first, then the server's own authorization-server metadata, with RFC 8414's issuer
    /// check, then the 2025-03-26 default endpoints); when it refuses a document for its
    /// issuer after a 401, the 2025-03-26 location for a server that offers no
    /// protected-resource metadata ([`legacy`], whose docs say why the issuer is checked
    /// against the origin there), and rmcp's refusal stands otherwise. Without a 401 (tokens
    /// found in the store), a refusal stands: the server's 401 is what shows it names no
    /// protected-resource metadata.
    async fn discover(
        &self,
        manager: &mut AuthorizationManager,
        challenge: Option<&str>,
    ) -> Result<(), AuthError> {
        let what = "reading the server's authorization metadata";
        let limit = self.oauth.timeout;
        let resolved = bounded(
            limit,
            what,
            manager.resolve_metadata_from_challenge(challenge),
        )
        .await;
        let metadata = match (resolved, challenge) {
            (Ok(resolution), _) => resolution.metadata,
            (Err(refused @ AuthError::AuthorizationServerMismatch { .. }), Some(challenge)) => {
                let http = OAuthHttp::new(limit)?;
                // Three requests at most, each bounded by `limit`.
                bounded(3 * limit, what, async {
                    Ok(legacy::metadata(&http, &self.resource, challenge).await)
                })
                .await?
                .ok_or(refused)?
            }
            (Err(error), _) => return Err(error),
        };
        *self.metadata.lock().unwrap_or_else(|e| e.into_inner()) = Some(metadata.clone());
        manager.set_metadata(metadata);
        Ok(())
    }

    /// The user's step at `url`, bounded; the callback it returned.
    async fn user_step(&self, url: String) -> Result<AuthorizationCallback, AuthError> {
        let Grant::Code { authorize, .. } = &self.oauth.grant else {
            return Err(AuthError::AuthorizationFailed(
                "a client-credentials client has no user to ask".to_owned(),
            ));
        };
        tracing::info!(server = %self.resource, "authorizing with the MCP server's authorization server");
        let limit = self.oauth.authorize_timeout;
        let redirected = match tokio::time::timeout(limit, authorize.authorize(url)).await {
            Ok(Ok(redirected)) => redirected,
            Ok(Err(error)) => {
                return Err(AuthError::AuthorizationFailed(format!(
                    "the user's step failed: {error}"
                )));
            }
            Err(_) => {
                return Err(AuthError::AuthorizationFailed(format!(
                    "the user's step did not finish within {}",
                    render::format_duration(limit)
                )));
            }
        };
        AuthorizationCallback::from_redirect_url(&redirected)
    }

    /// The first authorization: discovery from the 401's `challenge`; then the tokens in the
    /// store, else the client's identity, the user's step, the token.
    async fn first(&self, challenge: &str) -> Result<AuthorizationManager, AuthError> {
        let limit = self.oauth.timeout;
        let oauth = &self.oauth;
        let mut manager = self.new_manager().await?;
        self.discover(&mut manager, Some(challenge)).await?;
        let redirect_uri = match &oauth.grant {
            Grant::Code { redirect_uri, .. } => {
                // Tokens in the store that could not be used before this 401 (their server's
                // metadata is found only from a 401, as a 2025-03-26 server's is) are tried
                // before the user is asked: none of them was sent yet on this connection.
                let stored = bounded(
                    limit,
                    "reading the token store",
                    manager.initialize_from_store(),
                )
                .await;
                if matches!(stored, Ok(true)) {
                    return Ok(manager);
                }
                redirect_uri
            }
            Grant::ClientCredentials | Grant::ClientCredentialsJwt(_) | Grant::Enterprise(_) => {
                let scopes = if oauth.scopes.is_empty() {
                    manager.select_initial_scopes(&[]).await
                } else {
                    oauth.scopes.clone()
                };
                self.exchange_unattended(&mut manager, scopes).await?;
                return Ok(manager);
            }
        };
        let mut request =
            AuthorizationRequest::new(redirect_uri).with_client_name(&oauth.client_name);
        request = if oauth.scopes.is_empty() {
            request.with_initial_scope_selection()
        } else {
            request.with_scopes(oauth.scopes.iter().cloned())
        };
        if let Some(client_id) = &oauth.client_id {
            request = request.with_preregistered_client(client_id);
            if let Some(secret) = &oauth.client_secret {
                request = request.with_client_secret(secret.expose());
            }
        }
        if let Some(url) = &oauth.client_metadata_url {
            request = request.with_client_metadata_url(url);
        }
        let session =
            match tokio::time::timeout(limit, AuthorizationSession::new(manager, request)).await {
                Ok(Ok(session)) => session,
                Ok(Err((_, error))) => return Err(error),
                Err(_) => {
                    return Err(AuthError::RegistrationFailed(format!(
                        "registering the client did not finish within {}",
                        render::format_duration(limit)
                    )));
                }
            };
        let callback = self
            .user_step(session.get_authorization_url().to_owned())
            .await?;
        bounded(
            limit,
            "the token request",
            session.handle_callback_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            ),
        )
        .await?;
        Ok(session.auth_manager)
    }

    /// A token without the user, for `scopes`: client credentials, or enterprise-managed.
    async fn exchange_unattended(
        &self,
        manager: &mut AuthorizationManager,
        scopes: Vec<String>,
    ) -> Result<(), AuthError> {
        match &self.oauth.grant {
            Grant::Enterprise(idp) => self.exchange_enterprise(manager, idp, scopes).await,
            Grant::ClientCredentialsJwt(key) => self.exchange_jwt(manager, key, scopes).await,
            _ => self.exchange_credentials(manager, scopes).await,
        }
    }

    /// The authorization server's metadata: as discovery found it, else read again.
    async fn known_metadata(
        &self,
        manager: &AuthorizationManager,
    ) -> Result<AuthorizationMetadata, AuthError> {
        let known = self
            .metadata
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match known {
            Some(metadata) => Ok(metadata),
            None => Ok(bounded(
                self.oauth.timeout,
                "reading the server's authorization metadata",
                manager.resolve_metadata(),
            )
            .await?
            .metadata),
        }
    }

    /// Keeps `token` (a token response, as JSON), got without the user for `client_id`, in
    /// the store, as the manager reads it: with no refresh token (an unattended client gets a
    /// new token by a new exchange, RFC 6749 §4.4.3), and with the client configured, so that
    /// an expired token makes the manager ask for a new exchange rather than fail.
    async fn keep_unattended_token(
        &self,
        manager: &mut AuthorizationManager,
        metadata: AuthorizationMetadata,
        client_id: String,
        mut token: serde_json::Value,
        granted: Vec<String>,
    ) -> Result<(), AuthError> {
        if let Some(token) = token.as_object_mut() {
            token.remove("refresh_token");
        }
        let issuer = metadata.issuer.clone();
        manager.set_metadata(metadata);
        manager.configure_client_id(&client_id)?;
        let response = serde_json::from_value(token).map_err(|error| {
            AuthError::InternalError(format!("the token response does not read: {error}"))
        })?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        let stored = StoredCredentials::new(client_id, Some(response), granted, Some(now))
            .with_issuer(issuer);
        bounded(
            self.oauth.timeout,
            "saving the token",
            self.oauth.store.save(stored),
        )
        .await
    }

    /// The client-credentials exchange for `scopes`, the client authenticated by an assertion
    /// signed with `key` (`private_key_jwt`); the token is kept in the store.
    async fn exchange_jwt(
        &self,
        manager: &mut AuthorizationManager,
        key: &SigningKey,
        scopes: Vec<String>,
    ) -> Result<(), AuthError> {
        let refused = AuthError::ClientCredentialsError;
        let metadata = self.known_metadata(manager).await?;
        let client_id = self.oauth.client_id.clone().unwrap_or_default();
        let issuer = metadata.issuer.clone().ok_or_else(|| {
            refused(
                "the authorization server's metadata names no issuer, the audience of a client \
                 assertion"
                    .to_owned(),
            )
        })?;
        let listed = |field: &str, value: &str| {
            metadata
                .additional_fields
                .get(field)
                .and_then(serde_json::Value::as_array)
                .is_none_or(|values| values.iter().any(|listed| listed == value))
        };
        if !listed("token_endpoint_auth_methods_supported", "private_key_jwt") {
            return Err(refused(
                "the authorization server does not accept private_key_jwt client authentication"
                    .to_owned(),
            ));
        }
        if !listed(
            "token_endpoint_auth_signing_alg_values_supported",
            key.algorithm(),
        ) {
            return Err(refused(format!(
                "the authorization server does not accept client assertions signed with {}",
                key.algorithm()
            )));
        }
        let endpoint = reqwest::Url::parse(&metadata.token_endpoint)
            .map_err(|error| refused(format!("the token endpoint is not a URL: {error}")))?;
        if !secure_endpoint(&self.resource, &endpoint) {
            return Err(refused(
                "the token endpoint is not HTTPS: a client assertion is sent over HTTPS only (or \
                 on loopback, to a server on loopback)"
                    .to_owned(),
            ));
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        let assertion = key
            .assertion(&client_id, &issuer, now)
            .map_err(|_| refused("signing the client assertion failed".to_owned()))?;
        let form = {
            let mut form = oauth2::url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "client_credentials")
                .append_pair(
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                )
                .append_pair("client_assertion", assertion.expose())
                .append_pair("resource", &self.resource);
            if !scopes.is_empty() {
                form.append_pair("scope", &scopes.join(" "));
            }
            Secret::new(form.finish())
        };
        let http = OAuthHttp::new(self.oauth.timeout)?;
        let (status, body) = bounded(self.oauth.timeout, "the token request", async {
            http.post_form(endpoint, form.into_inner())
                .await
                .map_err(|error| refused(format!("the token request failed: {error}")))
        })
        .await?;
        // A server may echo what it was sent: the assertion is taken out of what it says.
        let told = |text: &str| text.replace(assertion.expose().as_str(), "[client assertion]");
        let body: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|_| refused(format!("the token endpoint answered {status} with no JSON")))?;
        if !status.is_success() {
            let field = |name: &str| body[name].as_str().map(&told).unwrap_or_default();
            return Err(refused(format!(
                "the token endpoint refused the client ({status}): {} {}",
                field("error"),
                field("error_description"),
            )));
        }
        let granted = match body["scope"].as_str() {
            Some(scope) => scope.split_whitespace().map(str::to_owned).collect(),
            None => scopes,
        };
        self.keep_unattended_token(manager, metadata, client_id, body, granted)
            .await
    }

    /// The enterprise-managed exchanges for `scopes`; the token is kept in the store.
    async fn exchange_enterprise(
        &self,
        manager: &mut AuthorizationManager,
        idp: &IdentityProvider,
        scopes: Vec<String>,
    ) -> Result<(), AuthError> {
        let oauth = &self.oauth;
        let metadata = self.known_metadata(manager).await?;
        let issuer = metadata.issuer.clone().ok_or_else(|| {
            AuthError::MetadataError("the authorization server's metadata names no issuer".into())
        })?;
        let client_id = oauth.client_id.clone().unwrap_or_default();
        let secret = oauth
            .client_secret
            .as_ref()
            .map(|secret| secret.expose().clone())
            .unwrap_or_default();
        let resource_server =
            EmaAuthorizationServer::new(issuer, metadata.token_endpoint.clone(), client_id.clone())
                .with_client_authentication(EmaClientAuthentication::ClientSecretBasic(
                    oauth2::ClientSecret::new(secret),
                ));
        let identity_provider = EmaAuthorizationServer::new(
            idp.issuer.clone(),
            idp.token_endpoint.clone(),
            idp.client_id.clone(),
        );
        let http = OAuthHttp::new(oauth.timeout)?;
        let exchange = EmaExchangeRequest::new_with_id_token(
            identity_provider,
            resource_server,
            &self.resource,
            idp.id_token.expose(),
        )
        .with_scopes(scopes)
        .exchange(&http, &http);
        let token = match tokio::time::timeout(2 * oauth.timeout, exchange).await {
            Ok(Ok(token)) => token,
            Ok(Err(error)) => return Err(AuthError::TokenExchangeFailed(error.to_string())),
            Err(_) => {
                return Err(AuthError::TokenExchangeFailed(format!(
                    "the exchanges did not finish within {}",
                    render::format_duration(2 * oauth.timeout)
                )));
            }
        };
        let granted: Vec<String> = token.scopes.iter().cloned().collect();
        let mut response = serde_json::json!({
            "access_token": token.access_token.secret(),
            "token_type": "Bearer",
        });
        if let Some(expires_in) = token.expires_in {
            response["expires_in"] = expires_in.as_secs().into();
        }
        self.keep_unattended_token(manager, metadata, client_id, response, granted)
            .await
    }

    /// The client-credentials exchange for `scopes`.
    async fn exchange_credentials(
        &self,
        manager: &mut AuthorizationManager,
        scopes: Vec<String>,
    ) -> Result<(), AuthError> {
        let oauth = &self.oauth;
        let config = ClientCredentialsConfig::ClientSecret {
            client_id: oauth.client_id.clone().unwrap_or_default(),
            client_secret: oauth
                .client_secret
                .as_ref()
                .map(|secret| secret.expose().clone())
                .unwrap_or_default(),
            scopes,
            resource: Some(self.resource.clone()),
        };
        manager.configure_client_credentials(&config)?;
        bounded(
            oauth.timeout,
            "the token request",
            manager.exchange_client_credentials(&config),
        )
        .await?;
        Ok(())
    }

    /// A token to send again after the server refused `sent` with `challenge`: one another
    /// request got meanwhile, a refreshed one, or one from a new authorization (for more
    /// scope when `insufficient`).
    async fn again(
        &self,
        sent: Option<&str>,
        challenge: &str,
        insufficient: Option<Option<String>>,
    ) -> Result<String, AuthError> {
        let limit = self.oauth.timeout;
        let mut slot = self.manager.lock().await;
        let Some(manager) = slot.as_mut() else {
            let manager = self.first(challenge).await?;
            let token = bounded(limit, "reading the token", manager.get_access_token()).await;
            *slot = Some(manager);
            return token;
        };
        if let Ok(current) =
            bounded(limit, "refreshing the token", manager.get_access_token()).await
            && Some(current.as_str()) != sent
        {
            return Ok(current);
        }
        if !matches!(self.oauth.grant, Grant::Code { .. }) {
            let mut scopes = manager.get_current_scopes().await;
            scopes.extend(
                insufficient
                    .flatten()
                    .or_else(|| scope_of(challenge, &self.resource))
                    .iter()
                    .flat_map(|scope| scope.split_whitespace().map(str::to_owned)),
            );
            if scopes.is_empty() {
                scopes.clone_from(&self.oauth.scopes);
            }
            self.exchange_unattended(manager, scopes).await?;
            return bounded(limit, "reading the token", manager.get_access_token()).await;
        }
        let url = match insufficient {
            Some(required) => {
                let required = required
                    .or_else(|| scope_of(challenge, &self.resource))
                    .unwrap_or_default();
                manager.request_scope_upgrade(&required).await?
            }
            None => {
                if sent.is_some()
                    && bounded(limit, "refreshing the token", manager.refresh_token())
                        .await
                        .is_ok()
                    && let Ok(token) =
                        bounded(limit, "reading the token", manager.get_access_token()).await
                    && Some(token.as_str()) != sent
                {
                    return Ok(token);
                }
                let scope = scope_of(challenge, &self.resource);
                let scopes = manager.select_scopes(scope.as_deref(), &[]);
                let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
                manager.get_authorization_url(&scopes).await?
            }
        };
        let callback = self.user_step(url).await?;
        bounded(
            limit,
            "the token request",
            manager.exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            ),
        )
        .await?;
        bounded(limit, "reading the token", manager.get_access_token()).await
    }
}

/// Whether a client assertion may be sent to `endpoint` for the MCP server `resource`: over
/// HTTPS, or over HTTP on loopback when the MCP server is on loopback too.
fn secure_endpoint(resource: &str, endpoint: &reqwest::Url) -> bool {
    use oauth2::url::Host;
    let loopback = |url: &reqwest::Url| match url.host() {
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    endpoint.scheme() == "https"
        || (endpoint.scheme() == "http"
            && loopback(endpoint)
            && reqwest::Url::parse(resource).is_ok_and(|resource| loopback(&resource)))
}

/// The `scope` of a `WWW-Authenticate` challenge.
fn scope_of(challenge: &str, resource: &str) -> Option<String> {
    let base = reqwest::Url::parse(resource).ok()?;
    WWWAuthenticateParams::parse(challenge, &base).scope
}

/// An HTTP client whose requests carry the connection's access token, authorizing when the
/// server asks for one.
#[derive(Clone)]
pub(super) struct Authorized<C> {
    inner: C,
    authorizer: Arc<Authorizer>,
}

impl<C> Authorized<C> {
    pub(super) fn new(inner: C, authorizer: Arc<Authorizer>) -> Self {
        Self { inner, authorizer }
    }
}

impl<C> fmt::Debug for Authorized<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorized")
            .field("oauth", &self.authorizer.oauth)
            .finish_non_exhaustive()
    }
}

impl<C: StreamableHttpClient + Sync> Authorized<C> {
    /// `call` with the token; sent again (at most [`MAX_REAUTHORIZATIONS`] times) with a
    /// new one when the server refuses it.
    async fn send<T, F, Fut>(&self, call: F) -> Result<T, StreamableHttpError<C::Error>>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<C::Error>>>,
    {
        let mut token = self.authorizer.token().await?;
        let mut again = 0;
        loop {
            let result = call(token.clone()).await;
            if again == MAX_REAUTHORIZATIONS {
                return result;
            }
            let (challenge, insufficient) = match &result {
                Err(StreamableHttpError::AuthRequired(error)) => {
                    (error.www_authenticate_header.clone(), None)
                }
                Err(StreamableHttpError::InsufficientScope(error)) => (
                    error.www_authenticate_header.clone(),
                    Some(error.required_scope.clone()),
                ),
                _ => return result,
            };
            again += 1;
            token = Some(
                self.authorizer
                    .again(token.as_deref(), &challenge, insufficient)
                    .await?,
            );
        }
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for Authorized<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.send(|token| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.send(|token| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.send(|token| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.send(|token| {
            self.inner.delete_session(
                uri.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, StreamableHttpError<Self::Error>> {
        self.send(|token| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, StreamableHttpError<Self::Error>> {
        self.send(|token| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::secure_endpoint;

    #[test]
    fn an_assertion_goes_over_https_or_between_loopback_hosts_only() {
        let endpoint = |url: &str| reqwest::Url::parse(url).unwrap();
        let remote = "https://mcp.example.com/mcp";
        assert!(secure_endpoint(
            remote,
            &endpoint("https://as.example.com/token")
        ));
        assert!(!secure_endpoint(
            remote,
            &endpoint("http://as.example.com/token")
        ));
        // A loopback token endpoint for a remote server is not the server's: refused.
        assert!(!secure_endpoint(
            remote,
            &endpoint("http://127.0.0.1:9/token")
        ));
        for local in [
            "http://127.0.0.1:8000/mcp",
            "http://localhost:8000/mcp",
            "http://[::1]:8000/mcp",
        ] {
            assert!(secure_endpoint(
                local,
                &endpoint("http://localhost:9000/token")
            ));
            assert!(secure_endpoint(
                local,
                &endpoint("http://127.0.0.1:9000/token")
            ));
            assert!(!secure_endpoint(local, &endpoint("http://10.0.0.1/token")));
        }
    }
}
