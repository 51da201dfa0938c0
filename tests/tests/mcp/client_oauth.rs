//! `McpClient` against an MCP server that requires OAuth, with its authorization server, both
//! served here on loopback: the whole flow (the 401, protected-resource and
//! authorization-server metadata, dynamic registration, the user's step, PKCE S256 and the
//! `resource` parameter checked by the server, the token), a refresh when the token expires and
//! one when the server refuses it, the client credentials grant with a secret and with a
//! private key (`private_key_jwt`, each assertion checked by the server), and tokens, keys and
//! assertions kept out of `Debug` output, errors and logs.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use http::{Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::TokioIo;
use reticent::mcp::oauth::{OAuth, SigningKey};
use reticent::mcp::rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use reticent::mcp::rmcp::transport::streamable_http_server::StreamableHttpService;
use reticent::mcp::{HttpSessions, McpServer};
use reticent::mcp::{McpClient, McpClientBuilder};
use reticent::{Tool, ToolContext};
use reticent_tests::mcp::oauth::follow;
use reticent_tests::spans::capture_spans;
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair,
    UnparsedPublicKey,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;
use tower_service::Service;

/// Every token the authorization server issues holds this: no log, error or `Debug` output
/// may.
const CANARY: &str = "CANARY7f3a";

/// Echoes its text.
#[reticent::tool]
fn echo(text: String) -> String {
    text
}

type Body = BoxBody<Bytes, Infallible>;

/// What the authorization server and the MCP server saw and hold.
#[derive(Default)]
struct Seen {
    /// Clients registered.
    registered: usize,
    /// Authorization requests: (code challenge, resource).
    authorizations: Vec<(String, String)>,
    /// Codes issued: code → (challenge, resource).
    codes: HashMap<String, (String, String)>,
    /// The grant type of each token request, in order.
    grants: Vec<String>,
    /// The `resource` of each token request.
    token_resources: Vec<String>,
    /// Access tokens the MCP server accepts.
    valid: Vec<String>,
    /// Refresh tokens the authorization server accepts.
    refresh: Vec<String>,
    /// The access tokens the MCP server accepted, in order.
    used: Vec<String>,
    /// The client assertions the authorization server accepted, in order.
    assertions: Vec<String>,
    /// The `jti` of each assertion accepted: one seen twice is a replay, refused.
    jtis: Vec<String>,
}

/// The client of the `private_key_jwt` tests: its id, and its key in PKCS#8.
const JWT_CLIENT: &str = "keyed";

/// A P-256 key for the `private_key_jwt` client: the private key as PEM, and the public key.
fn client_key() -> (String, Vec<u8>) {
    let random = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random).unwrap();
    let public =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &random)
            .unwrap()
            .public_key()
            .as_ref()
            .to_vec();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        STANDARD.encode(pkcs8.as_ref())
    );
    (pem, public)
}

/// Whether `assertion` is a client assertion (RFC 7523) of [`JWT_CLIENT`] for the issuer
/// `audience`, signed with the key whose public key is `public`, unexpired, its `jti` not
/// seen before (then recorded in `seen`).
fn assertion_holds(assertion: &str, public: &[u8], audience: &str, seen: &mut Seen) -> bool {
    let Some((signed, signature)) = assertion.rsplit_once('.') else {
        return false;
    };
    let Some((header, claims)) = signed.split_once('.') else {
        return false;
    };
    let decode = |part: &str| -> Value {
        URL_SAFE_NO_PAD
            .decode(part)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    };
    let (header, claims) = (decode(header), decode(claims));
    let Ok(signature) = URL_SAFE_NO_PAD.decode(signature) else {
        return false;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let jti = claims["jti"].as_str().unwrap_or_default().to_owned();
    let holds = UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, public)
        .verify(signed.as_bytes(), &signature)
        .is_ok()
        && header["alg"] == "ES256"
        && claims["iss"] == JWT_CLIENT
        && claims["sub"] == JWT_CLIENT
        && claims["aud"] == audience
        && claims["exp"]
            .as_u64()
            .is_some_and(|exp| exp > now && exp <= now + 600)
        && !jti.is_empty()
        && !seen.jtis.contains(&jti);
    if holds {
        seen.jtis.push(jti);
        seen.assertions.push(assertion.to_owned());
    }
    holds
}

/// The MCP server and its authorization server, at one origin.
struct Protected {
    base: String,
    seen: Mutex<Seen>,
    issued: AtomicUsize,
    /// The lifetime of the tokens issued, in seconds.
    expires_in: u64,
    /// The public key of the `private_key_jwt` client.
    client_public_key: Vec<u8>,
    /// The token endpoint refuses every assertion, saying it back in its refusal.
    echo_refusals: std::sync::atomic::AtomicBool,
    /// `None` when the server offers protected-resource metadata (RFC 9728), named in its 401
    /// and served at the well-known location; else the status the well-known location answers
    /// with, and a 401 that names none (a 404: a server of the 2025-03-26 revision).
    prm_missing: Mutex<Option<u16>>,
    /// The issuer the authorization server's metadata names, when not its origin.
    issuer: Mutex<Option<String>>,
    /// The algorithms the authorization server's metadata says it accepts client assertions
    /// signed with.
    assertion_algorithms: Mutex<Vec<&'static str>>,
    mcp: StreamableHttpService<McpServer, HttpSessions>,
}

fn json_response(status: StatusCode, body: &Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())).boxed())
        .unwrap()
}

/// `BASE64URL(SHA256(verifier))`, without padding.
fn s256(verifier: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let digest = Sha256::digest(verifier.as_bytes());
    let mut out = String::new();
    for chunk in digest.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// The `application/x-www-form-urlencoded` pairs of `text`.
fn form(text: &str) -> HashMap<String, String> {
    text.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.replace('+', " ").into_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = bytes.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(std::str::from_utf8(hex).unwrap_or("zz"), 16)
        {
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Protected {
    fn resource(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// A new access token and refresh token, recorded as valid.
    fn issue(&self, seen: &mut Seen) -> Value {
        let n = self.issued.fetch_add(1, Ordering::SeqCst) + 1;
        let access = format!("{CANARY}-access-{n}");
        let refresh = format!("{CANARY}-refresh-{n}");
        seen.valid.push(access.clone());
        seen.refresh.push(refresh.clone());
        json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "refresh_token": refresh,
        })
    }

    async fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
    ) -> Result<Response<Body>, Infallible> {
        let path = request.uri().path().to_owned();
        let query = request.uri().query().unwrap_or("").to_owned();
        let base = &self.base;
        Ok(match (request.method().clone(), path.as_str()) {
            (Method::GET, "/.well-known/oauth-protected-resource/mcp")
                if self.prm_missing.lock().unwrap().is_some() =>
            {
                let status = self.prm_missing.lock().unwrap().unwrap_or(404);
                json_response(
                    StatusCode::from_u16(status).unwrap(),
                    &json!({"error": "no document"}),
                )
            }
            (Method::GET, "/.well-known/oauth-protected-resource/mcp") => json_response(
                StatusCode::OK,
                &json!({"resource": self.resource(), "authorization_servers": [base]}),
            ),
            (Method::GET, "/.well-known/oauth-authorization-server") => json_response(
                StatusCode::OK,
                &json!({
                    "issuer": self.issuer.lock().unwrap().clone().unwrap_or_else(|| base.clone()),
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "registration_endpoint": format!("{base}/register"),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"],
                    "token_endpoint_auth_signing_alg_values_supported":
                        *self.assertion_algorithms.lock().unwrap(),
                }),
            ),
            (Method::POST, "/register") => {
                let body = request.into_body().collect().await.unwrap().to_bytes();
                let body: Value = serde_json::from_slice(&body).unwrap_or_default();
                self.seen.lock().unwrap().registered += 1;
                json_response(
                    StatusCode::CREATED,
                    &json!({"client_id": "registered-client", "redirect_uris": body["redirect_uris"]}),
                )
            }
            (Method::GET, "/authorize") => {
                let query = form(&query);
                let field = |name: &str| query.get(name).cloned().unwrap_or_default();
                if field("code_challenge_method") != "S256" || field("code_challenge").is_empty() {
                    return Ok(json_response(
                        StatusCode::BAD_REQUEST,
                        &json!({"error": "invalid_request"}),
                    ));
                }
                let mut seen = self.seen.lock().unwrap();
                let code = format!("code-{}", seen.authorizations.len() + 1);
                seen.authorizations
                    .push((field("code_challenge"), field("resource")));
                seen.codes
                    .insert(code.clone(), (field("code_challenge"), field("resource")));
                let location = format!(
                    "{}?code={code}&state={}",
                    field("redirect_uri"),
                    field("state")
                );
                Response::builder()
                    .status(StatusCode::FOUND)
                    .header("location", location)
                    .body(Full::new(Bytes::new()).boxed())
                    .unwrap()
            }
            (Method::POST, "/token") => {
                let body = request.into_body().collect().await.unwrap().to_bytes();
                let body = form(&String::from_utf8_lossy(&body));
                let field = |name: &str| body.get(name).cloned().unwrap_or_default();
                let mut seen = self.seen.lock().unwrap();
                seen.grants.push(field("grant_type"));
                seen.token_resources.push(field("resource"));
                let refused = json!({"error": "invalid_grant"});
                match field("grant_type").as_str() {
                    "authorization_code" => match seen.codes.remove(&field("code")) {
                        Some((challenge, resource))
                            if s256(&field("code_verifier")) == challenge
                                && resource == self.resource() =>
                        {
                            let tokens = self.issue(&mut seen);
                            json_response(StatusCode::OK, &tokens)
                        }
                        _ => json_response(StatusCode::BAD_REQUEST, &refused),
                    },
                    "client_credentials"
                        if field("client_id") == "unattended"
                            && field("client_secret") == format!("{CANARY}-secret") =>
                    {
                        let mut tokens = self.issue(&mut seen);
                        tokens.as_object_mut().unwrap().remove("refresh_token");
                        json_response(StatusCode::OK, &tokens)
                    }
                    "client_credentials"
                        if field("client_assertion_type")
                            == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" =>
                    {
                        let assertion = field("client_assertion");
                        if self.echo_refusals.load(Ordering::SeqCst) {
                            return Ok(json_response(
                                StatusCode::UNAUTHORIZED,
                                &json!({
                                    "error": "invalid_client",
                                    "error_description": format!("no such client: {assertion}"),
                                }),
                            ));
                        }
                        if !assertion_holds(&assertion, &self.client_public_key, base, &mut seen) {
                            return Ok(json_response(
                                StatusCode::UNAUTHORIZED,
                                &json!({"error": "invalid_client"}),
                            ));
                        }
                        // A refresh token too, which the client must not keep: it gets a new
                        // token by a new exchange.
                        let tokens = self.issue(&mut seen);
                        json_response(StatusCode::OK, &tokens)
                    }
                    "refresh_token" if seen.refresh.contains(&field("refresh_token")) => {
                        let tokens = self.issue(&mut seen);
                        json_response(StatusCode::OK, &tokens)
                    }
                    _ => json_response(StatusCode::BAD_REQUEST, &refused),
                }
            }
            (_, "/mcp") => {
                let token = request
                    .headers()
                    .get("authorization")
                    .and_then(|value| value.to_str().ok())
                    .and_then(|value| value.strip_prefix("Bearer "))
                    .map(str::to_owned);
                let accepted = {
                    let mut seen = self.seen.lock().unwrap();
                    match token.filter(|token| seen.valid.contains(token)) {
                        Some(token) => {
                            seen.used.push(token);
                            true
                        }
                        None => false,
                    }
                };
                if !accepted {
                    let challenge = if self.prm_missing.lock().unwrap().is_none() {
                        format!(
                            "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                        )
                    } else {
                        "Bearer error=\"invalid_token\"".to_owned()
                    };
                    return Ok(Response::builder()
                        .status(StatusCode::UNAUTHORIZED)
                        .header("www-authenticate", challenge)
                        .body(Full::new(Bytes::new()).boxed())
                        .unwrap());
                }
                let mut mcp = self.mcp.clone();
                let response = mcp.call(request).await.unwrap();
                response.map(|body| body.boxed())
            }
            _ => json_response(StatusCode::NOT_FOUND, &json!({"error": "not_found"})),
        })
    }

    /// The MCP server refuses every access token issued so far.
    fn revoke_access(&self) {
        self.seen.lock().unwrap().valid.clear();
    }

    /// The authorization server refuses every refresh token issued so far.
    fn revoke_refresh(&self) {
        self.seen.lock().unwrap().refresh.clear();
    }
}

/// Serves the protected MCP server and its authorization server on loopback.
async fn serve(expires_in: u64) -> Arc<Protected> {
    serve_for(expires_in, client_key().1).await
}

/// [`serve`], with `client_public_key` as the `private_key_jwt` client's public key.
async fn serve_for(expires_in: u64, client_public_key: Vec<u8>) -> Arc<Protected> {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = McpServer::builder().tool(Echo).build().unwrap();
    let protected = Arc::new(Protected {
        base,
        seen: Mutex::default(),
        issued: AtomicUsize::new(0),
        expires_in,
        client_public_key,
        echo_refusals: std::sync::atomic::AtomicBool::new(false),
        prm_missing: Mutex::default(),
        issuer: Mutex::default(),
        assertion_algorithms: Mutex::new(vec!["ES256"]),
        mcp: server.http_service(StreamableHttpServerConfig::default()),
    });
    let serving = Arc::clone(&protected);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let protected = Arc::clone(&serving);
            let service =
                hyper::service::service_fn(move |request| Arc::clone(&protected).handle(request));
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service),
            );
        }
    });
    protected
}

/// How many times the user's step ran.
#[derive(Clone, Default)]
struct Steps(Arc<AtomicUsize>);

/// The client's settings: OAuth whose user step approves at once (counted in `steps`) until
/// `refuse_after` steps, after which the user declines.
fn builder(steps: &Steps, refuse_after: usize) -> McpClientBuilder {
    let steps = steps.clone();
    let oauth = OAuth::new("http://127.0.0.1:9/callback", move |url: String| {
        let steps = steps.clone();
        async move {
            if steps.0.fetch_add(1, Ordering::SeqCst) >= refuse_after {
                return Err("the user declined".into());
            }
            follow(url).await
        }
    })
    .client_name("oauth-test")
    .timeout(Duration::from_secs(5))
    .authorize_timeout(Duration::from_secs(5));
    McpClient::builder()
        .name("protected")
        .timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(10))
        .oauth(oauth)
}

async fn echo_tool(client: &McpClient) -> Arc<dyn Tool> {
    client.tools().await.unwrap().into_iter().next().unwrap()
}

#[tokio::test]
async fn the_client_is_authorized_through_the_whole_flow_and_refreshes_an_expired_token() {
    let protected = serve(2).await;
    let steps = Steps::default();
    let client = builder(&steps, usize::MAX)
        .http(protected.resource())
        .await
        .unwrap();
    let echo = echo_tool(&client).await;
    let output = echo
        .call(json!({"text": "hi"}), ToolContext::new("1", "echo"))
        .await
        .unwrap();
    assert_eq!(output, json!({"result": "hi"}));
    {
        let seen = protected.seen.lock().unwrap();
        assert_eq!(seen.registered, 1, "one dynamic registration");
        assert_eq!(seen.authorizations.len(), 1);
        assert_eq!(
            seen.authorizations[0].1,
            protected.resource(),
            "the resource parameter names the MCP server"
        );
        assert_eq!(seen.grants, ["authorization_code"]);
        assert_eq!(seen.token_resources, [protected.resource()]);
        assert!(seen.used.iter().all(|t| t == &format!("{CANARY}-access-1")));
    }

    // Past the token's lifetime: refreshed before the call, without the user.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let output = echo
        .call(json!({"text": "again"}), ToolContext::new("2", "echo"))
        .await
        .unwrap();
    assert_eq!(output, json!({"result": "again"}));
    {
        let seen = protected.seen.lock().unwrap();
        assert_eq!(seen.grants, ["authorization_code", "refresh_token"]);
        assert_eq!(
            seen.token_resources,
            [protected.resource(), protected.resource()]
        );
        assert_eq!(seen.used.last().unwrap(), &format!("{CANARY}-access-2"));
        assert_eq!(steps.0.load(Ordering::SeqCst), 1, "the user was asked once");
    }
    client.close().await;
}

#[tokio::test]
async fn a_refused_token_is_refreshed_and_the_call_sent_again() {
    let protected = serve(3600).await;
    let steps = Steps::default();
    let client = builder(&steps, usize::MAX)
        .http(protected.resource())
        .await
        .unwrap();
    let echo = echo_tool(&client).await;

    protected.revoke_access();
    let output = echo
        .call(json!({"text": "after"}), ToolContext::new("1", "echo"))
        .await
        .unwrap();
    assert_eq!(output, json!({"result": "after"}));
    {
        let seen = protected.seen.lock().unwrap();
        assert_eq!(seen.grants, ["authorization_code", "refresh_token"]);
        assert_eq!(seen.used.last().unwrap(), &format!("{CANARY}-access-2"));
        assert_eq!(steps.0.load(Ordering::SeqCst), 1, "a refresh, not the user");
    }
    client.close().await;
}

/// An unattended client with `oauth` connects to `protected` (whose tokens last two seconds)
/// and calls its tool once the first token expired: two client-credentials exchanges, no user
/// step, the second token used. The client's builder, the client and its tool.
async fn unattended_past_expiry(
    protected: &Protected,
    oauth: OAuth,
) -> (McpClientBuilder, McpClient, Arc<dyn Tool>) {
    let builder = McpClient::builder()
        .timeout(Duration::from_secs(10))
        .oauth(oauth);
    let client = builder.clone().http(protected.resource()).await.unwrap();
    let echo = echo_tool(&client).await;
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let output = echo
        .call(json!({"text": "later"}), ToolContext::new("1", "echo"))
        .await
        .unwrap();
    assert_eq!(output, json!({"result": "later"}));
    let seen = protected.seen.lock().unwrap();
    assert_eq!(seen.grants, ["client_credentials", "client_credentials"]);
    assert_eq!(
        seen.token_resources,
        [protected.resource(), protected.resource()]
    );
    assert_eq!(seen.registered, 0);
    assert!(seen.authorizations.is_empty(), "no user step");
    assert_eq!(seen.used.last().unwrap(), &format!("{CANARY}-access-2"));
    drop(seen);
    (builder, client, echo)
}

#[tokio::test]
async fn an_unattended_client_exchanges_its_credentials_again_when_the_token_expires() {
    let protected = serve(2).await;
    let oauth = OAuth::client_credentials("unattended", format!("{CANARY}-secret"))
        .timeout(Duration::from_secs(5));
    let (_, client, _) = unattended_past_expiry(&protected, oauth.clone()).await;
    assert!(
        !format!("{oauth:?}").contains(CANARY),
        "the secret stays out of Debug"
    );
    client.close().await;
}

#[tokio::test]
async fn a_client_with_a_private_key_is_authorized_by_its_signed_assertions() {
    let (spans, _capture) = capture_spans();
    let (pem, public) = client_key();
    let protected = serve_for(2, public).await;
    let key = SigningKey::from_pem(&pem).unwrap();
    assert_eq!(key.algorithm(), "ES256");
    let oauth = OAuth::client_credentials_jwt(JWT_CLIENT, key).timeout(Duration::from_secs(5));
    // Past the token's lifetime: a new exchange, with a new assertion; the refresh token the
    // server sent was not kept (the second exchange is not a refresh).
    let (builder, client, echo) = unattended_past_expiry(&protected, oauth.clone()).await;
    let assertions = {
        let seen = protected.seen.lock().unwrap();
        assert_eq!(seen.jtis.len(), 2, "two assertions, each checked");
        seen.assertions.clone()
    };

    // The server refuses the next assertion and says it back: the caller is told why, without
    // the assertion.
    protected.revoke_access();
    protected.echo_refusals.store(true, Ordering::SeqCst);
    let failure = echo
        .call(json!({"text": "refused"}), ToolContext::new("2", "echo"))
        .await
        .unwrap_err();
    let shown = chain(&failure);
    assert!(
        shown.contains("invalid_client"),
        "the caller learns why: {shown}"
    );
    assert!(shown.contains("[client assertion]"), "{shown}");

    // The private scalar's bytes (the PEM body's start is the same for every P-256 key).
    let key_body: String = pem
        .lines()
        .filter(|line| !line.starts_with("-----"))
        .collect();
    let private = &key_body[48..88];
    let mut texts = vec![
        shown,
        format!("{client:?}"),
        format!("{builder:?}"),
        format!("{oauth:?}"),
    ];
    texts.extend(spans.all().iter().map(|span| format!("{span:?}")));
    texts.extend(spans.events().iter().map(|event| format!("{event:?}")));
    for text in &texts {
        assert!(!text.contains(CANARY), "a token leaked: {text}");
        assert!(!text.contains(private), "the key leaked: {text}");
        for assertion in &assertions {
            assert!(
                !text.contains(assertion.as_str()),
                "an assertion leaked: {text}"
            );
            let signature = assertion.rsplit_once('.').unwrap().1;
            assert!(!text.contains(signature), "an assertion leaked: {text}");
        }
    }
    client.close().await;
}

/// Connecting to `protected` as the `private_key_jwt` client with the key `pem` fails: what
/// the failure shows.
async fn keyed_refusal(protected: &Protected, pem: &str) -> String {
    let oauth = OAuth::client_credentials_jwt(JWT_CLIENT, SigningKey::from_pem(pem).unwrap())
        .timeout(Duration::from_secs(5));
    let failure = McpClient::builder()
        .timeout(Duration::from_secs(10))
        .oauth(oauth)
        .http(protected.resource())
        .await
        .unwrap_err();
    chain(&failure)
}

#[tokio::test]
async fn an_assertion_from_another_key_is_refused_and_the_connection_fails() {
    let protected = serve(3600).await;
    let (other, _) = client_key();
    let shown = keyed_refusal(&protected, &other).await;
    assert!(shown.contains("invalid_client"), "{shown}");
    assert!(protected.seen.lock().unwrap().used.is_empty());
}

#[tokio::test]
async fn a_key_whose_algorithm_the_server_does_not_accept_is_not_sent() {
    let (pem, public) = client_key();
    let protected = serve_for(3600, public).await;
    *protected.assertion_algorithms.lock().unwrap() = vec!["RS256", "EdDSA"];
    let shown = keyed_refusal(&protected, &pem).await;
    assert!(
        shown.contains("does not accept client assertions signed with ES256"),
        "{shown}"
    );
    assert!(
        protected.seen.lock().unwrap().grants.is_empty(),
        "no token request was made"
    );
}

/// A server whose authorization server's metadata (at the origin's root) names the issuer
/// `issuer` gives for the server's origin; with `prm_missing`, one that offers no
/// protected-resource metadata, its well-known location answering with that status.
async fn with_issuer(
    issuer: impl FnOnce(&str) -> String,
    prm_missing: Option<u16>,
) -> Arc<Protected> {
    let protected = serve(3600).await;
    *protected.prm_missing.lock().unwrap() = prm_missing;
    *protected.issuer.lock().unwrap() = Some(issuer(&protected.base));
    protected
}

/// Connecting to `protected` fails before the user is asked or a client registered: what the
/// failure shows.
async fn refused_before_the_user(protected: &Protected) -> String {
    let steps = Steps::default();
    let failure = builder(&steps, usize::MAX)
        .http(protected.resource())
        .await
        .unwrap_err();
    assert_eq!(
        steps.0.load(Ordering::SeqCst),
        0,
        "the user was never asked"
    );
    assert_eq!(protected.seen.lock().unwrap().registered, 0);
    chain(&failure)
}

#[tokio::test]
async fn a_server_without_protected_resource_metadata_is_authorized_as_2025_03_26_had_it() {
    // The authorization server's metadata at the origin's root names an issuer under a path
    // of that origin, which a 2025-03-26 client cannot have known: accepted (see
    // `oauth/legacy.rs` for why), and the whole flow runs.
    let protected = with_issuer(|base| format!("{base}/oauth"), Some(404)).await;
    let steps = Steps::default();
    let client = builder(&steps, usize::MAX)
        .http(protected.resource())
        .await
        .unwrap();
    let output = echo_tool(&client)
        .await
        .call(json!({"text": "legacy"}), ToolContext::new("1", "echo"))
        .await
        .unwrap();
    assert_eq!(output, json!({"result": "legacy"}));
    {
        let seen = protected.seen.lock().unwrap();
        assert_eq!(seen.registered, 1);
        assert_eq!(seen.grants, ["authorization_code"]);
        assert_eq!(seen.token_resources, [protected.resource()]);
    }
    client.close().await;
}

#[tokio::test]
async fn a_legacy_servers_tokens_in_the_store_serve_the_next_connection() {
    // The store's discovery (no 401 yet) cannot use a 2025-03-26 server's metadata; the
    // tokens are used once the 401 has shown where it is, without asking the user again.
    let protected = with_issuer(|base| format!("{base}/oauth"), Some(404)).await;
    let steps = Steps::default();
    let builder = builder(&steps, usize::MAX);
    for call in ["first", "second"] {
        let client = builder.clone().http(protected.resource()).await.unwrap();
        let output = echo_tool(&client)
            .await
            .call(json!({"text": call}), ToolContext::new("1", "echo"))
            .await
            .unwrap();
        assert_eq!(output, json!({"result": call}));
        client.close().await;
    }
    assert_eq!(steps.0.load(Ordering::SeqCst), 1, "the user was asked once");
    let seen = protected.seen.lock().unwrap();
    assert_eq!(seen.grants, ["authorization_code"]);
    assert!(seen.used.iter().all(|t| t == &format!("{CANARY}-access-1")));
}

#[tokio::test]
async fn the_issuer_check_stands_for_a_server_that_may_offer_protected_resource_metadata() {
    // The same document as above, from a server that offers protected-resource metadata
    // naming the origin as its authorization server: RFC 8414's issuer check stands.
    let protected = with_issuer(|base| format!("{base}/oauth"), None).await;
    let shown = refused_before_the_user(&protected).await;
    assert!(shown.contains("issuer"), "{shown}");
    // One whose well-known location answers other than 404 (here a 401 that names nothing,
    // which rmcp's discovery passes over) is not taken for a 2025-03-26 server either.
    let protected = with_issuer(|base| format!("{base}/oauth"), Some(401)).await;
    let shown = refused_before_the_user(&protected).await;
    assert!(shown.contains("issuer"), "{shown}");
}

#[tokio::test]
async fn a_legacy_document_naming_an_issuer_on_another_origin_is_refused() {
    // A server without protected-resource metadata whose document claims to be another
    // origin's authorization server: the impersonation RFC 8414 §3.3 is about.
    let protected = with_issuer(|_| "https://accounts.example.com".to_owned(), Some(404)).await;
    let shown = refused_before_the_user(&protected).await;
    assert!(shown.contains("accounts.example.com"), "{shown}");
    // Another port of the same host is another origin.
    let protected = with_issuer(|base| format!("{base}1/oauth"), Some(404)).await;
    let shown = refused_before_the_user(&protected).await;
    assert!(shown.contains("issuer"), "{shown}");
}

/// Every text a failure shows: its `Display` and `Debug`, and its sources'.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = format!("{error} {error:?}");
    let mut source = error.source();
    while let Some(error) = source {
        text.push_str(&format!(" | {error} {error:?}"));
        source = error.source();
    }
    text
}

#[tokio::test]
async fn tokens_never_appear_in_debug_output_errors_or_logs() {
    let (spans, _capture) = capture_spans();
    let protected = serve(3600).await;
    let steps = Steps::default();
    let builder = builder(&steps, 1);
    let client = builder.clone().http(protected.resource()).await.unwrap();
    let echo = echo_tool(&client).await;
    echo.call(json!({"text": "x"}), ToolContext::new("1", "echo"))
        .await
        .unwrap();
    assert!(
        protected
            .seen
            .lock()
            .unwrap()
            .used
            .iter()
            .all(|t| t.contains(CANARY))
    );

    // Neither token works any more and the user declines: the call fails.
    protected.revoke_access();
    protected.revoke_refresh();
    let failure = echo
        .call(json!({"text": "y"}), ToolContext::new("2", "echo"))
        .await
        .unwrap_err();
    let shown = chain(&failure);
    assert!(shown.contains("declined"), "the caller learns why: {shown}");

    let mut texts = vec![shown, format!("{client:?}"), format!("{builder:?}")];
    for span in spans.all() {
        texts.push(format!("{span:?}"));
    }
    for event in spans.events() {
        texts.push(format!("{event:?}"));
    }
    assert!(
        spans
            .events()
            .iter()
            .any(|event| format!("{event:?}").contains("authorizing with the MCP server")),
        "the flow's logs were recorded"
    );
    for text in texts {
        assert!(!text.contains(CANARY), "a token leaked: {text}");
    }
    client.close().await;
}

/// A browser's GET of `target` on 127.0.0.1:`port`: the answer's status line.
async fn browse(port: u16, target: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!("GET {target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn the_loopback_step_returns_the_redirect_the_browser_was_sent() {
    use reticent::mcp::oauth::{Authorize, LoopbackAuthorize};
    let loopback = LoopbackAuthorize::bind().await.unwrap();
    let redirect_uri = loopback.redirect_uri();
    let port: u16 = redirect_uri
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/callback")
        .parse()
        .unwrap();
    let step = tokio::spawn(loopback.authorize("https://as.example/authorize?x=1".to_owned()));

    // Anything but the callback is not it, and the step goes on waiting.
    assert!(browse(port, "/favicon.ico").await.contains("404"));
    assert!(
        browse(port, "/callback?code=abc&state=xyz")
            .await
            .contains("200")
    );
    let redirected = tokio::time::timeout(Duration::from_secs(5), step)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(redirected, format!("{redirect_uri}?code=abc&state=xyz"));
}
