//! What the model and the caller must be shown for each failure, and the checks of it.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use proptest::test_runner::TestCaseError;
use reticent::ToolError;

use super::fault::{Fault, HOLDS_RESULT};
use super::registry::Registered;

const MAX_MESSAGE_LEN: usize = ToolError::MAX_MESSAGE_LEN;

impl Registered {
    /// The error's own message, as the model may be shown it.
    fn display(&self) -> Option<String> {
        self.fault.display(&self.message, &self.canary)
    }

    /// The model may be shown the canary: the message of an argument error, which the
    /// developer wrote for the model, or an error's own message when the run opted in.
    pub fn may_show(&self, include_error_message: bool) -> bool {
        if !self.fault.holds_canary() {
            return false;
        }
        let shown_as_argument = self.fault.is_argument();
        let shown_by_opt_in = include_error_message && !self.fault.is_argument();
        (shown_as_argument || shown_by_opt_in)
            && self.display().is_some_and(|d| d.contains(&self.canary))
    }

    /// What the caller's record of the error must hold, in its message or its sources: the
    /// whole message (and so the canary), or, for a stopped call, which returned no error, the
    /// limit it was given.
    pub fn caller_text(&self, limit: Duration) -> String {
        match self.fault {
            Fault::Timeout => format!(
                "the tool `fail_slow` did not finish within {}",
                duration_text(limit)
            ),
            Fault::Panic { .. } => format!("the tool `{}` panicked: {}", self.tool(), self.message),
            // the output was the tool's success; refused, it is not kept
            Fault::ResultInOutput(_) => HOLDS_RESULT.to_owned(),
            _ => self.message.clone(),
        }
    }

    /// Checks the text the model was shown for this failure (not collapsed as a repeat).
    pub fn check_shown(
        &self,
        shown: &str,
        include_error_message: bool,
        limit: Duration,
    ) -> Result<(), String> {
        let tool = self.tool();
        if shown.len() >= 1024 + tool.len() {
            return Err(format!(
                "the model's text is {} bytes, over 1 KiB + the tool name: {shown}",
                shown.len()
            ));
        }
        let hint = self
            .fault
            .hint()
            .map(|h| format!(" ({})", h.text()))
            .unwrap_or_default();
        let fixed = |expected: String| {
            if shown == expected {
                Ok(())
            } else {
                Err(format!(
                    "expected `{expected}`, the model was shown `{shown}`"
                ))
            }
        };
        match self.fault {
            Fault::Panic { .. } => fixed(format!("Tool '{tool}' failed with panic")),
            Fault::Timeout => fixed(format!(
                "Tool '{tool}' timed out after {} and was stopped; whether it took effect is unknown",
                duration_text(limit)
            )),
            fault if fault.is_argument() => {
                let display = self.display().expect("argument errors show");
                let head = format!("Invalid arguments for tool '{tool}': ");
                let message = shown
                    .strip_prefix(&head)
                    .and_then(|rest| rest.strip_suffix(&hint))
                    .ok_or_else(|| format!("not an argument error's text: `{shown}`"))?;
                check_cut(message, &display)
            }
            fault => {
                let line = format!("Tool '{tool}' failed with {}{hint}", fault.kind());
                if !include_error_message {
                    return fixed(line);
                }
                let Some(display) = self.display() else {
                    // a failure that never shows a message, even with the opt-in
                    return fixed(line);
                };
                let message = shown
                    .strip_prefix(&line)
                    .and_then(|rest| rest.strip_prefix(": "))
                    .ok_or_else(|| format!("expected `{line}: ..`, got `{shown}`"))?;
                check_cut(message, &display)
            }
        }
    }
}

/// `shown` is `full`, or, when `full` is longer than `MAX_MESSAGE_LEN`, `full` with its middle
/// replaced by the marker `… (N bytes cut) …`, at most `MAX_MESSAGE_LEN` bytes in all.
pub fn check_cut(shown: &str, full: &str) -> Result<(), String> {
    if full.len() <= MAX_MESSAGE_LEN {
        return if shown == full {
            Ok(())
        } else {
            Err(format!(
                "expected the message `{full}` whole, got `{shown}`"
            ))
        };
    }
    if shown.len() > MAX_MESSAGE_LEN {
        return Err(format!(
            "a {} byte message was shown as {} bytes, over {MAX_MESSAGE_LEN}: `{shown}`",
            full.len(),
            shown.len()
        ));
    }
    let common = shown
        .bytes()
        .zip(full.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let is_cut = (0..=common).rev().any(|head| {
        let Some(rest) = shown.get(head..).and_then(|r| r.strip_prefix("… (")) else {
            return false;
        };
        let Some((dropped, tail)) = rest.split_once(" bytes cut) …") else {
            return false;
        };
        dropped.parse::<usize>().is_ok_and(|dropped| {
            dropped > 0 && head + dropped + tail.len() == full.len() && full.ends_with(tail)
        })
    });
    if is_cut {
        Ok(())
    } else {
        Err(format!(
            "`{shown}` is not the {} byte message cut in its middle: `{full}`",
            full.len()
        ))
    }
}

/// `error`'s message and all its sources', for "holds" checks.
pub fn full_chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(error) = source {
        text.push_str(" | ");
        text.push_str(&error.to_string());
        source = error.source();
    }
    text
}

/// Checks that `surface`, something the model received, holds no canary it may not see.
pub fn check_surface(
    what: &str,
    surface: &str,
    failures: &[Arc<Registered>],
    include_error_message: bool,
) -> Result<(), TestCaseError> {
    for failure in failures {
        if failure.may_show(include_error_message) {
            continue;
        }
        if let Some(at) = surface.find(&failure.canary) {
            let from = surface.floor_char_boundary(at.saturating_sub(200));
            let to = surface.ceil_char_boundary((at + 200).min(surface.len()));
            return Err(TestCaseError::fail(format!(
                "{what} holds the canary of a {:?} failure of `{}` (include_error_message: \
                 {include_error_message}): ..{}..",
                failure.fault,
                failure.tool(),
                &surface[from..to]
            )));
        }
    }
    Ok(())
}

/// A duration as the runtime writes it in a timeout's text (written here, not taken from the
/// runtime, so that the test checks the format): `150ms`, `1.5s`, `30s`, `2m`, `1h30m`.
pub fn duration_text(limit: Duration) -> String {
    let ms = limit.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    if !ms.is_multiple_of(1000) {
        return format!("{}s", limit.as_secs_f64());
    }
    let secs = limit.as_secs();
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut text = String::new();
    if h > 0 {
        text += &format!("{h}h");
    }
    if m > 0 {
        text += &format!("{m}m");
    }
    if s > 0 || text.is_empty() {
        text += &format!("{s}s");
    }
    text
}
