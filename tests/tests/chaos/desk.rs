//! What the chaos tests share: a desk whose charge fails with a secret in its error, an agent
//! over each provider at llmock, a streamed run collected whole, and the checks every run must
//! pass: llmock's verdict has no failure, and no request body carries the secret.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures::StreamExt;
use reticent::providers::anthropic::Anthropic;
use reticent::providers::gemini::Gemini;
use reticent::providers::openai::OpenAi;
use reticent::providers::openai_responses::OpenAiResponses;
use reticent::{Agent, AgentError, AgentEvent, AgentResult, Model};
use reticent_tests::llmock::Llmock;

/// A secret in the charge's error: the caller gets it, no request to the model carries it.
pub const CANARY: &str = "CANARY-chaos-7f3e-postgres://pay:s3cr3t@10.0.0.8/pay";

#[derive(Debug, thiserror::Error)]
#[error("gateway refused the charge: {CANARY}")]
pub struct GatewayError;

/// The desk: a charge that always fails, and the number of times it ran.
#[derive(Default)]
pub struct Desk {
    pub charges: AtomicU32,
}

#[reticent::tools]
impl Desk {
    /// Charge the customer's card for an order.
    #[tool]
    async fn charge_card(&self, order_id: String) -> Result<String, GatewayError> {
        let _ = order_id;
        self.charges.fetch_add(1, Ordering::SeqCst);
        Err(GatewayError)
    }
}

/// The request of every run: llmock calls the tool that best matches it, then answers.
pub const REQUEST: &str = "Charge the card for order ORD-1042.";

/// The providers under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    /// Chat Completions at `/v1`.
    OpenAi,
    /// Messages at `/anthropic`.
    Anthropic,
    /// Responses at `/v1/responses`.
    Responses,
    /// Gemini at `/gemini/v1beta`.
    Gemini,
}

pub const PROVIDERS: [Provider; 4] = [
    Provider::OpenAi,
    Provider::Anthropic,
    Provider::Responses,
    Provider::Gemini,
];

/// The transport settings of a test: quick backoff, the default budget, short limits.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_retries: u32,
    pub timeout: Duration,
    /// The providers' `stream_idle_timeout`, when not their default.
    pub stream_idle: Option<Duration>,
    /// The providers' `first_event_timeout`, when not their default.
    pub first_event: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_retries: 2,
            timeout: Duration::from_secs(60),
            stream_idle: None,
            first_event: None,
        }
    }
}

/// Sets the idle limits of `limits` that are set on a provider `$model`.
macro_rules! idle_limits {
    ($model:expr, $limits:expr) => {{
        let mut model = $model;
        if let Some(idle) = $limits.stream_idle {
            model = model.stream_idle_timeout(idle);
        }
        if let Some(first) = $limits.first_event {
            model = model.first_event_timeout(first);
        }
        model
    }};
}

impl Provider {
    /// How many chunks llmock streams of a turn that calls a tool before the call has begun
    /// (and been passed on): a fault after them breaks a turn that began. `None` for Gemini,
    /// which sends a call whole in the turn's only chunk.
    pub fn began_after(self) -> Option<u32> {
        match self {
            // the role, then the call's start
            Self::OpenAi => Some(2),
            // `message_start`, then the `tool_use` block's start
            Self::Anthropic => Some(2),
            // `response.created`, `response.in_progress`, then the call's item
            Self::Responses => Some(3),
            Self::Gemini => None,
        }
    }

    /// The provider at `server`, with `limits` and a quick backoff.
    pub fn model(self, server: &Llmock, limits: Limits) -> Arc<dyn Model> {
        let delay = Duration::from_millis(20);
        match self {
            Self::OpenAi => Arc::new(idle_limits!(
                OpenAi::new("sk-chaos", "gpt-4o-mini")
                    .base_url(server.openai_base())
                    .retry_delay(delay)
                    .max_retries(limits.max_retries)
                    .timeout(limits.timeout),
                limits
            )),
            Self::Anthropic => Arc::new(idle_limits!(
                Anthropic::new("sk-ant-chaos", "claude-sonnet-4-5")
                    .base_url(server.anthropic_base())
                    .retry_delay(delay)
                    .max_retries(limits.max_retries)
                    .timeout(limits.timeout),
                limits
            )),
            Self::Responses => Arc::new(idle_limits!(
                OpenAiResponses::new("sk-chaos", "o4-mini")
                    .base_url(server.openai_base())
                    .retry_delay(delay)
                    .max_retries(limits.max_retries)
                    .timeout(limits.timeout),
                limits
            )),
            Self::Gemini => Arc::new(idle_limits!(
                Gemini::new("gm-chaos", "gemini-2.5-flash")
                    .base_url(server.gemini_base())
                    .retry_delay(delay)
                    .max_retries(limits.max_retries)
                    .timeout(limits.timeout),
                limits
            )),
        }
    }
}

/// An agent over `model` with the desk.
pub fn agent(model: Arc<dyn Model>, desk: &Arc<Desk>) -> Agent {
    Agent::builder(model)
        .toolbox(Arc::clone(desk))
        .build()
        .expect("the desk's agent builds")
}

/// A streamed run's events, and how it ended.
pub async fn run_streamed(agent: &Agent) -> (Vec<AgentEvent>, Result<AgentResult, AgentError>) {
    let mut events: Vec<AgentEvent> = agent.run_stream(REQUEST).collect().await;
    let Some(AgentEvent::Finished(result)) = events.pop() else {
        panic!("the last event of a run is `Finished`");
    };
    (events, result)
}

/// The checks every run passes, whatever was injected: llmock's verdict has no failure, and no
/// request the model received carries the charge's secret.
pub async fn check_run(what: &str, server: &Llmock) {
    let verdict = server.verdict().await;
    assert!(
        verdict.failures().is_empty(),
        "{what}: llmock's verdict:\n{}",
        verdict.report
    );
    let journal = server.requests().await;
    assert!(!journal.is_empty(), "{what}: llmock received nothing");
    for record in &journal {
        let body = record
            .body
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(
            !body.contains(CANARY) && !body.contains("s3cr3t"),
            "{what}: request #{} carries the charge's secret: {body}",
            record.seq
        );
    }
}

/// Whether `result` failed as the desk's charge fails: the caller has the full error.
pub fn caller_has_the_secret(result: &AgentResult) -> bool {
    result
        .tool_failures
        .iter()
        .any(|f| f.error_chain().contains(CANARY))
}
