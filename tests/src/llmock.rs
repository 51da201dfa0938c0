//! `llmock`, an independent fault-injecting mock of the model APIs (from PyPI, pinned in
//! `tests/llmock/requirements.txt`), run as a child process for the chaos and conformance
//! tests: [`Llmock::start`] serves it on a free loopback port with the [`Faults`] asked for,
//! waits until it answers, and kills it when dropped.
//!
//! One server speaks all four wire formats the providers use: OpenAI Chat Completions
//! ([`Llmock::openai_base`]), OpenAI Responses ([`Llmock::responses_url`]), Anthropic Messages
//! ([`Llmock::anthropic_base`]) and Gemini ([`Llmock::gemini_base`]). Its control API scripts
//! faults for the next requests ([`Llmock::script`]), keeps a journal of every request with its
//! body ([`Llmock::requests`]) and judges how the client coped ([`Llmock::verdict`]); the
//! verdict groups identical requests into one call, so [`Llmock::reset`] between runs.
//!
//! The environment's python is found through `RETICENT_LLMOCK_PYTHON` (`.ci/run` installs the
//! pinned release into `target/llmock-venv` and sets it); when it is not set, the tests that
//! need llmock are skipped, loudly.

use std::fmt;
use std::io::Write as _;
use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The variable that names the python of an environment with llmock installed.
pub const PYTHON_ENV: &str = "RETICENT_LLMOCK_PYTHON";

/// How long a started server may take to answer its first request.
const START_LIMIT: Duration = Duration::from_secs(60);

/// How long one request to the control API may take (the journal and the verdict wait up to
/// 2 s for requests still in flight).
const REQUEST_LIMIT: Duration = Duration::from_secs(30);

/// The python of the llmock environment, or `None` (after a loud notice naming `what`) when
/// `RETICENT_LLMOCK_PYTHON` is not set.
pub fn python(what: &str) -> Option<PathBuf> {
    match std::env::var_os(PYTHON_ENV) {
        Some(python) if !python.is_empty() => {
            let python = PathBuf::from(python);
            assert!(
                python.exists(),
                "{PYTHON_ENV} is {}, which does not exist",
                python.display()
            );
            Some(python)
        }
        _ => {
            // Straight to stderr, past the test harness's capture, so it is seen.
            let _ = writeln!(
                std::io::stderr(),
                "\n\
                 ************************************************************************\n\
                 SKIPPED ({PYTHON_ENV} is not set): {what}\n\
                 was NOT checked against llmock. `.ci/run` installs it; or point\n\
                 {PYTHON_ENV} at the python of a venv with tests/llmock/requirements.txt.\n\
                 ************************************************************************\n"
            );
            None
        }
    }
}

/// A way llmock breaks a streamed response (`--stream-fault KIND=P`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamFault {
    /// The connection is dropped mid-stream.
    Disconnect,
    /// The stream ends cleanly but early: no finish reason, no terminator.
    Truncate,
    /// The stream stops for the stall's length, then carries on.
    Stall,
    /// One chunk is not valid JSON.
    Malformed,
}

impl StreamFault {
    /// llmock's name for the fault.
    pub fn name(self) -> &'static str {
        match self {
            Self::Disconnect => "disconnect",
            Self::Truncate => "truncate",
            Self::Stall => "stall",
            Self::Malformed => "malformed",
        }
    }
}

/// The faults a server injects at random, and how it answers: the options of `llmock serve`.
/// The default injects nothing.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    error_rates: Vec<(u16, f64)>,
    stream_faults: Vec<(StreamFault, f64)>,
    stall_seconds: Option<f64>,
    chunk_delay_ms: Option<u64>,
    latency_ms: Option<u64>,
    tool_mode: Option<&'static str>,
    response_style: Option<&'static str>,
}

impl Faults {
    /// No faults.
    pub fn none() -> Self {
        Self::default()
    }

    /// Answer a request with HTTP `status` with probability `rate` (`--error-rate`).
    pub fn error_rate(mut self, status: u16, rate: f64) -> Self {
        self.error_rates.push((status, rate));
        self
    }

    /// Break a stream with `fault` with probability `rate` (`--stream-fault`).
    pub fn stream_fault(mut self, fault: StreamFault, rate: f64) -> Self {
        self.stream_faults.push((fault, rate));
        self
    }

    /// How long a random stall lasts (`--stream-stall-seconds`; llmock's default is 10).
    pub fn stall_seconds(mut self, seconds: f64) -> Self {
        self.stall_seconds = Some(seconds);
        self
    }

    /// A pause between streamed chunks (`--stream-chunk-delay-ms`).
    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay_ms = Some(delay.as_millis() as u64);
        self
    }

    /// A pause before every answer (`--latency-ms`).
    pub fn latency(mut self, latency: Duration) -> Self {
        self.latency_ms = Some(latency.as_millis() as u64);
        self
    }

    /// `auto` (the default: call the offered tools, then answer once a tool result comes
    /// back) or `off` (always answer in text) (`--tool-mode`).
    pub fn tool_mode(mut self, mode: &'static str) -> Self {
        self.tool_mode = Some(mode);
        self
    }

    /// `static`, `hello`, `echo` or `varied` (`--response-style`).
    pub fn response_style(mut self, style: &'static str) -> Self {
        self.response_style = Some(style);
        self
    }

    fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for (status, rate) in &self.error_rates {
            args.push("--error-rate".to_owned());
            args.push(format!("{status}={rate}"));
        }
        for (fault, rate) in &self.stream_faults {
            args.push("--stream-fault".to_owned());
            args.push(format!("{}={rate}", fault.name()));
        }
        let mut option = |name: &str, value: Option<String>| {
            if let Some(value) = value {
                args.push(name.to_owned());
                args.push(value);
            }
        };
        option(
            "--stream-stall-seconds",
            self.stall_seconds.map(|s| s.to_string()),
        );
        option(
            "--stream-chunk-delay-ms",
            self.chunk_delay_ms.map(|ms| ms.to_string()),
        );
        option("--latency-ms", self.latency_ms.map(|ms| ms.to_string()));
        option("--tool-mode", self.tool_mode.map(str::to_owned));
        option("--response-style", self.response_style.map(str::to_owned));
        args
    }
}

/// A running `llmock serve`, killed when dropped.
pub struct Llmock {
    child: Child,
    url: String,
    log: PathBuf,
}

impl fmt::Debug for Llmock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Llmock")
            .field("url", &self.url)
            .field("pid", &self.child.id())
            .finish()
    }
}

impl Llmock {
    /// Serves llmock with `faults` on a free loopback port and waits until it answers; `None`
    /// (after a loud notice naming `what`) when `RETICENT_LLMOCK_PYTHON` is not set.
    pub async fn start(what: &str, faults: &Faults) -> Option<Self> {
        let python = python(what)?;
        Some(Self::start_with(&python, faults).await)
    }

    /// Serves llmock from the environment of `python` with `faults`, and waits until it
    /// answers. Panics, with the server's log, when it does not within a minute.
    pub async fn start_with(python: &Path, faults: &Faults) -> Self {
        // The free port is found by binding and letting go, so another process may take it
        // in between: a server that exits before it answers is started again on another.
        let mut last_log = String::new();
        for _ in 0..3 {
            let port = free_port();
            let log = std::env::temp_dir()
                .join(format!("reticent-llmock-{}-{port}.log", std::process::id()));
            let log_file = std::fs::File::create(&log)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
            let child = Command::new(python)
                .args(["-m", "llmock.cli", "serve", "--host", "127.0.0.1"])
                .args(["--port", &port.to_string(), "--log-level", "warning"])
                .args(faults.args())
                .env("PYTHONUNBUFFERED", "1")
                .stdin(Stdio::null())
                .stdout(log_file.try_clone().expect("a log file handle clones"))
                .stderr(log_file)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run {} -m llmock.cli: {e}", python.display()));
            let mut server = Self {
                child,
                url: format!("http://127.0.0.1:{port}"),
                log,
            };
            match server.wait_until_ready().await {
                Ok(()) => return server,
                Err(log) => last_log = log,
            }
        }
        panic!("llmock did not start; its log:\n{last_log}")
    }

    /// Polls `/health` until it answers; the log when the server exits first.
    async fn wait_until_ready(&mut self) -> Result<(), String> {
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("(exited with {status})\n{}", self.log()));
            }
            if let Ok((200, _)) =
                request_within("GET", &format!("{}/health", self.url), None, REQUEST_LIMIT).await
            {
                return Ok(());
            }
            if started.elapsed() > START_LIMIT {
                panic!(
                    "llmock did not answer within {START_LIMIT:?}; its log:\n{}",
                    self.log()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The server's root, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The base URL of the OpenAI API (`…/v1`): Chat Completions is at
    /// `{base}/chat/completions`, Responses at `{base}/responses`.
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.url)
    }

    /// The OpenAI Responses endpoint (`…/v1/responses`).
    pub fn responses_url(&self) -> String {
        format!("{}/v1/responses", self.url)
    }

    /// The base URL of the Anthropic API (`…/anthropic`): Messages is at
    /// `{base}/v1/messages`.
    pub fn anthropic_base(&self) -> String {
        format!("{}/anthropic", self.url)
    }

    /// The base URL of the Gemini API (`…/gemini/v1beta`): a model is at
    /// `{base}/models/MODEL:generateContent` and `…:streamGenerateContent`.
    pub fn gemini_base(&self) -> String {
        format!("{}/gemini/v1beta", self.url)
    }

    /// Forgets the journal and the scripted behaviours not yet used (the faults given at
    /// start stay): between runs, since the verdict groups identical requests.
    pub async fn reset(&self) {
        self.admin("POST", "/_llmock/reset", None).await;
    }

    /// Queues behaviours for the next requests, in llmock's JSON form, e.g.
    /// `json!([{"type": "stream_fault", "kind": "truncate", "after_chunks": 2}])` or
    /// `{"type": "fail", "status": 429, "retry_after": 1}`. Each takes effect on the first
    /// request it matches (`"match": {"path": "/anthropic/*"}` narrows that), `times` times.
    pub async fn script(&self, behaviors: Value) {
        let body = serde_json::json!({ "behaviors": behaviors });
        self.admin("POST", "/_llmock/scenario", Some(&body)).await;
    }

    /// Every request served since the last reset, oldest first, with its body.
    pub async fn requests(&self) -> Vec<Record> {
        #[derive(Deserialize)]
        struct Journal {
            requests: Vec<Record>,
        }
        let journal: Journal =
            serde_json::from_str(&self.admin("GET", "/_llmock/requests", None).await)
                .expect("llmock's journal is JSON of the expected shape");
        journal.requests
    }

    /// llmock's verdict on how the client coped with the requests since the last reset.
    pub async fn verdict(&self) -> Verdict {
        let json = self.admin("GET", "/_llmock/verdict", None).await;
        let mut verdict: Verdict =
            serde_json::from_str(&json).expect("llmock's verdict is JSON of the expected shape");
        verdict.report = self
            .admin("GET", "/_llmock/verdict?format=text", None)
            .await;
        verdict
    }

    /// The server's output so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A request to the control API; panics unless it answers `2xx`.
    async fn admin(&self, method: &str, path: &str, body: Option<&Value>) -> String {
        let url = format!("{}{path}", self.url);
        match request_within(method, &url, body, REQUEST_LIMIT).await {
            Ok((status, body)) if (200..300).contains(&status) => body,
            Ok((status, body)) => panic!("{method} {url}: HTTP {status}: {body}"),
            Err(e) => panic!("{method} {url}: {e}; llmock's log:\n{}", self.log()),
        }
    }
}

impl Drop for Llmock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// One request llmock served, as its journal holds it.
#[derive(Clone, Debug, Deserialize)]
#[non_exhaustive]
pub struct Record {
    /// Its number since the last reset, from 1.
    pub seq: u64,
    /// `openai`, `anthropic`, `gemini`, … (from the path).
    pub provider: String,
    /// The HTTP method.
    pub method: String,
    /// The path, like `/v1/chat/completions`.
    pub path: String,
    /// The status answered (a broken stream's is `200`).
    pub status: u16,
    /// Whether the request was streamed.
    pub stream: bool,
    /// The fault injected, like `chaos:429` or `stream:truncate@3`.
    pub fault: Option<String>,
    /// Whether the response was sent whole (a truncated stream is not).
    pub completed: bool,
    /// The chunks sent.
    pub chunks_sent: u64,
    /// Seconds the client sat through a stall, when one was injected.
    pub stall_waited: Option<f64>,
    /// Seconds from the request's arrival to the end of its answer.
    pub duration: f64,
    /// The request's JSON body (absent above 256 KiB).
    pub body: Option<Value>,
}

/// llmock's verdict on a client.
#[derive(Clone, Debug, Deserialize)]
#[non_exhaustive]
pub struct Verdict {
    /// No errors (warnings do not fail a verdict).
    pub passed: bool,
    /// Logical calls: attempts that resend a failed one's body are grouped with it.
    pub calls: u64,
    /// Requests.
    pub attempts: u64,
    /// Faults injected.
    pub faults_injected: u64,
    /// What it found.
    pub findings: Vec<Finding>,
    /// The verdict as llmock prints it.
    #[serde(skip)]
    pub report: String,
}

impl Verdict {
    /// The findings of severity `error` (`FAIL` in the report).
    pub fn failures(&self) -> Vec<&Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == "error")
            .collect()
    }

    /// Whether a finding has the code `code` (like `no_read_timeout`).
    pub fn has(&self, code: &str) -> bool {
        self.findings.iter().any(|f| f.code == code)
    }
}

/// One finding of a [`Verdict`].
#[derive(Clone, Debug, Deserialize)]
#[non_exhaustive]
pub struct Finding {
    /// `error` or `warning`.
    pub severity: String,
    /// Like `truncated_stream_accepted`, `retry_storm`, `no_read_timeout`.
    pub code: String,
    /// What happened.
    pub title: String,
    /// The numbers of the requests concerned.
    pub requests: Vec<u64>,
}

/// A port on loopback that was free a moment ago.
fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a loopback port is free")
        .port()
}

/// One plain-HTTP request on loopback, with `body` as JSON, bounded by `limit`: the status and
/// the body. For llmock's control API, and for requests a test makes by hand.
pub async fn request(
    method: &str,
    url: &str,
    body: Option<&Value>,
) -> std::io::Result<(u16, String)> {
    request_within(method, url, body, REQUEST_LIMIT).await
}

async fn request_within(
    method: &str,
    url: &str,
    body: Option<&Value>,
    limit: Duration,
) -> std::io::Result<(u16, String)> {
    let invalid = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| invalid(format!("not a plain-HTTP URL: {url}")))?;
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let body = body.map(Value::to_string).unwrap_or_default();
    // HTTP/1.0: the answer is never chunked, and ends when the server closes.
    let head = format!(
        "{method} {path} HTTP/1.0\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    let exchange = async {
        let mut stream = TcpStream::connect(host).await?;
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        Ok::<_, std::io::Error>(answer)
    };
    let answer = tokio::time::timeout(limit, exchange)
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer in time"))??;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .ok_or_else(|| invalid(format!("not an HTTP answer: {answer}")))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid(format!("no status in {head}")))?;
    Ok((status, body.to_owned()))
}
