//! The client the MCP conformance suite's client scenarios test: `McpClient` over streamable
//! HTTP. The suite runs it with the server's URL as the last argument, the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO` and, for some, what the scenario gives the client (a
//! pre-registered client's id and secret, or its private key) as JSON in
//! `MCP_CONFORMANCE_CONTEXT`:
//!
//! ```text
//! MCP_CONFORMANCE_SCENARIO=tools_call conformance_client http://localhost:PORT/mcp
//! ```
//!
//! It connects, lists the server's tools and calls the one the scenario expects
//! (`tools_call`: `add_numbers`; `sse-retry`: `test_reconnection`; `auth/*`: `test-tool`;
//! `elicitation-sep1034-client-defaults`: `test_client_elicitation_defaults`, a baselined scenario),
//! then closes the connection. It exits with 1 when any step fails.
//!
//! For the `auth/*` scenarios it connects with OAuth. The suite's authorization server
//! approves every request at once, answering its authorization URL with a redirect that
//! holds the code: the user's step here is to fetch that URL and read the redirect
//! ([`follow`]), as the suite's own example client does. A person would open it in a browser.

use std::time::Duration;

use reticent::ToolContext;
use reticent::mcp::McpClient;
use reticent::mcp::oauth::{IdentityProvider, OAuth, SigningKey};
use reticent_tests::mcp::oauth::follow;
use serde_json::{Value, json};

/// The client metadata document URL the suite's `auth/basic-cimd` expects as the client id.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The redirect URI registered (the suite's server redirects to it; nothing listens there).
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The tool each scenario expects to be called, with its arguments.
fn call_for(scenario: &str) -> Option<(&'static str, Value)> {
    match scenario {
        "tools_call" => Some(("add_numbers", json!({"a": 5, "b": 3}))),
        "sse-retry" => Some(("test_reconnection", json!({}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        auth if auth.starts_with("auth/") => Some(("test-tool", json!({}))),
        _ => None,
    }
}

/// The field `name` of the scenario's context (`MCP_CONFORMANCE_CONTEXT`).
fn context(name: &str) -> Result<String, Box<dyn std::error::Error>> {
    let context: Value = serde_json::from_str(&std::env::var("MCP_CONFORMANCE_CONTEXT")?)?;
    Ok(context[name]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("the context has no `{name}`"))?)
}

/// The OAuth settings for an `auth/*` scenario.
fn oauth(scenario: &str) -> Result<OAuth, Box<dyn std::error::Error>> {
    let oauth = match scenario {
        "auth/client-credentials-basic" => {
            OAuth::client_credentials(context("client_id")?, context("client_secret")?)
        }
        "auth/client-credentials-jwt" => {
            let key = SigningKey::from_pem(&context("private_key_pem")?)?;
            let algorithm = context("signing_algorithm")?;
            if key.algorithm() != algorithm {
                return Err(format!(
                    "the scenario signs with {algorithm}, its key with {}",
                    key.algorithm()
                )
                .into());
            }
            OAuth::client_credentials_jwt(context("client_id")?, key)
        }
        "auth/cross-app-access-complete-flow" => {
            let idp = IdentityProvider::new(
                context("idp_issuer")?,
                context("idp_token_endpoint")?,
                context("idp_client_id")?,
                context("idp_id_token")?,
            );
            OAuth::enterprise(idp, context("client_id")?, context("client_secret")?)
        }
        "auth/pre-registration" => OAuth::new(REDIRECT_URI, follow)
            .preregistered(context("client_id")?, Some(context("client_secret")?)),
        _ => OAuth::new(REDIRECT_URI, follow)
            .client_name("reticent-conformance")
            .client_metadata_url(CLIENT_METADATA_URL),
    };
    Ok(oauth
        .timeout(Duration::from_secs(5))
        .authorize_timeout(Duration::from_secs(10)))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .next_back()
        .ok_or("usage: conformance_client URL")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let mut builder = McpClient::builder()
        .name("conformance")
        .timeout(Duration::from_secs(20))
        .connect_timeout(Duration::from_secs(10));
    if scenario.starts_with("auth/") {
        builder = builder.oauth(oauth(&scenario)?);
    }
    let client = builder.http(url).await?;
    let tools = client.tools().await?;
    eprintln!("{} tools listed", tools.len());
    if let Some((name, arguments)) = call_for(&scenario) {
        let tool = tools
            .iter()
            .find(|tool| tool.definition().name == name)
            .ok_or_else(|| format!("the server lists no tool `{name}`"))?;
        let output = tool
            .call(arguments, ToolContext::new("1", name))
            .await
            .map_err(|error| format!("{name} failed: {error}"))?;
        eprintln!("{name}: {output}");
    }
    client.close().await;
    Ok(())
}
