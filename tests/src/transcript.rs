//! Reading transcripts: the tool results of a run, and what a request offered the model.

use reticent::{Message, ModelRequest, ToolResult};

/// The tool results of a transcript, in order.
pub fn tool_results(messages: &[Message]) -> Vec<&ToolResult> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(result) => Some(result),
            _ => None,
        })
        .collect()
}

/// The last message of a request, which must be a tool result.
pub fn last_tool_result(request: &ModelRequest) -> &ToolResult {
    match request.messages.last() {
        Some(Message::Tool(result)) => result,
        other => panic!("the request does not end with a tool result: {other:?}"),
    }
}

/// The names of the tools a request offered.
pub fn offered(request: &ModelRequest) -> Vec<&str> {
    request.tools.iter().map(|t| t.name.as_str()).collect()
}

/// What the model was shown for each call of a transcript, in order: each tool result's call
/// id and text.
pub fn shown(messages: &[Message]) -> Vec<(&str, &str)> {
    tool_results(messages)
        .into_iter()
        .map(|r| (r.call_id.as_str(), r.content.as_str()))
        .collect()
}

/// What the model was shown for each call of a transcript, in order: each tool result's text.
pub fn shown_texts(messages: &[Message]) -> Vec<&str> {
    tool_results(messages)
        .into_iter()
        .map(|r| r.content.as_str())
        .collect()
}

/// What the model was shown for each call of a transcript, in order: each tool result's call
/// id, text, and whether it is an error result.
pub fn shown_with_errors(messages: &[Message]) -> Vec<(&str, &str, bool)> {
    tool_results(messages)
        .into_iter()
        .map(|r| (r.call_id.as_str(), r.content.as_str(), r.is_error))
        .collect()
}

/// What the model was shown for each call of a transcript, in order, with the fence around
/// untrusted output taken off (see [`unfenced`]).
pub fn shown_unfenced(messages: &[Message]) -> Vec<&str> {
    tool_results(messages)
        .into_iter()
        .map(|r| unfenced(&r.content))
        .collect()
}

/// The output inside the fence an untrusted tool's output is shown in, or `text` when it is
/// not in one. The fence itself is checked in `tests/agent/fence.rs`; this is for tests of
/// what a tool returned.
pub fn unfenced(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("<untrusted_output boundary=\"") else {
        return text;
    };
    let (boundary, rest) = rest.split_once("\">\n").expect("a fence's opening line");
    let close = format!("\n</untrusted_output boundary=\"{boundary}\">\n");
    let end = rest.rfind(&close).expect("a fence's closing line");
    &rest[..end]
}
