//! Output budgets: what the model is shown of a successful output longer than its tool's
//! budget. The caller always gets the whole output; this is only the model's view.
//!
//! The view is the output's first half-budget and its last half-budget, each cut at a UTF-8
//! character boundary, with a notice between them ([`render::output_cut`]) saying how much
//! was left out. An output that is JSON is said to be cut in the notice, and the notice starts
//! and ends with a line break, so that the view is never JSON that parses: a line break is not
//! allowed inside a JSON string, and the notice's words are not JSON outside one.
//!
//! An output within its budget is not looked at beyond its length, and not copied.

use crate::render;

/// The budget of a tool that sets none, when the agent sets none either
/// ([`AgentBuilder::max_tool_output`](crate::AgentBuilder::max_tool_output)): 64 KiB, about
/// 16,000 tokens of English text — a full page of search results or a long file, and still a
/// small part of any current model's context window, so that several such results fit in one
/// request.
pub const DEFAULT_MAX_OUTPUT: usize = 64 * 1024;

/// The model's view of `output` under a budget of `max` bytes: `None` when the output fits
/// (the model is shown it as it is), otherwise its head and tail, cut at character
/// boundaries, around a notice of how much was left out.
///
/// Head and tail together hold at most `max` bytes of the output; the notice adds about 200.
pub(crate) fn bounded_view(output: &str, max: usize) -> Option<String> {
    if output.len() <= max {
        return None;
    }
    Some(cut(output, max))
}

/// The cut itself, out of line: a call within its budget pays only for the comparison.
#[cold]
#[inline(never)]
fn cut(output: &str, max: usize) -> String {
    let head_end = output.floor_char_boundary(max / 2);
    let tail_start = output.ceil_char_boundary(output.len() - (max - max / 2));
    // A JSON value, or a string that holds JSON text: the model reads JSON either way.
    let json = serde_json::from_str::<serde::de::IgnoredAny>(output).is_ok();
    let notice = render::output_cut(output.len(), tail_start - head_end, max, json);
    let mut view = String::with_capacity(head_end + notice.len() + output.len() - tail_start);
    view.push_str(&output[..head_end]);
    view.push_str(&notice);
    view.push_str(&output[tail_start..]);
    view
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_within_its_budget_is_shown_as_it_is() {
        assert_eq!(bounded_view("hello", 5), None);
        assert_eq!(bounded_view("", 0), None);
    }

    #[test]
    fn a_longer_output_keeps_its_head_and_tail() {
        let output = format!("HEAD{}TAIL", "x".repeat(1000));
        let view = bounded_view(&output, 8).unwrap();
        assert!(view.starts_with("HEAD\n"), "{view}");
        assert!(view.ends_with("\nTAIL"), "{view}");
        assert!(view.contains("1000 of 1008 bytes"), "{view}");
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        // 'é' is two bytes, '€' three: no budget splits one.
        let output = "é€".repeat(100);
        for max in 0..40 {
            let view = bounded_view(&output, max).unwrap();
            let notice_at = view.find('\n').unwrap();
            let tail_at = view.rfind('\n').unwrap() + 1;
            assert!(notice_at + (view.len() - tail_at) <= max, "{max}: {view}");
        }
    }

    #[test]
    fn cut_json_never_parses() {
        let output =
            serde_json::json!({"rows": (0..500).collect::<Vec<_>>(), "s": "a\"b"}).to_string();
        for max in [0, 1, 2, 7, 16, 100, 1000] {
            let view = bounded_view(&output, max).unwrap();
            assert!(
                serde_json::from_str::<serde::de::IgnoredAny>(&view).is_err(),
                "{view}"
            );
            assert!(view.contains("not valid JSON"), "{view}");
        }
    }
}
