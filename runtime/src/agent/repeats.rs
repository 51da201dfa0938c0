//! Recognising an exact repeat of a failed call: the same tool with the same arguments (in
//! any key order), failing the same way, is told so in one short line.

use serde::{Deserialize, Serialize};

use crate::model::{Arguments, ToolCall};
use crate::render;

/// A failed call, remembered to recognize an exact repeat of it. A run state keeps it: it holds
/// only what the model was shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct FailedCall {
    tool: String,
    /// Compared as JSON values: the same arguments in another key order are the same call.
    arguments: Arguments,
    /// The full model-visible text of its failure.
    text: String,
    call_id: String,
}

/// The latest failure of each distinct (tool, arguments) of a run.
#[derive(Default)]
pub(crate) struct Repeats {
    failed: Vec<FailedCall>,
}

impl Repeats {
    /// The failed calls remembered, for a run state.
    pub(crate) fn records(&self) -> Vec<FailedCall> {
        self.failed.clone()
    }

    /// Remembers the failed calls of a run state.
    pub(crate) fn from_records(failed: Vec<FailedCall>) -> Self {
        Self { failed }
    }

    /// What the model is shown for `call`, which failed with the full text `text`: a short
    /// line when it repeats an earlier failed call exactly and `collapse` is on, else `text`.
    /// Remembers the call either way.
    pub(crate) fn shown(&mut self, call: &ToolCall, text: String, collapse: bool) -> String {
        let earlier = self
            .failed
            .iter_mut()
            .find(|f| f.tool == call.name && f.arguments == call.arguments);
        match earlier {
            Some(earlier) if collapse && earlier.text == text => {
                render::failed_again(&call.name, &earlier.call_id)
            }
            Some(earlier) => {
                earlier.text.clone_from(&text);
                earlier.call_id.clone_from(&call.id);
                text
            }
            None => {
                self.failed.push(FailedCall {
                    tool: call.name.clone(),
                    arguments: call.arguments.clone(),
                    text: text.clone(),
                    call_id: call.id.clone(),
                });
                text
            }
        }
    }
}
