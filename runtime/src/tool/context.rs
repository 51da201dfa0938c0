//! [`ToolContext`]: what one tool call knows about itself — its id, its tool's name and its
//! cancellation.

use std::fmt;
use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

/// The context of one tool call: its id, the tool's name and the run's cancellation.
///
/// A tool receives it by declaring a parameter of type `&ToolContext` or `ToolContext`; that
/// parameter is not part of the schema.
///
/// Clones share one context. Its cancellation token is made the first time it is asked for (a
/// child of the run's token), so a call whose tool never looks at it costs no token.
#[derive(Clone, Default)]
pub struct ToolContext {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    call_id: Box<str>,
    tool_name: Option<Arc<str>>,
    /// The run's (or request's) token, whose child the call's token is.
    parent: Option<CancellationToken>,
    token: OnceLock<CancellationToken>,
}

impl ToolContext {
    /// A context for the call `call_id` of the tool `tool_name`, with its own cancellation token.
    pub fn new(call_id: impl Into<Box<str>>, tool_name: impl Into<Arc<str>>) -> Self {
        Self {
            shared: Arc::new(Shared {
                call_id: call_id.into(),
                tool_name: Some(tool_name.into()),
                parent: None,
                token: OnceLock::new(),
            }),
        }
    }

    /// A context whose cancellation token, when it is made, is a child of `parent`.
    pub(crate) fn child_of(
        call_id: &str,
        tool_name: &Arc<str>,
        parent: &CancellationToken,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                call_id: call_id.into(),
                tool_name: Some(Arc::clone(tool_name)),
                parent: Some(parent.clone()),
                token: OnceLock::new(),
            }),
        }
    }

    /// Replaces the cancellation token, e.g. with a child of the run's token.
    #[must_use]
    pub fn with_cancellation(self, token: CancellationToken) -> Self {
        let shared = Shared {
            call_id: self.shared.call_id.clone(),
            tool_name: self.shared.tool_name.clone(),
            parent: None,
            token: OnceLock::from(token),
        };
        Self {
            shared: Arc::new(shared),
        }
    }

    /// The id the model gave this call (empty for a default context).
    pub fn call_id(&self) -> &str {
        &self.shared.call_id
    }

    /// The name of the tool being called (empty for a default context).
    pub fn tool_name(&self) -> &str {
        self.shared.tool_name.as_deref().unwrap_or_default()
    }

    /// Cancelled when the call is abandoned: the run was cancelled or the call timed out.
    ///
    /// Long-running tools can watch it to stop early and clean up.
    pub fn cancellation(&self) -> &CancellationToken {
        let shared = &*self.shared;
        shared.token.get_or_init(|| match &shared.parent {
            Some(parent) => parent.child_token(),
            None => CancellationToken::new(),
        })
    }

    /// Tells the tool the call was abandoned (it timed out, or its run ended while it ran).
    pub(crate) fn abandon(&self) {
        self.cancellation().cancel();
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id())
            .field("tool_name", &self.tool_name())
            .field(
                "cancelled",
                &self
                    .shared
                    .token
                    .get()
                    .is_some_and(CancellationToken::is_cancelled),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio_util::sync::CancellationToken;

    use super::ToolContext;

    #[test]
    fn clones_share_one_token_made_on_demand() {
        let cx = ToolContext::default();
        let clone = cx.clone();
        clone.cancellation().cancel();
        assert!(cx.cancellation().is_cancelled());

        let cx = ToolContext::new("c1", "t");
        let token = cx.cancellation().clone();
        let moved = cx;
        token.cancel();
        assert!(moved.cancellation().is_cancelled());
        assert_eq!((moved.call_id(), moved.tool_name()), ("c1", "t"));
    }

    #[test]
    fn a_child_token_follows_its_parent_also_when_made_late() {
        let parent = CancellationToken::new();
        let name: Arc<str> = Arc::from("t");
        let cx = ToolContext::child_of("c1", &name, &parent);
        parent.cancel();
        assert!(cx.cancellation().is_cancelled());

        let parent = CancellationToken::new();
        let cx = ToolContext::child_of("c2", &name, &parent);
        cx.abandon();
        assert!(cx.cancellation().is_cancelled());
        assert!(!parent.is_cancelled());
    }
}
