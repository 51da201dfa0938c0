//! Shared pieces of the reticent examples: the support desk's tools ([`support_desk`]) and
//! choosing a real model from the environment.
//!
//! The examples run offline on a scripted model. Set `RETICENT_MODEL` to run them against a
//! real one (its answers streamed unless `RETICENT_STREAM=0`):
//!
//! | `RETICENT_MODEL` | needs |
//! |---|---|
//! | `openai:gpt-4o-mini` | `OPENAI_API_KEY` (and `OPENAI_BASE_URL` for Ollama, vLLM, llama.cpp) |
//! | `openai-responses:o4-mini` | `OPENAI_API_KEY` (OpenAI's Responses API) |
//! | `anthropic:claude-sonnet-4-5` | `ANTHROPIC_API_KEY` |
//! | `gemini:gemini-2.5-flash` | `GEMINI_API_KEY` |
//! | `ollama:llama3.2` | a local Ollama (`OLLAMA_HOST`, default `http://localhost:11434`) |

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::Arc;

use futures::StreamExt;
use reticent::{Agent, AgentError, AgentEvent, AgentResult, Message, Model};

pub mod support_desk;

/// The value of `RETICENT_MODEL`, if set and not empty.
pub fn model_spec() -> Option<String> {
    std::env::var("RETICENT_MODEL")
        .ok()
        .filter(|s| !s.trim().is_empty())
}

/// Whether a real model's answers are streamed: yes unless `RETICENT_STREAM` is `0`, `off` or
/// `false`.
pub fn streaming() -> bool {
    !matches!(
        std::env::var("RETICENT_STREAM").as_deref().map(str::trim),
        Ok("0" | "off" | "false")
    )
}

/// The model named by `RETICENT_MODEL` (`provider:model`, with the provider's key from its
/// own variable), or `None` to run offline.
pub fn model_from_env() -> Result<Option<Arc<dyn Model>>, reticent::providers::ConfigError> {
    match model_spec() {
        None => Ok(None),
        Some(spec) => reticent::providers::from_env_spec(&spec).map(Some),
    }
}

/// Runs `agent` on `input`, printing the model's text as it streams in (and a line for each
/// tool call), as a chat interface would; the run's result when it ends.
pub async fn run_live(agent: &Agent, input: &str) -> Result<AgentResult, AgentError> {
    let mut events = agent.run_stream(input);
    let mut stdout = std::io::stdout();
    let mut line_open = false;
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::TextDelta { text, .. } => {
                if !line_open {
                    print!("  model › ");
                    line_open = true;
                }
                print!("{text}");
                let _ = stdout.flush();
            }
            AgentEvent::ToolStarted { call } => {
                if line_open {
                    println!();
                    line_open = false;
                }
                println!("  (calling {})", call.name);
            }
            AgentEvent::ModelResponded { .. } if line_open => {
                println!();
                line_open = false;
            }
            // The turn's stream broke off: what was printed of it is void, and it starts over.
            AgentEvent::TurnRestarted { reason, delay, .. } => {
                if line_open {
                    println!(" [cut off]");
                    line_open = false;
                }
                println!("  (the answer broke off: {reason}; asking again in {delay:?})");
            }
            AgentEvent::Finished(result) => {
                if line_open {
                    println!();
                }
                return result;
            }
            _ => {}
        }
    }
    unreachable!("run_stream always ends with AgentEvent::Finished")
}

/// A conversation as the model saw it, one line per text, call and result.
pub fn transcript(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages {
        match message {
            Message::User { text } => {
                let _ = writeln!(out, "  user      │ {text}");
            }
            Message::Assistant { text, tool_calls } => {
                if let Some(text) = text {
                    let _ = writeln!(out, "  assistant │ {text}");
                }
                for call in tool_calls {
                    let _ = writeln!(
                        out,
                        "  assistant │ calls {}({}) [{}]",
                        call.name, call.arguments, call.id
                    );
                }
            }
            Message::Tool(result) => {
                let mark = if result.is_error { "error" } else { "ok" };
                let _ = writeln!(
                    out,
                    "  tool      │ [{}] {mark}: {}",
                    result.call_id, result.content
                );
            }
        }
    }
    out
}

/// An error as `main` reports it: its message and its sources, one line, rather than its
/// `Debug` form. `fn main() -> Result<(), Report>` prints `Error: ` and this.
pub struct Report(Box<dyn std::error::Error>);

impl<E: Into<Box<dyn std::error::Error>>> From<E> for Report {
    fn from(error: E) -> Self {
        Self(error.into())
    }
}

impl std::fmt::Debug for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(error) = source {
            write!(f, ": {error}")?;
            source = error.source();
        }
        Ok(())
    }
}
