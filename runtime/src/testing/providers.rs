//! The bodies the built-in providers compiled in would send for a request, encoded by each
//! provider's own code, whole and streamed.

use crate::model::{ModelError, ModelRequest};

/// Each provider's body for `request`, by a name for the channel (`openai request`, `openai
/// stream request`, ...).
pub(super) fn bodies(request: &ModelRequest) -> Vec<(&'static str, Result<Vec<u8>, ModelError>)> {
    let mut bodies = Vec::new();
    #[cfg(feature = "openai")]
    {
        let openai = crate::providers::openai::OpenAi::new("sk-leak-check", "gpt-4o-mini");
        bodies.push(("openai", openai.request_body(request, false)));
        bodies.push(("openai stream", openai.request_body(request, true)));
        let responses =
            crate::providers::openai_responses::OpenAiResponses::new("sk-leak-check", "o4-mini");
        bodies.push(("openai-responses", responses.request_body(request, false)));
        bodies.push((
            "openai-responses stream",
            responses.request_body(request, true),
        ));
    }
    #[cfg(feature = "anthropic")]
    {
        let anthropic =
            crate::providers::anthropic::Anthropic::new("sk-ant-leak-check", "claude-sonnet-4-5");
        bodies.push(("anthropic", anthropic.request_body(request, false)));
        bodies.push(("anthropic stream", anthropic.request_body(request, true)));
    }
    #[cfg(feature = "gemini")]
    {
        let gemini = crate::providers::gemini::Gemini::new("leak-check", "gemini-2.5-flash");
        bodies.push(("gemini", gemini.request_body(request, false)));
        bodies.push(("gemini stream", gemini.request_body(request, true)));
    }
    bodies
}
