//! The Restate server and the `restate_desk` service, for the `restate` tests.
//!
//! The server is the npm package `@restatedev/restate-server`, pinned in `tests/restate/`:
//! found through `RETICENT_RESTATE_SERVER` (`.ci/run` sets it), else installed once per test
//! run into `target/restate-server` by `tests/restate/install.sh`. When it cannot be installed
//! (no npm, no registry), or `RETICENT_SKIP_RESTATE=1`, the tests skip, loudly.
//!
//! Each test starts its own server on free loopback ports, with its data in a folder of its
//! own, and kills it when done.

use std::io::Write as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::process::{Child, Command};

/// How long anything the tests wait for may take: generous, for a loaded machine. A passing
/// run waits a second or two in all.
pub const PATIENCE: Duration = Duration::from_secs(90);

/// The workspace's root folder.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is in the workspace")
        .to_owned()
}

fn skipped(what: &str, why: &str) {
    // Straight to stderr, past the test harness's capture, so it is seen.
    let _ = writeln!(
        std::io::stderr(),
        "\n\
         ************************************************************************\n\
         SKIPPED ({why}): {what}\n\
         was NOT checked against a real Restate server.\n\
         ************************************************************************\n"
    );
}

/// The server binary, or `None` when the test is to be skipped; `what` says what goes
/// unchecked then, in the notice.
pub fn server_binary(what: &str) -> Option<PathBuf> {
    if std::env::var("RETICENT_SKIP_RESTATE").is_ok_and(|v| v == "1") {
        skipped(what, "RETICENT_SKIP_RESTATE=1");
        return None;
    }
    if let Some(path) = std::env::var_os("RETICENT_RESTATE_SERVER") {
        let path = PathBuf::from(path);
        assert!(
            path.exists(),
            "RETICENT_RESTATE_SERVER is {}, which does not exist",
            path.display()
        );
        return Some(path);
    }
    static INSTALLED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match INSTALLED.get_or_init(install) {
        Ok(path) => Some(path.clone()),
        Err(why) => {
            skipped(what, why);
            None
        }
    }
}

/// Runs `tests/restate/install.sh`, which installs the pinned server unless it is there.
fn install() -> Result<PathBuf, String> {
    let script = workspace().join("tests/restate/install.sh");
    let _ = writeln!(
        std::io::stderr(),
        "installing the Restate server with {} ...",
        script.display()
    );
    let output = std::process::Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !output.status.success() {
        return Err(format!(
            "the Restate server could not be installed from npm ({})",
            output.status
        ));
    }
    let path = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    Ok(PathBuf::from(path))
}

/// `n` free ports on loopback. (Another process could take one before it is used; on a test
/// machine that does not happen in practice.)
pub fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free loopback port"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

/// A folder of its own for `name`, emptied: one per call, as the tests of this binary run side
/// by side, each with its own server.
pub fn scratch(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("restate-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch folder can be created");
    dir
}

/// Polls `check` until it gives a value, for at most [`PATIENCE`]; `what` names what is
/// waited for, in the panic.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "gave up waiting for {what} after {PATIENCE:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A Restate server on loopback, killed when dropped.
pub struct Server {
    child: Child,
    dir: PathBuf,
    ingress: u16,
    admin: u16,
    http: reqwest::Client,
}

impl Server {
    /// Starts a server and waits until its admin API and ingress answer; `None` when the test
    /// is to be skipped (see [`server_binary`]).
    pub async fn start(what: &str) -> Option<Self> {
        let binary = server_binary(what)?;
        let dir = scratch("server");
        let ports = free_ports(3);
        let (ingress, admin, node) = (ports[0], ports[1], ports[2]);
        let log = std::fs::File::create(dir.join("server.log")).unwrap();
        let child = Command::new(binary)
            .args([
                "--no-logo",
                "--listen-mode",
                "tcp",
                "--node-name",
                "reticent-test",
            ])
            .arg("--base-dir")
            .arg(dir.join("data"))
            .env(
                "RESTATE_INGRESS__BIND_ADDRESS",
                format!("127.0.0.1:{ingress}"),
            )
            .env("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{admin}"))
            .env("RESTATE_BIND_ADDRESS", format!("127.0.0.1:{node}"))
            .env(
                "RESTATE_ADVERTISED_ADDRESS",
                format!("http://127.0.0.1:{node}/"),
            )
            .env("RESTATE_DISABLE_TELEMETRY", "true")
            .env("RESTATE_ADMIN__DISABLE_WEB_UI", "true")
            // Small: one partition, little memory, on a machine others share.
            .env("RESTATE_DEFAULT_NUM_PARTITIONS", "1")
            .env("RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE", "256MB")
            // A service that comes back is retried soon.
            .env("RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL", "50ms")
            .env("RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL", "500ms")
            .env("RESTATE_LOG_FILTER", "warn")
            .env("RESTATE_LOG_DISABLE_ANSI_CODES", "true")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("the Restate server starts");
        let server = Self {
            child,
            dir,
            ingress,
            admin,
            http: http_client(),
        };
        let admin_health = server.admin_url("/health");
        let ingress_health = server.ingress_url("/restate/health");
        eventually("the Restate server to answer", || async {
            let admin = server.http.get(&admin_health).send().await.ok()?;
            let ingress = server.http.get(&ingress_health).send().await.ok()?;
            (admin.status().is_success() && ingress.status().is_success()).then_some(())
        })
        .await;
        Some(server)
    }

    pub fn admin_url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.admin)
    }

    pub fn ingress_url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.ingress)
    }

    /// Registers the service deployment at `uri` with the admin API.
    pub async fn register(&self, uri: &str) {
        let url = self.admin_url("/deployments");
        let body = serde_json::json!({ "uri": uri, "force": true });
        eventually("the deployment to be registered", || async {
            let response = self.http.post(&url).json(&body).send().await.ok()?;
            response.status().is_success().then_some(())
        })
        .await;
    }

    /// POSTs `body` (JSON, or nothing) to the ingress path `path`: the status and the body.
    pub async fn post(&self, path: &str, body: Option<&Value>) -> (u16, String) {
        let mut request = self.http.post(self.ingress_url(path));
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.expect("the ingress answers");
        let status = response.status().as_u16();
        (status, response.text().await.unwrap_or_default())
    }

    /// POSTs the JSON text `body` as it is written — JSON a `Value` cannot hold, such as a
    /// repeated key — to the ingress: the status and the body of the answer.
    pub async fn post_text(&self, path: &str, body: &str) -> (u16, String) {
        let response = self
            .http
            .post(self.ingress_url(path))
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .expect("the ingress answers");
        let status = response.status().as_u16();
        (status, response.text().await.unwrap_or_default())
    }

    /// Starts the workflow `workflow` with id `id` on `input`, without waiting for it: its
    /// invocation id.
    pub async fn start_workflow(&self, workflow: &str, id: &str, input: &Value) -> String {
        let (status, body) = self
            .post(&format!("/{workflow}/{id}/run/send"), Some(input))
            .await;
        assert!(status < 300, "starting the workflow: {status} {body}");
        let body: Value = serde_json::from_str(&body).unwrap();
        body["invocationId"]
            .as_str()
            .expect("an invocation id")
            .to_owned()
    }

    /// Waits for the workflow's result (its `run` handler's output) and returns it.
    pub async fn outcome(&self, workflow: &str, id: &str) -> Value {
        let url = self.ingress_url(&format!("/restate/workflow/{workflow}/{id}/attach"));
        let response = tokio::time::timeout(PATIENCE, self.http.get(&url).send())
            .await
            .expect("the workflow finishes in time")
            .expect("the ingress answers");
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        assert!(status.is_success(), "the workflow failed: {status} {body}");
        serde_json::from_str(&body).expect("the outcome is JSON")
    }

    /// The answer of the admin API's SQL endpoint to `sql`.
    async fn query(&self, sql: String) -> Value {
        let response = self
            .http
            .post(self.admin_url("/query"))
            .header("accept", "application/json")
            .json(&serde_json::json!({ "query": sql }))
            .send()
            .await
            .expect("the admin API answers");
        response.json().await.expect("the query answers JSON")
    }

    /// The id of the invocation of `workflow`'s `run` handler for the key `key`.
    pub async fn invocation_of(&self, workflow: &str, key: &str) -> String {
        let body = self
            .query(format!(
                "SELECT id FROM sys_invocation WHERE target_service_name = '{workflow}' \
                 AND target_service_key = '{key}' AND target_handler_name = 'run'"
            ))
            .await;
        body["rows"][0]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no invocation of {workflow}/{key}: {body}"))
            .to_owned()
    }

    /// Every entry of an invocation's journal as the admin API shows it, with the payloads
    /// (bytes) decoded as text: what Restate stored.
    pub async fn journal(&self, invocation: &str) -> Vec<String> {
        let body = self
            .query(format!(
                "SELECT index, entry_json FROM sys_journal WHERE id = '{invocation}' ORDER BY index"
            ))
            .await;
        body["rows"]
            .as_array()
            .expect("journal rows")
            .iter()
            .map(|row| {
                let entry: Value =
                    serde_json::from_str(row["entry_json"].as_str().unwrap_or("null"))
                        .unwrap_or(Value::Null);
                decode_payloads(&entry)
            })
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// An HTTP client for the server on loopback, over plain HTTP: reqwest wants a TLS setup to
/// build one all the same.
fn http_client() -> reqwest::Client {
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .expect("an HTTP client")
}

/// A journal entry as text, with every array of bytes (a payload) decoded.
fn decode_payloads(entry: &Value) -> String {
    fn walk(value: &Value, out: &mut String) {
        match value {
            Value::Array(items)
                if !items.is_empty()
                    && items.iter().all(|i| i.as_u64().is_some_and(|b| b < 256)) =>
            {
                let bytes: Vec<u8> = items.iter().map(|i| i.as_u64().unwrap() as u8).collect();
                out.push_str(&String::from_utf8_lossy(&bytes));
                out.push(' ');
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            Value::Object(map) => map.iter().for_each(|(k, v)| {
                out.push_str(k);
                out.push(' ');
                walk(v, out);
            }),
            other => {
                out.push_str(&other.to_string());
                out.push(' ');
            }
        }
    }
    let mut out = String::new();
    walk(entry, &mut out);
    out
}

/// The `restate_desk` service (or another of the test programs that serve a Restate
/// endpoint): a process the test kills and starts again, on the same port, with its state
/// folder (where its tools count what they did) outside the process.
pub struct Desk {
    child: Option<Child>,
    pub port: u16,
    pub dir: PathBuf,
    program: &'static str,
    /// The arguments besides `--port` and `--dir`.
    args: Vec<String>,
}

impl Desk {
    /// Starts the desk on a free port, counting into `dir`.
    pub fn start(dir: &Path) -> Self {
        Self::program(env!("CARGO_BIN_EXE_restate_desk"), Vec::new(), dir)
    }

    /// Starts `program` with `args`, its endpoint on a free port (`--port`), counting into
    /// `dir` (`--dir`).
    pub fn program(program: &'static str, args: Vec<String>, dir: &Path) -> Self {
        let mut desk = Self {
            child: None,
            port: free_ports(1)[0],
            dir: dir.to_owned(),
            program,
            args,
        };
        desk.spawn();
        desk
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("desk.log"))
            .unwrap();
        let child = Command::new(self.program)
            .arg("--port")
            .arg(self.port.to_string())
            .arg("--dir")
            .arg(&self.dir)
            .args(&self.args)
            .env("RESTATE_DESK_LOG", "warn")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("the desk starts");
        self.child = Some(child);
    }

    /// The desk's address, for the server.
    pub fn uri(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Kills the process at once (SIGKILL): no shutdown, nothing flushed, as in a crash.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().await.expect("the desk can be killed");
        }
    }

    /// Starts the desk again, on the same port and with the same state folder.
    pub async fn restart(&mut self) {
        self.kill().await;
        self.spawn();
        // Until it listens, the server's retries fail, and go on.
        let port = self.port;
        eventually("the desk to listen again", || async move {
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .ok()
                .map(drop)
        })
        .await;
    }

    /// The lines of the counting file `name` (empty when the file does not exist yet).
    pub fn lines(&self, name: &str) -> Vec<String> {
        std::fs::read_to_string(self.dir.join(name))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Desk {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.start_kill();
        }
        // Kept when the test fails: the desk's log and counts say what happened.
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
