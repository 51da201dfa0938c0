//! The calls of one model response under distinct ids, before anything sees them.
//!
//! A call's id is how everything after the response finds it: its result in the transcript,
//! the approval gate, a person's decision, the state's record of how far it got. A provider
//! that gives two calls of one response the same id — a compatible server that numbers the
//! calls of each response from zero, or one that lies — would let a decision for one call
//! decide the other. So a repeated id is renamed: the first call keeps the id the model gave
//! it, each later one becomes `ID_2`, `ID_3`, … (the first of those no other call of the
//! response has). The run goes on, and everything from the response on — the transcript, the
//! trajectory, the events, the pending calls, the ledger — uses the new ids, so the model is
//! shown each result under the id of its call in its own message.

use std::collections::{HashMap, HashSet};

use crate::model::ToolCall;
use crate::render;

/// Renames each call of `calls` whose id an earlier call of them has (see the module's
/// header); says so on `span`, the turn's `chat` span.
pub(super) fn make_distinct(calls: &mut [ToolCall], span: &tracing::Span) {
    if calls.len() < 2 {
        return;
    }
    let repeated: Vec<usize> = {
        let mut seen = HashSet::with_capacity(calls.len());
        (0..calls.len())
            .filter(|&i| !seen.insert(calls[i].id.as_str()))
            .collect()
    };
    let Some(&first) = repeated.first() else {
        return;
    };
    let mut taken: HashSet<String> = calls.iter().map(|call| call.id.clone()).collect();
    // The next suffix to try for each repeated id, so that many repeats of one id stay linear.
    let mut next: HashMap<String, u64> = HashMap::new();
    for &i in &repeated {
        let id = std::mem::take(&mut calls[i].id);
        let n = next.entry(id.clone()).or_insert(2);
        let renamed = loop {
            let candidate = format!("{id}_{n}");
            *n += 1;
            if taken.insert(candidate.clone()) {
                break candidate;
            }
        };
        calls[i].id = renamed;
    }
    tracing::warn!(
        parent: span,
        repeated = repeated.len(),
        first.id = %render::bounded(&calls[first].id, render::MAX_NAME_LEN),
        "the model gave calls of one response an id an earlier call of it has; they are renamed"
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::make_distinct;
    use crate::model::ToolCall;

    fn ids(ids: &[&str]) -> Vec<String> {
        let mut calls: Vec<ToolCall> = ids
            .iter()
            .map(|id| ToolCall::new(*id, "t", json!({})))
            .collect();
        make_distinct(&mut calls, &tracing::Span::none());
        calls.into_iter().map(|call| call.id).collect()
    }

    #[test]
    fn distinct_ids_are_left_alone() {
        assert_eq!(ids(&["c1", "c2", "c3"]), ["c1", "c2", "c3"]);
        assert_eq!(ids(&["c1"]), ["c1"]);
        assert!(ids(&[]).is_empty());
    }

    #[test]
    fn a_repeated_id_is_renamed_after_its_first_call() {
        assert_eq!(ids(&["c1", "c1"]), ["c1", "c1_2"]);
        assert_eq!(ids(&["c1", "c2", "c1", "c1"]), ["c1", "c2", "c1_2", "c1_3"]);
        assert_eq!(ids(&["", ""]), ["", "_2"]);
    }

    #[test]
    fn a_new_id_is_one_no_call_of_the_response_has() {
        assert_eq!(ids(&["c1", "c1", "c1_2"]), ["c1", "c1_3", "c1_2"]);
        assert_eq!(
            ids(&["c1_2", "c1", "c1", "c1_3", "c1"]),
            ["c1_2", "c1", "c1_4", "c1_3", "c1_5"]
        );
    }

    #[test]
    fn many_repeats_of_one_id_each_get_an_id_of_their_own() {
        let many = vec!["call_0"; 20_000];
        let renamed = ids(&many);
        assert_eq!(renamed[0], "call_0");
        assert_eq!(renamed[19_999], "call_0_20000");
        let distinct: std::collections::HashSet<&String> = renamed.iter().collect();
        assert_eq!(distinct.len(), 20_000);
    }
}
