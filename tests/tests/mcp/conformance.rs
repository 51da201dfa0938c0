//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/conformance/`), run against `McpServer` and `McpClient`: every scenario must pass,
//! except those the baseline (`tests/conformance/baseline.yml`) lists with their reasons, and a
//! baselined scenario that passes fails the run too (the suite's `--expected-failures`).
//!
//! Needs `RETICENT_NODE` and `RETICENT_MCP_CONFORMANCE`, which `.ci/run` sets; skipped, loudly,
//! without them.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use reticent::CancellationToken;
use reticent::mcp::rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use reticent_tests::mcp::conformance::{self, Suite};

/// How long one run of the suite may take.
const SUITE_LIMIT: Duration = Duration::from_secs(300);

/// The client scenarios, run one by one (`elicitation-sep1034-client-defaults` is baselined:
/// `McpClient` declines elicitation).
const CLIENT_SCENARIOS: [&str; 4] = [
    "initialize",
    "tools_call",
    "sse-retry",
    "elicitation-sep1034-client-defaults",
];

/// The suites of client scenarios run whole (in parallel): OAuth (`auth/*`), as the current
/// revision has it, as the 2025-03-26 one had it, its extensions and its drafts.
const CLIENT_SUITES: [&str; 4] = ["auth", "backcompat", "extensions", "draft"];

/// The `auth/*` scenarios in which the client is meant to fail (the suite allows its error):
/// it must refuse a resource that is not the server, and give up on scopes it is never granted.
const AUTH_MEANT_TO_FAIL: [&str; 2] = ["resource-mismatch", "scope-retry-limit"];

/// The `auth/*` scenarios of `results` (`NAME-TIMESTAMP` folders under `auth/`) in which the
/// client did not call the tool with its token: the suite's checks are about the
/// authorization, so a client that failed after it could pass them.
fn authorized_but_no_call(results: &Path) -> Vec<String> {
    let baseline = std::fs::read_to_string(conformance::baseline()).expect("the baseline reads");
    let Ok(folders) = std::fs::read_dir(results.join("auth")) else {
        return Vec::new();
    };
    let mut missing = Vec::new();
    for folder in folders.map(|entry| entry.expect("the results folder lists").path()) {
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        // NAME-2026-12-04T22-42-35-688Z
        let scenario = name.get(..name.len().saturating_sub(25)).unwrap_or(&name);
        if AUTH_MEANT_TO_FAIL.contains(&scenario)
            || baseline.contains(&format!("- auth/{scenario} "))
        {
            continue;
        }
        let stderr = std::fs::read_to_string(folder.join("stderr.txt")).unwrap_or_default();
        if !stderr.contains("test-tool: ") {
            missing.push(format!("auth/{scenario}:\n{stderr}"));
        }
    }
    missing
}

/// Runs the suite with `args` and the baseline; panics, with the suite's report, unless it
/// exits with success.
async fn run(suite: &Suite, args: &[&str], results: &Path) {
    let baseline = conformance::baseline();
    let mut all: Vec<&str> = args.to_vec();
    let (baseline, results) = (
        baseline.to_str().expect("the path is UTF-8"),
        results.to_str().expect("the path is UTF-8"),
    );
    all.extend(["--expected-failures", baseline, "--output-dir", results]);
    let output = tokio::time::timeout(SUITE_LIMIT, suite.command(&all).output())
        .await
        .unwrap_or_else(|_| panic!("the suite did not finish within {SUITE_LIMIT:?}: {args:?}"))
        .expect("the suite runs");
    let Output {
        status,
        stdout,
        stderr,
    } = output;
    assert!(
        status.success(),
        "the conformance suite failed ({status}) for {args:?}:\n{}\n{}",
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&stderr),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_passes_every_scenario_that_applies() {
    let Some(suite) = Suite::find("McpServer against every server scenario") else {
        return;
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = shutdown.clone();
    let serving = tokio::spawn(conformance::server().serve_http(listener, config));

    let results = conformance::results("server");
    run(
        &suite,
        &["server", "--url", &url, "--suite", "all"],
        &results,
    )
    .await;

    shutdown.cancel();
    let served = tokio::time::timeout(Duration::from_secs(10), serving).await;
    assert!(
        matches!(served, Ok(Ok(Ok(())))),
        "the server ends: {served:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_passes_every_scenario_that_applies() {
    let Some(suite) = Suite::find("McpClient against the client scenarios") else {
        return;
    };
    let client = env!("CARGO_BIN_EXE_conformance_client");
    for scenario in CLIENT_SCENARIOS {
        let results = conformance::results(&format!("client-{scenario}"));
        let args = ["client", "--command", client, "--scenario", scenario];
        run(&suite, &args, &results).await;
    }
    for name in CLIENT_SUITES {
        let results = conformance::results(&format!("client-suite-{name}"));
        let args = ["client", "--command", client, "--suite", name];
        run(&suite, &args, &results).await;
        let missing = authorized_but_no_call(&results);
        assert!(
            missing.is_empty(),
            "the client did not call the tool after authorizing: {missing:#?}"
        );
    }
}
