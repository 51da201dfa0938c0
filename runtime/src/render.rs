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

/// `s`, cut at a character boundary to at most `max` bytes, with `…` marking a cut.
pub(crate) fn bounded(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}… ({} bytes cut)", &s[..end], s.len() - end))
}

/// The model-visible text of a tool error; see [`ToolError::model_text`].
pub(crate) fn tool_error(tool: &str, error: &ToolError, include_error_message: bool) -> String {
    let tool = bounded(tool, MAX_NAME_LEN);
    match error {
        ToolError::Argument(error) => format!(
            "Invalid arguments for tool '{tool}': {}",
            bounded(error.message(), MAX_MESSAGE_LEN)
        ),
        ToolError::Failed(failure) => {
            let mut text = format!("Tool '{tool}' failed with {}", failure.kind());
            if include_error_message {
                let message = failure.error().to_string();
                let _ = write!(text, ": {}", bounded(&message, MAX_MESSAGE_LEN));
            }
            text
        }
    }
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
/// `reqwest::error::Error` → `reqwest::Error`).
pub(crate) fn short_type_name(full: &'static str) -> Cow<'static, str> {
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
    }

    #[test]
    fn bounded_cuts_on_char_boundary() {
        assert_eq!(bounded("short", 10), "short");
        let long = "é".repeat(10);
        let cut = bounded(&long, 5);
        assert!(cut.starts_with("éé…"), "{cut}");
        assert!(cut.ends_with("(16 bytes cut)"), "{cut}");
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
