//! [`Checked`]: a tool as an agent's [`ToolSet`](super::ToolSet) holds it when the schema the
//! model was offered lets it send a `null` the tool's own schema does not allow: the `null`s
//! the model's schema dialect added are removed ([`Normaliser`]) before the tool is called. A
//! tool that needs none of that is held as it is. The constraints of the tool's own schema are
//! the tool's to check: a `#[tool]` checks them in its `call` (see `body.rs`), whoever calls it.

use std::time::Duration;

use std::sync::Arc;

use serde_json::Value;

use super::pattern::within_check;
use super::{Tool, ToolContext, ToolDefinition, ToolFuture};
use crate::model::Normaliser;

/// A tool whose arguments are normalised before it runs.
pub(crate) struct Checked {
    tool: Arc<dyn Tool>,
    normaliser: Normaliser,
}

impl Checked {
    /// `tool` with its arguments normalised, or `tool` itself when there is nothing to remove.
    pub(crate) fn wrap(tool: Arc<dyn Tool>, normaliser: Option<Normaliser>) -> Arc<dyn Tool> {
        match normaliser {
            Some(normaliser) => Arc::new(Self { tool, normaliser }),
            None => tool,
        }
    }
}

/// Every provided method but the calls is the tool's own: what the runtime asks of a tool (its
/// limit, how it runs, whether its output is trusted, whether a person must approve it,
/// whether it reads its context) must not change because its arguments are normalised.
/// `call_text_output` keeps the trait's default, which goes through [`call`](Tool::call).
impl Tool for Checked {
    fn definition(&self) -> &ToolDefinition {
        self.tool.definition()
    }

    /// The normaliser's matches against patterns are one check, within its bounds.
    fn call(&self, mut args: Value, cx: ToolContext) -> ToolFuture<'_> {
        within_check(|| self.normaliser.apply(&mut args));
        self.tool.call(args, cx)
    }

    /// Text is read into a `Value` only when there is work to do on it: when it holds a `null`
    /// anywhere (it may be in a string: then the work finds nothing). Otherwise the tool
    /// decodes straight from the text. Text that is not JSON goes to the tool, whose error
    /// says so.
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

    fn needs_approval(&self) -> bool {
        self.tool.needs_approval()
    }

    fn reads_context(&self) -> bool {
        self.tool.reads_context()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::{Value, json};

    use super::Checked;
    use crate::model::SchemaDialect;
    use crate::{Tool, ToolContext, ToolDefinition, tool::ToolFuture};

    /// A tool that says the opposite of every default, and answers with its arguments.
    struct Flagged(ToolDefinition);

    impl Tool for Flagged {
        fn definition(&self) -> &ToolDefinition {
            &self.0
        }

        fn call(&self, args: Value, _: ToolContext) -> ToolFuture<'_> {
            ToolFuture::ready(Ok(args))
        }

        fn timeout(&self) -> Option<Duration> {
            Some(Duration::from_secs(3))
        }

        fn is_blocking(&self) -> bool {
            true
        }

        fn untrusted_output(&self) -> bool {
            true
        }

        fn needs_approval(&self) -> bool {
            true
        }

        fn reads_context(&self) -> bool {
            false
        }
    }

    /// A tool held behind the normaliser of its arguments says of itself what it says alone: a
    /// tool that needs approval must not lose that because its schema was converted. The
    /// `null` the converted schema let the model send is removed before the tool sees it.
    #[tokio::test]
    async fn a_normalised_tool_says_what_the_tool_says() {
        let schema = json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}, "note": {"type": "string"}},
            "required": ["n"],
        });
        let prepared = SchemaDialect::OpenAiStrict.prepare(&schema).unwrap();
        assert!(
            prepared.normaliser.is_some(),
            "the optional `note` is made nullable"
        );
        let tool: Arc<dyn Tool> = Arc::new(Flagged(ToolDefinition::new("t", "A tool.", schema)));
        let checked = Checked::wrap(Arc::clone(&tool), prepared.normaliser);
        assert!(!Arc::ptr_eq(&tool, &checked), "the tool is wrapped");
        assert_eq!(checked.timeout(), tool.timeout());
        assert_eq!(checked.is_blocking(), tool.is_blocking());
        assert_eq!(checked.untrusted_output(), tool.untrusted_output());
        assert_eq!(checked.needs_approval(), tool.needs_approval());
        assert_eq!(checked.reads_context(), tool.reads_context());
        let args = checked
            .call_text(r#"{"n": 1, "note": null}"#, ToolContext::default())
            .await
            .unwrap();
        assert_eq!(args, json!({"n": 1}));
        assert!(Arc::ptr_eq(&tool, &Checked::wrap(Arc::clone(&tool), None)));
    }
}
