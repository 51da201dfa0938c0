//! Every text the model is shown about a failure is written here, and nowhere else.
//!
//! The agent loop, the MCP server and the providers all render failures through these
//! functions, so the disclosure rules hold the same on every path.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::time::Duration;

use crate::error::ToolError;

/// The longest message (in bytes) the model is shown for one failure.
pub const MAX_MESSAGE_LEN: usize = 500;

/// The longest tool name (in bytes) echoed back to the model.
pub const MAX_NAME_LEN: usize = 64;

/// `s`, cut to at most `max` bytes (cut marker included) by dropping its middle at character
/// boundaries; the marker says how many bytes were dropped.
///
/// The middle goes, not the end: a decoding error reads `invalid type: string "..", expected
/// u32`, and what was expected is at its end, past the echoed value. `max` is assumed to be
/// larger than the marker (about 30 bytes).
pub(crate) fn bounded(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let marker = |cut: usize| format!("… ({cut} bytes cut) …");
    // The marker is longest when everything is cut.
    let keep = max.saturating_sub(marker(s.len()).len());
    let head_end = s.floor_char_boundary(keep * 2 / 3);
    let tail_start = s.ceil_char_boundary(s.len() - (keep - head_end));
    Cow::Owned(format!(
        "{}{}{}",
        &s[..head_end],
        marker(tail_start - head_end),
        &s[tail_start..]
    ))
}

/// The model-visible text of a tool error; see [`ToolError::model_text`].
pub(crate) fn tool_error(tool: &str, error: &ToolError, include_error_message: bool) -> String {
    let tool = bounded(tool, MAX_NAME_LEN);
    match error {
        ToolError::Argument(error) => {
            let mut text = format!(
                "Invalid arguments for tool '{tool}': {}",
                bounded(error.message(), MAX_MESSAGE_LEN)
            );
            if let Some(hint) = error.hint() {
                let _ = write!(text, " ({})", hint.text());
            }
            text
        }
        ToolError::Failed(failure) => {
            let mut text = format!("Tool '{tool}' failed with {}", failure.kind());
            if let Some(hint) = failure.hint() {
                let _ = write!(text, " ({})", hint.text());
            }
            if include_error_message || failure.shows_message() {
                let message = display(&**failure.error());
                let _ = write!(text, ": {}", bounded(&message, MAX_MESSAGE_LEN));
            }
            text
        }
    }
}

/// `error`'s `Display`, or a note when it panics: a tool's error type is the developer's code,
/// and formatting it happens outside the tool's own call, where a panic would end the run.
pub(crate) fn display(error: &(dyn std::error::Error + 'static)) -> String {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| error.to_string()))
        .unwrap_or_else(|_| "(the error's Display implementation panicked)".to_owned())
}

/// A call stopped when its time ran out. The limit is the caller's configuration, not runtime
/// data.
pub(crate) fn timeout(tool: &str, limit: Duration) -> String {
    format!(
        "Tool '{}' timed out after {} and was stopped; whether it took effect is unknown",
        bounded(tool, MAX_NAME_LEN),
        format_duration(limit)
    )
}

/// A tool that panicked. The payload goes to the caller only.
pub(crate) fn panic(tool: &str) -> String {
    format!("Tool '{}' failed with panic", bounded(tool, MAX_NAME_LEN))
}

/// A call of a tool that does not exist, listing the ones that do.
pub(crate) fn unknown_tool(tool: &str, available: &[&str]) -> String {
    let tool = bounded(tool, MAX_NAME_LEN);
    if available.is_empty() {
        format!("Unknown tool '{tool}': no tools are available")
    } else {
        format!(
            "Unknown tool '{tool}'. Available tools: {}",
            available.join(", ")
        )
    }
}

/// A call refused because its prerequisite has not succeeded in this run.
pub(crate) fn prerequisite(tool: &str, missing: &[&str]) -> String {
    let list = missing
        .iter()
        .map(|t| format!("'{t}'"))
        .collect::<Vec<_>>()
        .join(" and ");
    format!(
        "Tool '{tool}' was refused: it requires a successful call of {list} earlier in this conversation"
    )
}

/// A call refused because untrusted output entered the conversation and a rule forbids the
/// tool after that.
pub(crate) fn forbidden_after_untrusted(tool: &str) -> String {
    format!(
        "Tool '{tool}' was refused by the rule forbid_after_untrusted(\"{tool}\"): it cannot run \
         once output from an untrusted source (web pages, email, third-party data) has entered \
         this conversation"
    )
}

/// A call that repeats an earlier failed call exactly, and failed the same way.
pub(crate) fn failed_again(tool: &str, earlier_call_id: &str) -> String {
    format!(
        "Tool '{}' failed again the same way as call '{}' with the same arguments",
        bounded(tool, MAX_NAME_LEN),
        bounded(earlier_call_id, MAX_NAME_LEN)
    )
}

/// The arguments were text that could not be read as JSON. Two of the reasons are JSON that
/// is valid but cannot be read, and are said so: nesting past the parser's limit, and a
/// number no 64-bit float holds. `serde_json` has no public error codes, so they are told
/// apart by the start of its message.
pub(crate) fn invalid_json(error: &serde_json::Error) -> String {
    let reason = error.to_string();
    if reason.starts_with("recursion limit exceeded") {
        format!(
            "the arguments are nested deeper than {} levels ({reason}); send a flatter JSON object",
            crate::__private::MAX_DEPTH
        )
    } else if reason.starts_with("number out of range") {
        format!(
            "the arguments hold a number too large to read ({reason}); send numbers a 64-bit \
             float can hold"
        )
    } else {
        format!("the arguments are not valid JSON ({reason}); send a JSON object")
    }
}

/// How many schema violations an argument error lists.
#[cfg(feature = "mcp-client")]
const MAX_VIOLATIONS: usize = 3;

/// The longest text (in bytes) of one schema violation in an argument error.
#[cfg(feature = "mcp-client")]
const MAX_VIOLATION_LEN: usize = 150;

/// The message of an argument error for arguments that do not match a tool's input schema:
/// each violation as `PATH: WHAT THE SCHEMA ASKS` (the JSON pointer of the offending value,
/// left out at the root), the first few, each cut to a bounded length. At most one more
/// violation is read, to say that there are more.
///
/// The violations echo the model's own arguments, nothing from elsewhere.
#[cfg(feature = "mcp-client")]
pub(crate) fn schema_violations(violations: impl Iterator<Item = (String, String)>) -> String {
    let mut text = String::new();
    for (i, (path, message)) in violations.take(MAX_VIOLATIONS + 1).enumerate() {
        if i == MAX_VIOLATIONS {
            text.push_str("; and more");
            break;
        }
        if i > 0 {
            text.push_str("; ");
        }
        let violation = if path.is_empty() {
            message
        } else {
            format!("{path}: {message}")
        };
        text.push_str(&bounded(&violation, MAX_VIOLATION_LEN));
    }
    text
}

/// What the model is shown in place of content it cannot read as text (an image, audio, a
/// binary resource from an MCP tool): what it is and its size, never its bytes.
#[cfg(feature = "mcp-client")]
pub(crate) fn omitted_content(
    what: &str,
    uri: Option<&str>,
    mime_type: Option<&str>,
    bytes: usize,
) -> String {
    let mut text = format!("[{what} not shown:");
    if let Some(uri) = uri {
        let _ = write!(text, " {}", bounded(uri, MAX_URI_LEN));
    }
    if let Some(mime_type) = mime_type {
        let _ = write!(text, " {}", bounded(mime_type, MAX_NAME_LEN));
    }
    let _ = write!(text, " {bytes} bytes]");
    text
}

/// The longest URI (in bytes) shown for content that is not text.
#[cfg(feature = "mcp-client")]
const MAX_URI_LEN: usize = 256;

/// What the model is shown in place of MCP content of a type this version does not know.
#[cfg(feature = "mcp-client")]
pub(crate) const UNKNOWN_CONTENT: &str = "[content of a type this client cannot show]";

/// A link to a resource an MCP tool returned, in place of the resource itself.
#[cfg(feature = "mcp-client")]
pub(crate) fn resource_link(name: &str, uri: &str) -> String {
    format!(
        "[resource link: {} {}]",
        bounded(name, MAX_NAME_LEN),
        bounded(uri, MAX_URI_LEN)
    )
}

/// The note for the last turn after too many failures in a row.
pub(crate) fn tools_disabled(failures: u32) -> String {
    format!(
        "Tools are now disabled for this conversation after {failures} tool calls in a row failed. \
         Do not call tools. Tell the user plainly which step failed and that it could not be completed."
    )
}

/// The note for the last turn when the turn limit is reached.
pub(crate) fn turn_limit() -> String {
    "This conversation has reached its limit of turns and tools are now disabled. \
     Do not call tools. Tell the user what was done and what is still unfinished."
        .to_owned()
}

/// A duration as a person writes it: `150ms`, `30s`, `2m`, `1h30m`, `1.5s`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return format!("{}µs", d.as_micros());
    }
    if ms < 1000 {
        return format!("{ms}ms");
    }
    if !ms.is_multiple_of(1000) {
        let secs = d.as_secs_f64();
        return format!("{secs}s");
    }
    let secs = d.as_secs();
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        let _ = write!(out, "{h}h");
    }
    if m > 0 {
        let _ = write!(out, "{m}m");
    }
    if s > 0 || out.is_empty() {
        let _ = write!(out, "{s}s");
    }
    out
}

/// The short name of a type, as the model is shown it.
///
/// The module path and generic arguments are dropped (`app::pay::GatewayError<T>` →
/// `GatewayError`); a type literally named `Error` keeps its nearest parent module that is
/// not itself called `error` (`std::io::error::Error` → `io::Error`,
/// `reqwest::error::Error` → `reqwest::Error`). `Box<E>` and `Arc<E>` are named after `E`,
/// and a trait object after its trait (`Error`).
pub(crate) fn short_type_name(full: &'static str) -> Cow<'static, str> {
    // The model is told about the error, not the pointer it is kept in.
    let mut full = full;
    while let Some(inner) = ["alloc::boxed::Box<", "alloc::sync::Arc<"]
        .iter()
        .find_map(|pointer| full.strip_prefix(pointer)?.strip_suffix('>'))
    {
        full = inner;
    }
    if full.starts_with("dyn ") {
        return Cow::Borrowed("Error");
    }
    let path = full.split('<').next().unwrap_or(full);
    let mut segments = path.rsplit("::");
    let name = segments.next().unwrap_or(path);
    if name != "Error" {
        return Cow::Borrowed(name);
    }
    match segments.find(|s| !matches!(*s, "error" | "errors" | "err")) {
        Some(parent) => Cow::Owned(format!("{parent}::Error")),
        None => Cow::Borrowed(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names() {
        assert_eq!(short_type_name("app::pay::GatewayError"), "GatewayError");
        assert_eq!(
            short_type_name("app::pay::Wrapper<alloc::string::String>"),
            "Wrapper"
        );
        assert_eq!(short_type_name("std::io::error::Error"), "io::Error");
        assert_eq!(short_type_name("reqwest::error::Error"), "reqwest::Error");
        assert_eq!(short_type_name("core::fmt::Error"), "fmt::Error");
        assert_eq!(short_type_name("Error"), "Error");
        assert_eq!(short_type_name("Plain"), "Plain");
        assert_eq!(
            short_type_name("alloc::boxed::Box<app::pay::GatewayError>"),
            "GatewayError"
        );
        assert_eq!(
            short_type_name("alloc::sync::Arc<alloc::boxed::Box<std::io::error::Error>>"),
            "io::Error"
        );
        assert_eq!(
            short_type_name("alloc::sync::Arc<dyn core::error::Error + core::marker::Send>"),
            "Error"
        );
    }

    #[test]
    fn bounded_cuts_the_middle_on_char_boundaries() {
        assert_eq!(bounded("short", 10), "short");
        let long = format!("{}, expected u32", "é".repeat(100));
        let cut = bounded(&long, 80);
        assert!(cut.len() <= 80, "{cut}");
        assert!(cut.starts_with("éé"), "{cut}");
        assert!(cut.ends_with("é, expected u32"), "{cut}");
        let (head, rest) = cut.split_once("… (").unwrap();
        let (dropped, tail) = rest.split_once(" bytes cut) …").unwrap();
        assert_eq!(
            head.len() + dropped.parse::<usize>().unwrap() + tail.len(),
            long.len()
        );
        assert!(head.len() > tail.len(), "{cut}");
    }

    #[test]
    fn durations() {
        assert_eq!(format_duration(Duration::from_millis(150)), "150ms");
        assert_eq!(format_duration(Duration::from_secs(30)), "30s");
        assert_eq!(format_duration(Duration::from_secs(120)), "2m");
        assert_eq!(format_duration(Duration::from_secs(5400)), "1h30m");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_micros(20)), "20µs");
    }
}
