//! [`Checked`]: a tool as a [`ToolSet`](super::ToolSet) holds it when its arguments need work
//! before it decodes them — the `null`s the model's schema dialect added removed
//! ([`Normaliser`]), then the constraints of its schema checked ([`ArgumentValidator`]). A tool
//! that needs neither is held as it is, and its calls cost what they cost before.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::validate::ArgumentValidator;
use super::{Tool, ToolContext, ToolDefinition, ToolFuture};
use crate::model::Normaliser;

/// A tool whose arguments are normalised and checked before it runs.
pub(crate) struct Checked {
    tool: Arc<dyn Tool>,
    normaliser: Option<Normaliser>,
    validator: Option<Arc<ArgumentValidator>>,
}

impl Checked {
    /// `tool` with the work its arguments need, or `tool` itself when they need none.
    pub(crate) fn wrap(
        tool: Arc<dyn Tool>,
        normaliser: Option<Normaliser>,
        validator: Option<Arc<ArgumentValidator>>,
    ) -> Arc<dyn Tool> {
        if normaliser.is_none() && validator.is_none() {
            return tool;
        }
        Arc::new(Self {
            tool,
            normaliser,
            validator,
        })
    }
}

impl Tool for Checked {
    fn definition(&self) -> &ToolDefinition {
        self.tool.definition()
    }

    fn call(&self, mut args: Value, cx: ToolContext) -> ToolFuture<'_> {
        if let Some(normaliser) = &self.normaliser {
            normaliser.apply(&mut args);
        }
        if let Some(validator) = &self.validator
            && let Err(error) = validator.check(&args)
        {
            return ToolFuture::ready(Err(error.into()));
        }
        self.tool.call(args, cx)
    }

    /// Text is read into a `Value` only when there is work to do on it: always for a validator,
    /// and for a normaliser only when the text holds a `null` anywhere (it may be in a string:
    /// then the work finds nothing). Otherwise the tool decodes straight from the text. Text that
    /// is not JSON goes to the tool, whose error says so.
    fn call_text(&self, text: &str, cx: ToolContext) -> ToolFuture<'_> {
        let work = self.validator.is_some() || (self.normaliser.is_some() && text.contains("null"));
        if work && let Ok(args) = serde_json::from_str(text) {
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
