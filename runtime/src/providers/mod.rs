//! Model providers over HTTP, each behind a cargo feature.
//!
//! | feature | provider | API |
//! |---|---|---|
//! | `openai` | [`openai::OpenAi`] | Chat Completions, at OpenAI or any compatible server (Ollama, vLLM, llama.cpp) |
//! | `openai` | [`openai_responses::OpenAiResponses`] | the Responses API, which reasoning models need |
//! | `anthropic` | [`anthropic::Anthropic`] | the Messages API |
//! | `gemini` | [`gemini::Gemini`] | the Gemini API (`generateContent`) |
//!
//! ```no_run
//! # #[cfg(feature = "openai")]
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use reticent::Agent;
//! use reticent::providers::openai::OpenAi;
//!
//! /// Add two numbers.
//! #[reticent::tool]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! let model = OpenAi::from_env("gpt-4o-mini")? // OPENAI_API_KEY, OPENAI_BASE_URL
//!     .timeout(Duration::from_secs(60))
//!     .max_retries(3);
//! let agent = Agent::builder(model).tool(Add).build()?;
//! let result = agent.run("What is 2 + 3?").await?;
//! println!("{}", result.output);
//! # Ok(())
//! # }
//! # #[cfg(feature = "openai")]
//! # let _ = demo;
//! ```
//!
//! Every provider sends the request once per turn and retries `408`, `429`, `5xx`, timeouts and
//! connection failures with exponential backoff and jitter, waiting what `retry-after` (or
//! `retry-after-ms`) asks for; a wait too large to represent counts as longer than
//! `max_retry_delay` (not retried), and a value that is not a wait is ignored. A failure that
//! outlasts the retries reaches the caller as a [`ModelError`](crate::ModelError) with the
//! HTTP status and the provider's own message; it never reaches the model. API keys are held in a [`Secret`](crate::Secret): they are not
//! in `Debug` output, not in logs and not in errors.
//!
//! # Streaming
//!
//! Every provider implements [`Model::stream`] over the API's server-sent events: OpenAI's
//! chunks (`stream: true`, with `stream_options.include_usage`), the Responses API's
//! `response.*` events, Anthropic's `message_start` … `message_stop` events and Gemini's
//! `streamGenerateContent` chunks become [`ModelEvent`](crate::model::ModelEvent)s as they
//! arrive, then `Completed` with the response `complete` would have returned. The request is
//! retried as for `complete`, but only until the first event is passed on; after that a
//! failure ends the stream with an error that says it broke off. The events are parsed
//! within `max_event_bytes` each and `max_response_bytes` in all, an answer holds at most
//! `max_tool_calls` calls (default 1024; `complete` too), and dropping the stream closes the
//! connection. docs/providers.md has the details.
//!
//! # Choosing a model from the environment
//!
//! [`from_env`] reads `RETICENT_MODEL=PROVIDER:MODEL` and builds the provider, so one binary
//! runs against any of them:
//!
//! | `RETICENT_MODEL` | provider | also reads |
//! |---|---|---|
//! | `openai:gpt-4o-mini` | [`openai::OpenAi`] | `OPENAI_API_KEY`, `OPENAI_BASE_URL` |
//! | `openai-responses:o4-mini` | [`openai_responses::OpenAiResponses`] | `OPENAI_API_KEY`, `OPENAI_BASE_URL` |
//! | `anthropic:claude-sonnet-4-5` | [`anthropic::Anthropic`] | `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` |
//! | `gemini:gemini-2.5-flash` | [`gemini::Gemini`] | `GEMINI_API_KEY`, `GEMINI_BASE_URL` |
//! | `ollama:llama3.2` | [`openai::OpenAi`] at Ollama, no key | `OLLAMA_HOST` (default `http://localhost:11434`) |
//!
//! The model name is everything after the first `:`, so `ollama:qwen2.5:7b` works.

use std::sync::Arc;

use crate::model::Model;

#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
mod endpoint;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
mod http;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
mod sse;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
mod stream;

#[cfg(feature = "anthropic")]
pub mod anthropic;
#[cfg(feature = "gemini")]
pub mod gemini;
#[cfg(feature = "openai")]
pub mod openai;
#[cfg(feature = "openai")]
pub mod openai_responses;

/// The providers' response parsers, for the fuzz targets in `fuzz/` and the hostile-input
/// tests, which feed them arbitrary bytes. Not public API: no stability guarantees.
#[doc(hidden)]
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
pub mod __fuzz {
    use crate::model::{ModelError, ModelEvent, ModelResponse};

    /// Reads a Chat Completions response body, as [`OpenAi`](super::openai::OpenAi) does.
    #[cfg(feature = "openai")]
    pub fn parse_openai(body: &[u8]) -> Result<ModelResponse, ModelError> {
        super::openai::parse(body)
    }

    /// Reads a Messages API response body, as [`Anthropic`](super::anthropic::Anthropic)
    /// does.
    #[cfg(feature = "anthropic")]
    pub fn parse_anthropic(body: &[u8]) -> Result<ModelResponse, ModelError> {
        super::anthropic::parse(body)
    }

    /// Reads a Responses API response body, as
    /// [`OpenAiResponses`](super::openai_responses::OpenAiResponses) does.
    #[cfg(feature = "openai")]
    pub fn parse_openai_responses(body: &[u8]) -> Result<ModelResponse, ModelError> {
        super::openai_responses::parse(body)
    }

    /// Reads a Gemini `generateContent` response body, as [`Gemini`](super::gemini::Gemini)
    /// does.
    #[cfg(feature = "gemini")]
    pub fn parse_gemini(body: &[u8]) -> Result<ModelResponse, ModelError> {
        super::gemini::parse(body)
    }

    /// Reads a streamed Responses API body fed in pieces of `piece` bytes, as
    /// [`OpenAiResponses`](super::openai_responses::OpenAiResponses) reads one, within the
    /// given limits: the events it yields, the last being `Completed` or an error.
    #[cfg(feature = "openai")]
    pub fn read_openai_responses_stream(
        body: &[u8],
        piece: usize,
        max_event_bytes: usize,
        max_response_bytes: usize,
        max_tool_calls: usize,
    ) -> Vec<Result<ModelEvent, ModelError>> {
        super::stream::read_all::<super::openai_responses::Events>(
            body,
            piece,
            max_event_bytes,
            max_response_bytes,
            max_tool_calls,
        )
    }

    /// Reads a streamed Gemini body fed in pieces of `piece` bytes, as
    /// [`Gemini`](super::gemini::Gemini) reads one, within the given limits: the events it
    /// yields, the last being `Completed` or an error.
    #[cfg(feature = "gemini")]
    pub fn read_gemini_stream(
        body: &[u8],
        piece: usize,
        max_event_bytes: usize,
        max_response_bytes: usize,
        max_tool_calls: usize,
    ) -> Vec<Result<ModelEvent, ModelError>> {
        super::stream::read_all::<super::gemini::Chunks>(
            body,
            piece,
            max_event_bytes,
            max_response_bytes,
            max_tool_calls,
        )
    }

    /// Reads a streamed Chat Completions body fed in pieces of `piece` bytes, as
    /// [`OpenAi`](super::openai::OpenAi) reads one from the network, within the given limits
    /// (each the setting of that name): the events it yields, the last being `Completed` or
    /// an error.
    #[cfg(feature = "openai")]
    pub fn read_openai_stream(
        body: &[u8],
        piece: usize,
        max_event_bytes: usize,
        max_response_bytes: usize,
        max_tool_calls: usize,
    ) -> Vec<Result<ModelEvent, ModelError>> {
        super::stream::read_all::<super::openai::Chunks>(
            body,
            piece,
            max_event_bytes,
            max_response_bytes,
            max_tool_calls,
        )
    }

    /// Reads a streamed Messages API body fed in pieces of `piece` bytes, as
    /// [`Anthropic`](super::anthropic::Anthropic) reads one from the network, within the given
    /// limits (each the setting of that name): the events it yields, the last being
    /// `Completed` or an error.
    #[cfg(feature = "anthropic")]
    pub fn read_anthropic_stream(
        body: &[u8],
        piece: usize,
        max_event_bytes: usize,
        max_response_bytes: usize,
        max_tool_calls: usize,
    ) -> Vec<Result<ModelEvent, ModelError>> {
        super::stream::read_all::<super::anthropic::Events>(
            body,
            piece,
            max_event_bytes,
            max_response_bytes,
            max_tool_calls,
        )
    }
}

/// The environment variable [`from_env`] reads.
pub const MODEL_ENV: &str = "RETICENT_MODEL";

/// The providers [`from_spec`] knows.
pub const PROVIDERS: &[&str] = &[
    "openai",
    "openai-responses",
    "anthropic",
    "gemini",
    "ollama",
];

/// Why a provider could not be configured.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A required environment variable is not set (or is empty).
    #[error("the environment variable `{var}` is not set")]
    MissingEnv {
        /// The variable.
        var: String,
    },
    /// The spec is not `PROVIDER:MODEL`.
    #[error("`{spec}` is not a model spec: expected PROVIDER:MODEL, like `openai:gpt-4o-mini`")]
    InvalidSpec {
        /// The spec as given.
        spec: String,
    },
    /// The spec names a provider reticent does not have.
    #[error("unknown model provider `{provider}`; the providers are: {}", PROVIDERS.join(", "))]
    UnknownProvider {
        /// The provider as given.
        provider: String,
    },
    /// The provider exists, but its cargo feature is not enabled.
    #[error("the `{provider}` provider needs reticent's `{feature}` feature")]
    FeatureDisabled {
        /// The provider.
        provider: String,
        /// The feature to enable.
        feature: &'static str,
    },
}

/// The model named by `RETICENT_MODEL` (`PROVIDER:MODEL`, like `openai:gpt-4o-mini`), with
/// its keys and base URL from the environment. See the [module docs](self) for the table.
pub fn from_env() -> Result<Arc<dyn Model>, ConfigError> {
    let spec = env(MODEL_ENV).ok_or_else(|| ConfigError::MissingEnv {
        var: MODEL_ENV.to_owned(),
    })?;
    from_env_spec(&spec)
}

/// The model named by `spec` (`PROVIDER:MODEL`), with its keys and base URL from the
/// environment.
///
/// ```
/// use reticent::providers::{ConfigError, from_env_spec};
///
/// let error = from_env_spec("gpt-4o-mini").err().unwrap();
/// assert!(matches!(error, ConfigError::InvalidSpec { .. }));
/// ```
pub fn from_env_spec(spec: &str) -> Result<Arc<dyn Model>, ConfigError> {
    from_spec(spec, env)
}

/// The model named by `spec` (`PROVIDER:MODEL`), reading the variables it needs through
/// `lookup` instead of the process environment: for configuration from a file or a secret
/// store.
///
/// ```
/// use reticent::providers::{ConfigError, from_spec};
///
/// let error = from_spec("mistral:large", |_| None).err().unwrap();
/// assert_eq!(error, ConfigError::UnknownProvider { provider: "mistral".into() });
/// ```
pub fn from_spec(
    spec: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Model>, ConfigError> {
    let (provider, model) = spec
        .trim()
        .split_once(':')
        .filter(|(p, m)| !p.is_empty() && !m.is_empty())
        .ok_or_else(|| ConfigError::InvalidSpec {
            spec: spec.to_owned(),
        })?;
    let lookup = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
    match provider {
        "openai" | "ollama" | "openai-responses" => openai_model(provider, model, &lookup),
        "anthropic" => anthropic_model(model, &lookup),
        "gemini" => gemini_model(model, &lookup),
        other => Err(ConfigError::UnknownProvider {
            provider: other.to_owned(),
        }),
    }
}

#[cfg(feature = "openai")]
fn openai_model(
    provider: &str,
    model: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Model>, ConfigError> {
    Ok(match provider {
        "ollama" => Arc::new(openai::OpenAi::ollama_from_lookup(model, lookup)),
        "openai-responses" => Arc::new(openai_responses::OpenAiResponses::from_lookup(
            model, lookup,
        )?),
        _ => Arc::new(openai::OpenAi::from_lookup(model, lookup)?),
    })
}

#[cfg(not(feature = "openai"))]
fn openai_model(
    provider: &str,
    _model: &str,
    _lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Model>, ConfigError> {
    Err(ConfigError::FeatureDisabled {
        provider: provider.to_owned(),
        feature: "openai",
    })
}

#[cfg(feature = "anthropic")]
fn anthropic_model(
    model: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Model>, ConfigError> {
    Ok(Arc::new(anthropic::Anthropic::from_lookup(model, lookup)?))
}

#[cfg(not(feature = "anthropic"))]
fn anthropic_model(
    _model: &str,
    _lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Model>, ConfigError> {
    Err(ConfigError::FeatureDisabled {
        provider: "anthropic".to_owned(),
        feature: "anthropic",
    })
}

#[cfg(feature = "gemini")]
fn gemini_model(
    model: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Model>, ConfigError> {
    Ok(Arc::new(gemini::Gemini::from_lookup(model, lookup)?))
}

#[cfg(not(feature = "gemini"))]
fn gemini_model(
    _model: &str,
    _lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Model>, ConfigError> {
    Err(ConfigError::FeatureDisabled {
        provider: "gemini".to_owned(),
        feature: "gemini",
    })
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}
