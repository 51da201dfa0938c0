//! What every HTTP client reticent makes starts from (the model providers', the MCP client's):
//! rustls on the `ring` provider, or the process-wide default provider when the application
//! installed one, the platform's certificate verifier, and HTTP/1.1 only.

use std::sync::{Arc, OnceLock};

/// A client builder with reticent's TLS configuration and user agent.
///
/// The TLS configuration is built once per process: the verifier reads the system's CA
/// certificates.
pub(crate) fn client_builder() -> Result<reqwest::ClientBuilder, String> {
    static TLS: OnceLock<Result<rustls::ClientConfig, String>> = OnceLock::new();
    let tls = TLS
        .get_or_init(|| {
            use rustls_platform_verifier::BuilderVerifierExt;
            let provider = rustls::crypto::CryptoProvider::get_default()
                .cloned()
                .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
            let builder = || {
                rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
                    .with_safe_default_protocol_versions()
                    .map_err(|e| e.to_string())
            };
            let mut config = match builder()?.with_platform_verifier() {
                Ok(config) => config.with_no_client_auth(),
                Err(error) => {
                    // plain HTTP (a local Ollama) still works; HTTPS fails certificate checks
                    tracing::warn!(%error, "no platform certificate verifier; HTTPS requests will fail");
                    builder()?
                        .with_root_certificates(rustls::RootCertStore::empty())
                        .with_no_client_auth()
                }
            };
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Ok(config)
        })
        .clone()?;
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .user_agent(concat!("reticent/", env!("CARGO_PKG_VERSION"))))
}
