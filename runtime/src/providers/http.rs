//! What the HTTP providers share: the client and its TLS setup, the request timeout, retries
//! with bounded exponential backoff that honor `retry-after`, and turning HTTP failures into
//! [`ModelError`]s that name the status and the provider's message, and never the API key.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};

use crate::model::ModelError;
use crate::render::{MAX_NAME_LEN, bounded};
use crate::secret::Secret;

/// How long one request may take unless configured otherwise.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// Retries after the first attempt unless configured otherwise.
pub(crate) const DEFAULT_MAX_RETRIES: u32 = 2;
/// The first backoff delay unless configured otherwise; it doubles on every retry.
pub(crate) const DEFAULT_RETRY_DELAY: Duration = Duration::from_millis(500);
/// The longest wait before a retry unless configured otherwise.
pub(crate) const DEFAULT_MAX_RETRY_DELAY: Duration = Duration::from_secs(30);

/// The largest response body read unless configured otherwise.
pub(crate) const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 << 20;

/// Longest provider error text kept when the body is not the provider's JSON error shape.
const MAX_ERROR_BODY: usize = 512;

/// An HTTP client, a timeout and a retry policy.
#[derive(Clone)]
pub(crate) struct Transport {
    client: Result<reqwest::Client, Arc<str>>,
    pub(crate) timeout: Duration,
    pub(crate) max_retries: u32,
    pub(crate) retry_delay: Duration,
    pub(crate) max_retry_delay: Duration,
    pub(crate) max_response_bytes: usize,
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport")
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("retry_delay", &self.retry_delay)
            .field("max_retry_delay", &self.max_retry_delay)
            .field("max_response_bytes", &self.max_response_bytes)
            .finish_non_exhaustive()
    }
}

impl Transport {
    pub(crate) fn new() -> Self {
        Self {
            client: default_client().map_err(Arc::from),
            timeout: DEFAULT_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            retry_delay: DEFAULT_RETRY_DELAY,
            max_retry_delay: DEFAULT_MAX_RETRY_DELAY,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        }
    }

    pub(crate) fn set_client(&mut self, client: reqwest::Client) {
        self.client = Ok(client);
    }

    /// POSTs a JSON body and returns the body of the successful response, retrying 408, 429,
    /// 5xx, timeouts and connection failures as configured.
    pub(crate) async fn post_json(
        &self,
        url: &str,
        mut headers: HeaderMap,
        body: Vec<u8>,
        api_key: &Secret<String>,
    ) -> Result<Vec<u8>, ModelError> {
        let client = self.client.as_ref().map_err(|reason| {
            ModelError::new(format!("could not set up the HTTP client: {reason}"))
        })?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let mut retries = 0;
        loop {
            let request = client
                .post(url)
                .headers(headers.clone())
                .timeout(self.timeout)
                .body(body.clone());
            let failed = match self.attempt(request).await {
                Ok(body) => return Ok(body),
                Err(failed) => failed,
            };
            let delay = if failed.retryable && retries < self.max_retries {
                self.delay(retries, failed.retry_after)
            } else {
                None
            };
            match delay {
                Some(delay) => {
                    retries += 1;
                    tracing::warn!(
                        status = failed.status.map(|s| s.as_u16()),
                        retry = retries,
                        max_retries = self.max_retries,
                        delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                        "model API call failed; retrying"
                    );
                    tokio::time::sleep(delay).await;
                }
                None => return Err(failed.into_error(retries + 1, api_key)),
            }
        }
    }

    async fn attempt(&self, request: reqwest::RequestBuilder) -> Result<Vec<u8>, Failed> {
        let mut response = request
            .send()
            .await
            .map_err(|e| Failed::transport(e, self.timeout))?;
        let status = response.status();
        let retry_after = retry_after(response.headers());
        // Read up to the limit, refusing a body that says or turns out to be larger.
        let limit = self.max_response_bytes;
        let declared = response.content_length().unwrap_or(0);
        if declared > u64::try_from(limit).unwrap_or(u64::MAX) {
            return Err(Failed::too_large(status, limit));
        }
        let mut body = Vec::with_capacity(usize::try_from(declared).unwrap_or(0));
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| Failed::transport(e, self.timeout))?
        {
            if chunk.len() > limit - body.len() {
                return Err(Failed::too_large(status, limit));
            }
            body.extend_from_slice(&chunk);
        }
        if status.is_success() {
            return Ok(body);
        }
        Err(Failed {
            message: provider_message(&body, status),
            status: Some(status),
            retryable: status == StatusCode::REQUEST_TIMEOUT
                || status == StatusCode::TOO_MANY_REQUESTS
                || status.is_server_error(),
            retry_after,
            source: None,
        })
    }

    /// The wait before retry number `retries + 1`, or `None` when the server asks for a longer
    /// wait than `max_retry_delay` allows.
    fn delay(&self, retries: u32, retry_after: Option<Duration>) -> Option<Duration> {
        match retry_after {
            Some(wait) if wait > self.max_retry_delay => None,
            Some(wait) => Some(wait),
            None => {
                let factor = 2u32.saturating_pow(retries);
                let full = self
                    .retry_delay
                    .saturating_mul(factor)
                    .min(self.max_retry_delay);
                // equal jitter: between half and all of the delay, so clients spread out
                Some(full.mul_f64(0.5 + 0.5 * random_unit()))
            }
        }
    }
}

/// One failed attempt.
struct Failed {
    message: String,
    status: Option<StatusCode>,
    retryable: bool,
    retry_after: Option<Duration>,
    source: Option<reqwest::Error>,
}

impl Failed {
    fn transport(error: reqwest::Error, timeout: Duration) -> Self {
        let error = error.without_url();
        let message = if error.is_timeout() {
            format!("no response within {}", seconds(timeout))
        } else if error.is_connect() {
            format!("could not connect: {}", chain(&error))
        } else {
            format!("the request failed: {}", chain(&error))
        };
        Self {
            message,
            status: None,
            retryable: error.is_timeout() || error.is_connect() || error.is_request(),
            retry_after: None,
            source: Some(error),
        }
    }

    /// A response body over the limit: not read further, not retried.
    fn too_large(status: StatusCode, limit: usize) -> Self {
        Self {
            message: format!(
                "the response body is larger than {limit} bytes (status {}); raise \
                 `max_response_bytes` if the provider's answers can be that large",
                status.as_u16()
            ),
            status: Some(status),
            retryable: false,
            retry_after: None,
            source: None,
        }
    }

    fn into_error(self, attempts: u32, api_key: &Secret<String>) -> ModelError {
        let mut message = redact(self.message, api_key);
        if attempts > 1 {
            message.push_str(&format!(" (gave up after {attempts} attempts)"));
        }
        let mut error = ModelError::new(message).retryable(self.retryable);
        if let Some(status) = self.status {
            error = error.with_status(status.as_u16());
        }
        if let Some(source) = self.source {
            error = error.with_source(source);
        }
        error
    }
}

/// The provider's own error message: `{"error": {"type": .., "message": ..}}` (OpenAI,
/// Anthropic), `{"error": ".."}` (Ollama), `{"message": ..}` or `{"detail": ..}` (vLLM and
/// other servers), else the start of the body. Cut to [`MAX_ERROR_BODY`] bytes either way.
fn provider_message(body: &[u8], status: StatusCode) -> String {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(body)
        && let Some(message) = error_message(&value)
    {
        return message;
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return status.canonical_reason().unwrap_or("error").to_owned();
    }
    bounded(text, MAX_ERROR_BODY).into_owned()
}

/// The error message in a provider's JSON error body (see [`provider_message`]), cut to
/// [`MAX_ERROR_BODY`] bytes; `None` when the body holds none. Also for a successful status
/// whose body is an error.
pub(crate) fn error_message(value: &serde_json::Value) -> Option<String> {
    let error = value.get("error");
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(serde_json::Value::as_str)
        .or_else(|| error.and_then(serde_json::Value::as_str))
        .or_else(|| value.get("message").and_then(serde_json::Value::as_str))
        .or_else(|| value.get("detail").and_then(serde_json::Value::as_str))?;
    let kind = error
        .and_then(|e| e.get("type"))
        .and_then(serde_json::Value::as_str);
    let message = match kind {
        Some(kind) => format!("{}: {message}", bounded(kind, MAX_NAME_LEN)),
        None => message.to_owned(),
    };
    Some(bounded(&message, MAX_ERROR_BODY).into_owned())
}

/// A response body that could not be read as the provider's response: `what` (`chat
/// completion`, `message`) and serde's reason. The reason can echo a value of the body (a
/// string of any length where a number belongs): it is cut, and then the error, which holds
/// all of it, is not kept as the source.
pub(crate) fn unreadable(what: &str, error: serde_json::Error) -> ModelError {
    let full = error.to_string();
    let reason = bounded(&full, MAX_ERROR_BODY);
    let cut = reason.len() != full.len();
    let message = ModelError::new(format!("could not read the {what}: {reason}"));
    if cut {
        message
    } else {
        message.with_source(error)
    }
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds. An HTTP date is not understood and
/// falls back to the backoff.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite() && *n >= 0.0)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    number("retry-after").map(Duration::from_secs_f64)
}

/// Replaces the API key wherever a provider echoed it back.
fn redact(message: String, api_key: &Secret<String>) -> String {
    let key = api_key.expose();
    if key.len() >= 8 && message.contains(key.as_str()) {
        message.replace(key.as_str(), "[redacted]")
    } else {
        message
    }
}

/// The error and its sources, `: `-separated.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let inner_text = inner.to_string();
        if !text.contains(&inner_text) {
            text.push_str(": ");
            text.push_str(&inner_text);
        }
        source = inner.source();
    }
    text
}

fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0}s")
    } else {
        format!("{secs}s")
    }
}

/// A number in `[0, 1)`, different on every call; good enough for jitter.
fn random_unit() -> f64 {
    let bits = RandomState::new().build_hasher().finish();
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// A header value that is never printed: `Debug` of a sensitive `HeaderValue` shows
/// `Sensitive`.
pub(crate) fn secret_header(value: String) -> Result<HeaderValue, ModelError> {
    let mut value = HeaderValue::try_from(value)
        .map_err(|_| ModelError::new("the API key is not a valid HTTP header value"))?;
    value.set_sensitive(true);
    Ok(value)
}

/// `base` without trailing slashes, joined with `path`.
pub(crate) fn join(base: &str, path: &str) -> String {
    format!("{}{path}", base.trim_end_matches('/'))
}

/// A client with reticent's TLS configuration (see [`crate::http_client`]).
fn default_client() -> Result<reqwest::Client, String> {
    crate::http_client::client_builder()?
        .build()
        .map_err(|e| chain(&e))
}

/// The builder methods every provider shares: extra body fields and the transport's timeout,
/// retries and client. `$retried` names what is retried, `$params` gives example fields.
macro_rules! transport_setters {
    (retried: $retried:literal, params: $params:literal $(,)?) => {
        #[doc = concat!(
                    "Sets a top-level field of every request body, such as ", $params,
                    ". It overrides what the provider would send under that name."
                )]
        #[must_use]
        pub fn param(mut self, name: impl Into<String>, value: serde_json::Value) -> Self {
            self.params.insert(name.into(), value);
            self
        }

        /// How long one request may take, from connecting to the end of the response body.
        /// Default 300 s.
        #[must_use]
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.transport.timeout = timeout;
            self
        }

        #[doc = concat!(
                    "How many times a request that failed with ", $retried,
                    ", a timeout or a connection failure is retried. Default 2; `0` never retries."
                )]
        #[must_use]
        pub fn max_retries(mut self, retries: u32) -> Self {
            self.transport.max_retries = retries;
            self
        }

        /// The first wait before a retry when the server does not say how long to wait; it
        /// doubles on every retry, with jitter. Default 500 ms.
        #[must_use]
        pub fn retry_delay(mut self, delay: std::time::Duration) -> Self {
            self.transport.retry_delay = delay;
            self
        }

        /// The longest wait before a retry. A server that asks (with `retry-after`) for a
        /// longer wait is not retried: its error is returned at once. Default 30 s.
        #[must_use]
        pub fn max_retry_delay(mut self, delay: std::time::Duration) -> Self {
            self.transport.max_retry_delay = delay;
            self
        }

        /// The largest response body read, in bytes. A larger one is refused with a
        /// [`ModelError`](crate::ModelError) as soon as it is seen to be larger, rather than
        /// held in memory. Default 64 MiB.
        #[must_use]
        pub fn max_response_bytes(mut self, bytes: usize) -> Self {
            self.transport.max_response_bytes = bytes;
            self
        }

        /// Sends requests with this client instead of the default one (for a proxy or extra
        /// root certificates). The timeout and retries still apply.
        #[must_use]
        pub fn http_client(mut self, client: reqwest::Client) -> Self {
            self.transport.set_client(client);
            self
        }
    };
}
pub(crate) use transport_setters;
