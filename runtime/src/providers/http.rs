//! What the HTTP providers share: the client and its TLS setup, the request timeout, retries
//! with bounded exponential backoff that honor `retry-after`, and turning HTTP failures into
//! [`ModelError`]s that name the status and the provider's message, and never the API key.
//!
//! One file, longer than most: a request's life (client, timeout, retries, `retry-after`,
//! the error it ends in) is one loop, read in one place, with its tests of every bound beside
//! it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};

use crate::error::chain::chain;
use crate::model::{ModelError, ModelResponse, RetryPolicy, retryable_status};
use crate::render::{MAX_NAME_LEN, bounded, format_duration};
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

/// The largest event of a streamed response unless configured otherwise. Servers that send a
/// tool call whole in one event (Ollama) need room for its arguments.
pub(crate) const DEFAULT_MAX_EVENT_BYTES: usize = 8 << 20;

/// The most tool calls of one response unless configured otherwise: far above what models
/// ask for in one turn (a few, rarely dozens) and above the agent's `max_calls_per_turn`
/// (128), so that it bounds what a provider holds without being the limit a run meets.
pub(crate) const DEFAULT_MAX_TOOL_CALLS: usize = 1024;

/// The longest a stream may go without an event once its answer has begun, unless configured
/// otherwise. A healthy stream sends a token (or, from Anthropic, a `ping`) every second or
/// so, and no API pauses for long between two events once it writes: a minute is far past
/// any pause of a healthy stream, and a fifth of the request timeout, so a hung connection is
/// found and retried long before the request would time out.
pub(crate) const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

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
    pub(crate) max_event_bytes: usize,
    pub(crate) max_tool_calls: usize,
    /// The longest wait between two events of a stream once its answer has begun.
    pub(crate) stream_idle_timeout: Duration,
    /// The longest wait for a stream's answer to begin; `None`: the request timeout.
    pub(crate) first_event_timeout: Option<Duration>,
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport")
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("retry_delay", &self.retry_delay)
            .field("max_retry_delay", &self.max_retry_delay)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("max_event_bytes", &self.max_event_bytes)
            .field("max_tool_calls", &self.max_tool_calls)
            .field("stream_idle_timeout", &self.stream_idle_timeout)
            .field("first_event_timeout", &self.first_event_timeout())
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
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            max_tool_calls: DEFAULT_MAX_TOOL_CALLS,
            stream_idle_timeout: DEFAULT_STREAM_IDLE_TIMEOUT,
            first_event_timeout: None,
        }
    }

    /// The longest wait for a stream's answer to begin: as set, else the request timeout.
    pub(crate) fn first_event_timeout(&self) -> Duration {
        self.first_event_timeout.unwrap_or(self.timeout)
    }

    pub(crate) fn set_client(&mut self, client: reqwest::Client) {
        self.client = Ok(client);
    }

    /// The client, or why it could not be set up.
    pub(crate) fn client(&self) -> Result<&reqwest::Client, ModelError> {
        self.client.as_ref().map_err(|reason| {
            ModelError::new(format!("could not set up the HTTP client: {reason}"))
        })
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
        let client = self.client()?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let mut retries = 0;
        loop {
            let request = self.request(client, url, &headers, &body);
            let failed = match self.attempt(request).await {
                Ok(body) => return Ok(body),
                Err(failed) => failed,
            };
            if !self.wait_to_retry(&failed, &mut retries).await {
                return Err(failed.into_error(retries + 1, api_key));
            }
        }
    }

    /// A POST of `body` to `url` with `headers` and the timeout.
    pub(crate) fn request(
        &self,
        client: &reqwest::Client,
        url: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> reqwest::RequestBuilder {
        client
            .post(url)
            .headers(headers.clone())
            .timeout(self.timeout)
            .body(body.to_vec())
    }

    /// After `failed`: when it is worth retrying and retries are left, waits the backoff (or
    /// what the server asked for), counts the retry and returns `true`; else `false` at once.
    pub(crate) async fn wait_to_retry(&self, failed: &Failed, retries: &mut u32) -> bool {
        let delay = if failed.retryable && *retries < self.max_retries {
            self.delay(*retries, failed.retry_after)
        } else {
            None
        };
        let Some(delay) = delay else {
            return false;
        };
        *retries += 1;
        tracing::warn!(
            status = failed.status.map(|s| s.as_u16()),
            retry = *retries,
            max_retries = self.max_retries,
            delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            "model API call failed; retrying"
        );
        tokio::time::sleep(delay).await;
        true
    }

    async fn attempt(&self, request: reqwest::RequestBuilder) -> Result<Vec<u8>, Failed> {
        let response = self.send(request).await?;
        self.read_body(response).await
    }

    /// Sends `request`: the response when its status is a success; else the failure, with the
    /// provider's message from the (bounded) body and the server's `retry-after`.
    pub(crate) async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, Failed> {
        let response = request
            .send()
            .await
            .map_err(|e| Failed::transport(e, self.timeout))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers());
        let body = self.read_body(response).await?;
        Err(Failed {
            message: provider_message(&body, status),
            status: Some(status),
            retryable: retryable_status(status.as_u16()),
            retry_after,
            source: None,
        })
    }

    /// Reads the whole body up to `max_response_bytes`, refusing one that says or turns out
    /// to be larger.
    pub(crate) async fn read_body(
        &self,
        mut response: reqwest::Response,
    ) -> Result<Vec<u8>, Failed> {
        let status = response.status();
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
        Ok(body)
    }

    /// The wait before retry number `retries + 1`, or `None` when the server asks for a longer
    /// wait than `max_retry_delay` allows: the backoff the agent loop uses too.
    fn delay(&self, retries: u32, retry_after: Option<Duration>) -> Option<Duration> {
        self.retry_policy().delay(retries, retry_after)
    }

    /// The retry settings, as the agent loop reads them to retry a broken turn.
    pub(crate) fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy::new(self.max_retries, self.retry_delay, self.max_retry_delay)
    }
}

/// One failed attempt.
pub(crate) struct Failed {
    message: String,
    status: Option<StatusCode>,
    retryable: bool,
    retry_after: Option<Duration>,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl Failed {
    /// A failure with this message and no HTTP status.
    pub(crate) fn new(message: impl Into<String>, retryable: bool) -> Self {
        Self {
            message: message.into(),
            status: None,
            retryable,
            retry_after: None,
            source: None,
        }
    }

    /// The same failure, with `source` as the underlying error.
    pub(crate) fn with_source(
        mut self,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        self.source = Some(source.into());
        self
    }

    fn transport(error: reqwest::Error, timeout: Duration) -> Self {
        let error = error.without_url();
        // the transport error is the source, which says the rest
        let message = if error.is_timeout() {
            format!("no response within {}", format_duration(timeout))
        } else if error.is_connect() {
            "could not connect".to_owned()
        } else {
            "the request failed".to_owned()
        };
        let retryable = error.is_timeout() || error.is_connect() || error.is_request();
        Self::new(message, retryable).with_source(error)
    }

    /// A streamed body that broke off or outlasted the timeout. Worth retrying: the stream is
    /// retried only while none of it was passed on.
    pub(crate) fn stream_broke(error: reqwest::Error, timeout: Duration) -> Self {
        let error = error.without_url();
        // the transport error is the source, which says the rest
        let message = if error.is_timeout() {
            format!(
                "the stream did not finish within {}",
                format_duration(timeout)
            )
        } else {
            "the connection broke".to_owned()
        };
        Self::new(message, true).with_source(error)
    }

    /// A stream that sent no event within `limit`, the setting named `setting`: worth
    /// retrying, as a timeout of the request before the answer began (`first_event_timeout`),
    /// or as a broken stream after (`stream_idle_timeout`).
    pub(crate) fn stalled(limit: Duration, setting: &str, begun: bool) -> Self {
        let message = if begun {
            format!(
                "the stream sent no event for {} (`{setting}`)",
                format_duration(limit)
            )
        } else {
            format!(
                "the answer did not begin within {} (`{setting}`)",
                format_duration(limit)
            )
        };
        Self::new(message, true)
    }

    /// A response body over the limit: not read further, not retried.
    fn too_large(status: StatusCode, limit: usize) -> Self {
        Self {
            status: Some(status),
            ..Self::new(
                format!(
                    "the response body is larger than {limit} bytes (status {}); raise \
                     `max_response_bytes` if the provider's answers can be that large",
                    status.as_u16()
                ),
                false,
            )
        }
    }

    /// The same failure, after `events` events of the stream were passed on: the stream
    /// cannot retry it (what was passed on cannot be taken back), and it says that the stream
    /// broke off. It stays retryable as it was: the agent loop asks the whole turn again.
    pub(crate) fn after_events(self, events: usize) -> Self {
        Self {
            message: format!(
                "the stream broke off after {events} event{}: {}",
                if events == 1 { "" } else { "s" },
                self.message
            ),
            ..self
        }
    }

    pub(crate) fn into_error(self, attempts: u32, api_key: &Secret<String>) -> ModelError {
        let mut message = redact(self.message, api_key);
        if attempts > 1 {
            message.push_str(&format!(" (gave up after {attempts} attempts)"));
        }
        let mut error = ModelError::new(message)
            .retryable(self.retryable)
            .with_attempts(attempts);
        if let Some(wait) = self.retry_after {
            error = error.with_retry_after(wait);
        }
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
    let (message, source) = unreadable_parts(what, error);
    let message = ModelError::new(message);
    match source {
        Some(source) => message.with_source(source),
        None => message,
    }
}

/// As [`unreadable`], for one event of a stream: worth retrying, a model's next answer is
/// new bytes (a server that garbles one event rarely garbles the next answer).
pub(crate) fn unreadable_event(what: &str, error: serde_json::Error) -> Failed {
    let (message, source) = unreadable_parts(what, error);
    let failed = Failed::new(message, true);
    match source {
        Some(source) => failed.with_source(source),
        None => failed,
    }
}

/// `response`, read whole, unless it has more tool calls than `max_tool_calls`.
pub(crate) fn tool_calls_within(
    response: ModelResponse,
    max_tool_calls: usize,
) -> Result<ModelResponse, ModelError> {
    let calls = response.tool_calls.len();
    if calls <= max_tool_calls {
        return Ok(response);
    }
    Err(ModelError::new(format!(
        "the answer has {calls} tool calls, more than {max_tool_calls}; raise \
         `max_tool_calls` if the provider's answers can have that many"
    )))
}

/// The message of [`unreadable`], and the error when the message holds all of it.
fn unreadable_parts(what: &str, error: serde_json::Error) -> (String, Option<serde_json::Error>) {
    let full = error.to_string();
    let reason = bounded(&full, MAX_ERROR_BODY);
    let cut = reason.len() != full.len();
    let message = format!("could not read the {what}: {reason}");
    (message, (!cut).then_some(error))
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds, read from the network and so
/// bounded before use:
///
/// - a number too large for a [`Duration`] (`1e20`, `18446744073709551616`) is read as
///   [`Duration::MAX`]: the server asks for a longer wait than any `max_retry_delay`, so the
///   request is not retried and its error is returned at once;
/// - a negative, infinite or not-a-number value, an HTTP date and anything else that is not a
///   number are ignored: the retry waits the backoff.
///
/// Never panics, whatever the header holds, on any status.
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
    let seconds = number("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| number("retry-after"))?;
    // finite and not negative, so the only failure left is a value too large to represent
    Some(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX))
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
            self.endpoint.params.insert(name.into(), value);
            self
        }

        /// How long one request may take, from connecting to the end of the response body
        /// (for a stream, to its last event). Default 300 s.
        #[must_use]
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.endpoint.transport.timeout = timeout;
            self
        }

        /// The longest a stream may go without an event once its answer has begun (its first
        /// text or tool call). Default 60 s: a healthy stream sends a token, or a `ping`,
        /// every second or so. A stream that stalls longer is cut: before anything was passed
        /// on the request is retried; after, the stream ends with a retryable error that says
        /// it broke off, and an [`Agent`](crate::Agent) asks the turn again. The error names
        /// the setting.
        #[must_use]
        pub fn stream_idle_timeout(mut self, limit: std::time::Duration) -> Self {
            self.endpoint.transport.stream_idle_timeout = limit;
            self
        }

        /// The longest wait for a stream's answer to begin, from sending the request (and
        /// from each event that carries no answer yet, like a role-only first chunk). Default:
        /// the request's [`timeout`](Self::timeout), since reasoning models can think for
        /// minutes before they write. A stream whose answer does not begin in time is a
        /// timeout of the request, retried as one; the error names the setting.
        #[must_use]
        pub fn first_event_timeout(mut self, limit: std::time::Duration) -> Self {
            self.endpoint.transport.first_event_timeout = Some(limit);
            self
        }

        #[doc = concat!(
                    "How many times a request that failed with ", $retried,
                    ", a timeout or a connection failure is retried. Default 2; `0` never retries. ",
                    "The agent loop retries a turn whose stream broke off within the same budget."
                )]
        #[must_use]
        pub fn max_retries(mut self, retries: u32) -> Self {
            self.endpoint.transport.max_retries = retries;
            self
        }

        /// The first wait before a retry when the server does not say how long to wait; it
        /// doubles on every retry, with jitter. Default 500 ms.
        #[must_use]
        pub fn retry_delay(mut self, delay: std::time::Duration) -> Self {
            self.endpoint.transport.retry_delay = delay;
            self
        }

        /// The longest wait before a retry. A server that asks (with `retry-after`) for a
        /// longer wait is not retried: its error is returned at once. Default 30 s.
        #[must_use]
        pub fn max_retry_delay(mut self, delay: std::time::Duration) -> Self {
            self.endpoint.transport.max_retry_delay = delay;
            self
        }

        /// The largest response body read, in bytes. A larger one is refused with a
        /// [`ModelError`](crate::ModelError) as soon as it is seen to be larger, rather than
        /// held in memory. Default 64 MiB. It bounds a streamed response too: all its bytes,
        /// its text, and the arguments of each of its tool calls.
        #[must_use]
        pub fn max_response_bytes(mut self, bytes: usize) -> Self {
            self.endpoint.transport.max_response_bytes = bytes;
            self
        }

        /// The largest single event of a streamed response, in bytes. A larger one ends the
        /// stream with a [`ModelError`](crate::ModelError) as soon as it is seen to be larger.
        /// Default 8 MiB: some servers send a tool call's arguments whole in one event.
        #[must_use]
        pub fn max_event_bytes(mut self, bytes: usize) -> Self {
            self.endpoint.transport.max_event_bytes = bytes;
            self
        }

        /// The most tool calls one response may have. A response with more is refused with a
        /// [`ModelError`](crate::ModelError) that says so, and not retried: a stream as soon
        /// as the call past the limit begins, without reading further; a whole body once it
        /// is read (within `max_response_bytes`). Default 1024.
        ///
        /// It bounds what the provider holds for one answer. An
        /// [`Agent`](crate::Agent) has a limit of its own,
        /// [`max_calls_per_turn`](crate::AgentBuilder::max_calls_per_turn) (default 128),
        /// and stops reading a stream there; raise this one too to let an agent run more
        /// than 1024 calls in one turn.
        #[must_use]
        pub fn max_tool_calls(mut self, calls: usize) -> Self {
            self.endpoint.transport.max_tool_calls = calls;
            self
        }

        /// Sends requests with this client instead of the default one (for a proxy or extra
        /// root certificates). The timeout and retries still apply.
        #[must_use]
        pub fn http_client(mut self, client: reqwest::Client) -> Self {
            self.endpoint.transport.set_client(client);
            self
        }
    };
}
pub(crate) use transport_setters;

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn retry_after_reads_seconds_and_milliseconds() {
        let wait = |pairs| retry_after(&headers(pairs));
        assert_eq!(wait(&[("retry-after", "2")]), Some(Duration::from_secs(2)));
        assert_eq!(
            wait(&[("retry-after", " 1.5 ")]),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            wait(&[("retry-after-ms", "300"), ("retry-after", "1")]),
            Some(Duration::from_millis(300))
        );
        assert_eq!(wait(&[]), None);
    }

    #[test]
    fn retry_after_too_large_to_represent_is_the_longest_wait() {
        for (name, value) in [
            ("retry-after", "1e20"),
            ("retry-after", "18446744073709551616"),
            ("retry-after", "1e308"),
            ("retry-after-ms", "1e30"),
        ] {
            let wait = retry_after(&headers(&[(name, value)]));
            assert_eq!(wait, Some(Duration::MAX), "{name}: {value}");
        }
    }

    #[test]
    fn retry_after_that_is_not_a_wait_is_ignored() {
        for value in [
            "-1",
            "NaN",
            "inf",
            "-inf",
            "",
            "soon",
            "Wed, 21 Oct 2015 07:28:00 GMT",
        ] {
            for name in ["retry-after", "retry-after-ms"] {
                assert_eq!(
                    retry_after(&headers(&[(name, value)])),
                    None,
                    "{name}: {value}"
                );
            }
        }
    }

    #[test]
    fn an_absurd_wait_is_never_retried_and_no_delay_overflows() {
        let transport = Transport::new();
        assert_eq!(transport.delay(0, Some(Duration::MAX)), None);
        let mut extreme = Transport::new();
        extreme.retry_delay = Duration::MAX;
        extreme.max_retry_delay = Duration::MAX;
        for retries in [0, 1, 63, 64, u32::MAX] {
            let delay = extreme.delay(retries, None).unwrap();
            assert!(delay >= Duration::MAX / 2, "{delay:?}");
        }
    }
}
