//! [`Checked`]: a tool as a [`ToolSet`](super::ToolSet) holds it when its arguments need work
//! before it decodes them — the `null`s the model's schema dialect added removed
//! ([`Normaliser`]). A tool that needs none is held as it is, and its calls cost what they
//! cost before.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{Tool, ToolContext, ToolDefinition, ToolFuture};
use crate::model::Normaliser;

/// A tool whose arguments are normalised before it runs.
pub(crate) struct Checked {
    tool: Arc<dyn Tool>,
    normaliser: Normaliser,
}

impl Checked {
    /// `tool` with the work its arguments need, or `tool` itself when they need none.
    pub(crate) fn wrap(tool: Arc<dyn Tool>, normaliser: Option<Normaliser>) -> Arc<dyn Tool> {
        match normaliser {
            Some(normaliser) => Arc::new(Self { tool, normaliser }),
            None => tool,
        }
    }
}

impl Tool for Checked {
    fn definition(&self) -> &ToolDefinition {
        self.tool.definition()
    }

    fn call(&self, mut args: Value, cx: ToolContext) -> ToolFuture<'_> {
        self.normaliser.apply(&mut args);
        self.tool.call(args, cx)
    }

    /// Text is read into a `Value` only when there is work to do on it: when the text holds a
    /// `null` anywhere (it may be in a string: then the work finds nothing). Otherwise the tool
    /// decodes straight from the text. Text that is not JSON goes to the tool, whose error says
    /// so.
    fn call_text(&self, text: &str, cx: ToolContext) -> ToolFuture<'_> {
        if text.contains("null")
            && let Ok(args) = serde_json::from_str(text)
        {
            return self.call(args, cx);
        }
        self.tool.call_text(text, cx)
    }

    fn timeout(&self) -> Option<Duration> {
        self.tool.timeout()
    }

    fn is_blocking(&self) -> bool {
        self.tool.is_blocking()
    }

    fn untrusted_output(&self) -> bool {
        self.tool.untrusted_output()
    }
}
