//! The result a client is sent for a call that succeeded: the output as text (by the one rule
//! for an output as text) and, for a tool with an output schema, as `structuredContent`.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use super::definition::{Output, structured};
use crate::render;
use crate::tool::text_of;

/// The result of a call of `tool`, which has an output schema, that succeeded: the output as
/// text and as `structuredContent` of the shape `shape`.
pub(super) fn success(
    tool: &str,
    shape: Output,
    output: Value,
    span: &tracing::Span,
) -> CallToolResult {
    let text = text_of(&output).into_owned();
    match structured(shape, output) {
        Ok(structured) => success_text(text, Some(structured)),
        Err(_) => {
            tracing::warn!(
                parent: span,
                tool = %render::name(tool),
                "the tool's output is not an object, as its output schema says: \
                 the result has no structuredContent"
            );
            success_text(text, None)
        }
    }
}

/// The result of a call that succeeded, with `text` as its content.
#[inline(always)]
pub(super) fn success_text(text: String, structured: Option<Value>) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = structured;
    result
}
