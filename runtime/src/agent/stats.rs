//! Per-tool counts of a run: [`ToolStats`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::render;

/// Calls, failures and timeouts of one tool in a run: its error rate, for free.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolStats {
    /// Calls the model made.
    pub calls: u32,
    /// Calls that failed, for any reason (timeouts included).
    pub failures: u32,
    /// Calls stopped when their time ran out.
    pub timeouts: u32,
}

/// The counts of every tool called in a run, by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Stats(pub(crate) BTreeMap<String, ToolStats>);

impl Stats {
    /// Counts a call of `tool`; `failed` and `timed_out` say how it ended. The counts
    /// saturate at `u32::MAX`: a run resumed from a stored state may start from any count.
    pub(crate) fn count(&mut self, tool: &str, failed: bool, timed_out: bool) {
        let stats = match self.0.get_mut(tool) {
            Some(stats) => stats,
            None => self.0.entry(tool.to_owned()).or_default(),
        };
        stats.calls = stats.calls.saturating_add(1);
        stats.failures = stats.failures.saturating_add(u32::from(failed));
        stats.timeouts = stats.timeouts.saturating_add(u32::from(timed_out));
    }
}

/// `name: calls/failures/timeouts` for each tool, for the `invoke_agent` span. A name is cut
/// to the length of a valid tool name: a call of an unknown tool counts under whatever name the
/// model sent.
pub(crate) fn text(stats: &BTreeMap<String, ToolStats>) -> String {
    stats
        .iter()
        .map(|(tool, s)| {
            format!(
                "{}: {} calls, {} failed, {} timed out",
                render::name(tool),
                s.calls,
                s.failures,
                s.timeouts
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::{Stats, ToolStats};

    #[test]
    fn counts_saturate_at_their_bound() {
        let full = ToolStats {
            calls: u32::MAX,
            failures: u32::MAX,
            timeouts: u32::MAX,
        };
        let mut stats = Stats([("pay".to_owned(), full)].into());
        stats.count("pay", true, true);
        stats.count("pay", false, false);
        assert_eq!(stats.0["pay"], full);
    }
}
