//! Shared pieces of the reticent examples: the support desk's tools ([`support_desk`]) and
//! choosing a real model from the environment.
//!
//! The examples run offline on a scripted model. Set `RETICENT_MODEL` to run them against a
//! real one:
//!
//! | `RETICENT_MODEL` | needs |
//! |---|---|
//! | `openai:gpt-4o-mini` | `OPENAI_API_KEY` (and `OPENAI_BASE_URL` for Ollama, vLLM, llama.cpp) |
//! | `anthropic:claude-sonnet-4-5` | `ANTHROPIC_API_KEY` |

use std::sync::Arc;

use reticent::Model;

pub mod support_desk;

/// The value of `RETICENT_MODEL`, if set and not empty.
pub fn model_spec() -> Option<String> {
    std::env::var("RETICENT_MODEL")
        .ok()
        .filter(|s| !s.trim().is_empty())
}

/// The model named by `RETICENT_MODEL`, or `None` to run offline.
pub fn model_from_env() -> Result<Option<Arc<dyn Model>>, Box<dyn std::error::Error>> {
    match model_spec() {
        None => Ok(None),
        Some(spec) => Err(format!("RETICENT_MODEL={spec}: no provider is available for it").into()),
    }
}
