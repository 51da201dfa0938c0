//! [`Checked`]: a tool as a [`ToolSet`](super::ToolSet) holds it when its arguments need work
//! before it decodes them — the `null`s the model's schema dialect added removed
//! ([`Normaliser`]), then the constraints of its schema checked ([`ArgumentValidator`]). A tool
//! that needs neither is held as it is, and its calls cost what they cost before. Both are one
//! check, whose matches against patterns share one budget; a costly one is made on the blocking
//! pool, in the call's future, so that the call's time limit covers it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::blocking::on_pool;
use super::pattern::within_check;
use super::validate::ArgumentValidator;
use super::{Tool, ToolContext, ToolDefinition, ToolFuture};
use crate::error::ArgumentError;
use crate::model::Normaliser;

/// A tool whose arguments are normalised and checked before it runs.
pub(crate) struct Checked {
    tool: Arc<dyn Tool>,
    normaliser: Option<Arc<Normaliser>>,
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
            normaliser: normaliser.map(Arc::new),
            validator,
        })
    }
}

/// `args` normalised and checked, as one check.
fn prepare(
    normaliser: Option<&Normaliser>,
    validator: Option<&ArgumentValidator>,
    args: &mut Value,
) -> Result<(), ArgumentError> {
    let normalise = |args: &mut Value| {
        if let Some(normaliser) = normaliser {
            normaliser.apply(args);
        }
    };
    match validator {
        Some(validator) => within_check(|| {
            normalise(args);
            validator.check(args)
        }),
        None => {
            normalise(args);
            Ok(())
        }
    }
}

/// Every provided method but the calls is the tool's own: what the runtime asks of a tool (its
/// limit, how it runs, whether its output is trusted, whether a person must approve it,
/// whether it reads its context) must
/// not change because its arguments are checked. `call_text_output` keeps the trait's default,
/// which goes through [`call`](Tool::call) and so through the check.
impl Tool for Checked {
    fn definition(&self) -> &ToolDefinition {
        self.tool.definition()
    }

    fn call(&self, mut args: Value, cx: ToolContext) -> ToolFuture<'_> {
        if let Some(validator) = &self.validator
            && validator.is_costly(&args)
            && tokio::runtime::Handle::try_current().is_ok()
        {
            let (normaliser, validator) = (self.normaliser.clone(), Arc::clone(validator));
            return ToolFuture::new(async move {
                let (args, checked) = on_pool(move || {
                    let checked = prepare(normaliser.as_deref(), Some(&validator), &mut args);
                    (args, checked)
                })
                .await;
                checked?;
                self.tool.call(args, cx).await
            });
        }
        if let Err(error) = prepare(
            self.normaliser.as_deref(),
            self.validator.as_deref(),
            &mut args,
        ) {
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
    use crate::{
        Tool, ToolContext, ToolDefinition,
        tool::{ArgumentValidator, ToolFuture},
    };

    /// A tool that says the opposite of every default.
    struct Flagged(ToolDefinition);

    impl Tool for Flagged {
        fn definition(&self) -> &ToolDefinition {
            &self.0
        }

        fn call(&self, _: Value, _: ToolContext) -> ToolFuture<'_> {
            ToolFuture::ready(Ok(Value::Null))
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

    /// A tool held behind the check of its arguments says of itself what it says alone: a
    /// tool that needs approval must not lose that because its schema has a constraint.
    #[test]
    fn a_checked_tool_says_what_the_tool_says() {
        let schema = json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 1}},
        });
        let validator = ArgumentValidator::new(&schema)
            .expect("compiles")
            .map(Arc::new);
        assert!(validator.is_some(), "the schema has a constraint");
        let tool: Arc<dyn Tool> = Arc::new(Flagged(ToolDefinition::new("t", "A tool.", schema)));
        let checked = Checked::wrap(Arc::clone(&tool), None, validator);
        assert!(!Arc::ptr_eq(&tool, &checked), "the tool is wrapped");
        assert_eq!(checked.timeout(), tool.timeout());
        assert_eq!(checked.is_blocking(), tool.is_blocking());
        assert_eq!(checked.untrusted_output(), tool.untrusted_output());
        assert_eq!(checked.needs_approval(), tool.needs_approval());
        assert_eq!(checked.reads_context(), tool.reads_context());
    }

    /// A small check is made as the tool is called, with nothing to wait for; a costly one goes
    /// to the blocking pool, and the call's future waits for it, under the call's time limit.
    #[tokio::test]
    async fn a_small_check_is_made_in_place_and_a_costly_one_on_the_pool() {
        let schema = json!({
            "type": "object",
            "properties": {"names": {"type": "array", "items": {"pattern": "^((?!\\d)\\w+\\s?)+$"}}},
        });
        let validator = ArgumentValidator::new(&schema).unwrap().map(Arc::new);
        let tool: Arc<dyn Tool> = Arc::new(Flagged(ToolDefinition::new("t", "A tool.", schema)));
        let checked = Checked::wrap(tool, None, validator);
        let small = checked.call(json!({"names": ["ada"]}), ToolContext::default());
        assert!(small.is_ready());
        assert_eq!(small.await.unwrap(), Value::Null);
        let refused = checked.call(json!({"names": ["4ever"]}), ToolContext::default());
        assert!(refused.is_ready());
        assert!(refused.await.is_err());
        let names: Vec<String> = (0..20).map(|i| "ab ".repeat(i + 1)).collect();
        let costly = checked.call(json!({"names": names}), ToolContext::default());
        assert!(!costly.is_ready());
        assert_eq!(costly.await.unwrap(), Value::Null);
    }
}
