//! The result a client is sent for a call that succeeded (and the error for a task it asks
//! about that the server does not keep): the output as text (by the one rule
//! for an output as text) and, for a tool with an output schema, as `structuredContent`.

use rmcp::model::{CallToolResult, ContentBlock, ErrorData};
use serde_json::Value;

use super::definition::{Output, structured};
use crate::render;
use crate::tool::{bounded_view, text_of};

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

/// Cuts `result`'s text to `max` bytes, when it is longer, and then drops its
/// `structuredContent`, which would carry the whole output. The result is changed where it
/// lies: it is 200 bytes, and a call answered within its budget should not move it.
pub(super) fn within_budget(result: &mut CallToolResult, max: usize) {
    let mut cut = false;
    for block in &mut result.content {
        if let Some(text) = block.as_text()
            && let Some(view) = bounded_view(&text.text, max)
        {
            *block = ContentBlock::text(view);
            cut = true;
        }
    }
    if cut {
        result.structured_content = None;
    }
}

/// The answer to a request about a task the server does not keep.
pub(crate) fn unknown_task() -> ErrorData {
    ErrorData::invalid_params(
        "no task with this id: it never existed, or its time to live is over",
        None,
    )
}
