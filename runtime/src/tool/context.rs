//! [`ToolContext`]: what one tool call knows about itself — its id, its tool's name and its
//! cancellation — and where it reports progress and log lines.

use std::fmt;
use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

use super::progress::{LogLevel, Observer, ProgressAmount, ProgressTotal};

/// The context of one tool call: its id, the tool's name and the run's cancellation.
///
/// A tool receives it by declaring a parameter of type `&ToolContext` or `ToolContext`; that
/// parameter is not part of the schema.
///
/// Clones share one context. Its cancellation token is made the first time it is asked for (a
/// child of the run's token), so a call whose tool never looks at it costs no token.
///
/// # Progress and log lines
///
/// A long-running tool can say how far it got with [`progress`](Self::progress) and what it is
/// doing with [`log`](Self::log). Both are written for people, and go to whoever watches the
/// call — **never to the model**:
///
/// - in an agent run, [`AgentEvent::ToolProgress`](crate::AgentEvent::ToolProgress) and
///   [`AgentEvent::ToolLog`](crate::AgentEvent::ToolLog) on
///   [`Agent::run_stream`](crate::Agent::run_stream)'s stream;
/// - over MCP, `notifications/progress` (when the client asked for progress with a
///   `progressToken`) and `notifications/message` (at or above the level the client set);
/// - in both, events on the call's `execute_tool` span.
///
/// A call nobody watches (no stream, no client that asked, no subscriber for the span) ignores
/// them at the cost of a branch. Messages are cut to 2 KiB.
///
/// ```
/// use reticent::{ToolContext, tool::LogLevel};
///
/// /// Import rows from a file.
/// #[reticent::tool]
/// async fn import(rows: Vec<String>, cx: &ToolContext) -> usize {
///     for (done, row) in rows.iter().enumerate() {
///         if row.is_empty() {
///             cx.log(LogLevel::Warning, format_args!("row {done} is empty; skipped"));
///         }
///         cx.progress(done + 1, rows.len(), "importing");
///     }
///     rows.len()
/// }
///
/// let agent = reticent::Agent::builder(reticent::ScriptedModel::new(vec![]))
///     .tool(Import)
///     .build();
/// # assert!(agent.is_ok());
/// ```
#[derive(Default)]
pub struct ToolContext {
    /// Empty in a default context until its token is asked for or it is cloned: making one
    /// costs nothing, as the runtime does for a tool that does not read its context.
    shared: OnceLock<Arc<Shared>>,
}

#[derive(Default)]
struct Shared {
    call_id: CallId,
    tool_name: Option<Arc<str>>,
    /// The run's (or request's) token, whose child the call's token is.
    parent: Option<CancellationToken>,
    token: OnceLock<CancellationToken>,
    /// Who watches the call; `None` when nobody does.
    observer: Option<Arc<Observer>>,
    /// The MCP client that made the call, whose user or model the tool may ask
    /// (`mcp/server/ask.rs`).
    #[cfg(feature = "mcp")]
    client: Option<rmcp::service::Peer<rmcp::service::RoleServer>>,
}

impl Clone for ToolContext {
    /// A context that shares this one: its token, when it is made, is the same.
    fn clone(&self) -> Self {
        Self::of(Arc::clone(self.shared()))
    }
}

impl ToolContext {
    /// A context for the call `call_id` of the tool `tool_name`, with its own cancellation token.
    pub fn new(call_id: impl Into<Box<str>>, tool_name: impl Into<Arc<str>>) -> Self {
        Self::of(Arc::new(Shared {
            call_id: CallId::Boxed(call_id.into()),
            tool_name: Some(tool_name.into()),
            parent: None,
            token: OnceLock::new(),
            observer: None,
            #[cfg(feature = "mcp")]
            client: None,
        }))
    }

    /// A context whose cancellation token, when it is made, is a child of `parent`, and whose
    /// reports go to `observer`.
    pub(crate) fn child_of(
        call_id: &str,
        tool_name: &Arc<str>,
        parent: CancellationToken,
        observer: Option<Arc<Observer>>,
    ) -> Self {
        Self::of(Arc::new(Shared {
            call_id: CallId::new(call_id),
            tool_name: Some(Arc::clone(tool_name)),
            parent: Some(parent),
            token: OnceLock::new(),
            observer,
            #[cfg(feature = "mcp")]
            client: None,
        }))
    }

    fn of(shared: Arc<Shared>) -> Self {
        Self {
            shared: OnceLock::from(shared),
        }
    }

    /// What the context holds, made empty the first time it is needed.
    fn shared(&self) -> &Arc<Shared> {
        self.shared.get_or_init(Arc::default)
    }

    /// What the context holds, `None` while a default context is still empty.
    #[inline]
    fn get(&self) -> Option<&Shared> {
        self.shared.get().map(|shared| &**shared)
    }

    /// Replaces the cancellation token, e.g. with a child of the run's token.
    #[must_use]
    pub fn with_cancellation(self, token: CancellationToken) -> Self {
        let (call_id, tool_name, observer) = match self.get() {
            Some(shared) => (
                shared.call_id.clone(),
                shared.tool_name.clone(),
                shared.observer.clone(),
            ),
            None => Default::default(),
        };
        Self::of(Arc::new(Shared {
            call_id,
            tool_name,
            parent: None,
            token: OnceLock::from(token),
            observer,
            #[cfg(feature = "mcp")]
            client: self.client().cloned(),
        }))
    }

    /// The id the model gave this call (empty for a default context).
    pub fn call_id(&self) -> &str {
        self.get().map_or("", |shared| shared.call_id.as_str())
    }

    /// The name of the tool being called (empty for a default context).
    pub fn tool_name(&self) -> &str {
        self.get()
            .and_then(|shared| shared.tool_name.as_deref())
            .unwrap_or_default()
    }

    /// Cancelled when the call is abandoned: the run was cancelled or the call timed out.
    ///
    /// Long-running tools can watch it to stop early and clean up.
    pub fn cancellation(&self) -> &CancellationToken {
        let shared = &**self.shared();
        shared.token.get_or_init(|| match &shared.parent {
            Some(parent) => parent.child_token(),
            None => CancellationToken::new(),
        })
    }

    /// Reports how far the call got: `done` out of `total` (when known), with an optional
    /// message for people (`"copying 3 of 10 files"`).
    ///
    /// `done` should increase with every report; a report whose `done` is not more than the
    /// last one's, or is not a finite number, is dropped. See [the type's
    /// docs](Self#progress-and-log-lines) for where reports go: never to the model.
    ///
    /// ```
    /// # let cx = reticent::ToolContext::default();
    /// cx.progress(3, 10, "copying files");
    /// cx.progress(4, None, None);
    /// cx.progress(0.5, 1.0, "half way");
    /// ```
    ///
    /// `done` and `total` are any integer or float type ([`ProgressAmount`],
    /// [`ProgressTotal`]); `total` may also be `None`.
    ///
    /// [`ProgressAmount`]: crate::rules::ProgressAmount
    /// [`ProgressTotal`]: crate::rules::ProgressTotal
    #[inline]
    pub fn progress<'m>(
        &self,
        done: impl ProgressAmount,
        total: impl ProgressTotal,
        message: impl Into<Option<&'m str>>,
    ) {
        if let Some(observer) = self.observer() {
            observer.progress(done.into_f64(), total.into_total(), message.into());
        }
    }

    /// Logs a line about the call for people, at `level`. `message` is formatted only when
    /// someone will read it, so `format_args!("read {n} rows")` costs nothing in a call
    /// nobody watches.
    ///
    /// See [the type's docs](Self#progress-and-log-lines) for where lines go: never to the
    /// model.
    #[inline]
    pub fn log(&self, level: LogLevel, message: impl fmt::Display) {
        if let Some(observer) = self.observer() {
            observer.log(level, &message);
        }
    }

    #[inline]
    fn observer(&self) -> Option<&Observer> {
        self.get().and_then(|shared| shared.observer.as_deref())
    }

    /// This context, of a call the MCP client `client` made. A context just made is changed
    /// in place; one already shared is left as it is.
    #[cfg(feature = "mcp")]
    pub(crate) fn with_client(
        mut self,
        client: Option<&rmcp::service::Peer<rmcp::service::RoleServer>>,
    ) -> Self {
        if let Some(client) = client
            && let Some(shared) = self.shared.get_mut().and_then(Arc::get_mut)
        {
            shared.client = Some(client.clone());
        }
        self
    }

    /// The MCP client that made the call, when one did.
    #[cfg(feature = "mcp")]
    pub(crate) fn client(&self) -> Option<&rmcp::service::Peer<rmcp::service::RoleServer>> {
        self.get().and_then(|shared| shared.client.as_ref())
    }

    /// Tells the tool the call was abandoned (it timed out, or its run ended while it ran).
    pub(crate) fn abandon(&self) {
        self.cancellation().cancel();
    }
}

/// The longest call id kept inline: an MCP request's number, and the ids OpenAI
/// (`call_` and 24 characters) and Anthropic (`toolu_` and 24) give calls.
const INLINE_ID: usize = 30;

/// A call's id, kept inline when it is short, so that making a context allocates once.
#[derive(Clone)]
enum CallId {
    Inline { len: u8, bytes: [u8; INLINE_ID] },
    Boxed(Box<str>),
}

impl CallId {
    fn new(id: &str) -> Self {
        if id.len() > INLINE_ID {
            return Self::Boxed(id.into());
        }
        let mut bytes = [0; INLINE_ID];
        bytes[..id.len()].copy_from_slice(id.as_bytes());
        Self::Inline {
            len: id.len() as u8,
            bytes,
        }
    }

    fn as_str(&self) -> &str {
        match self {
            // Copied whole from a `str`: always UTF-8.
            Self::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Self::Boxed(id) => id,
        }
    }
}

impl Default for CallId {
    fn default() -> Self {
        Self::new("")
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
                    .get()
                    .and_then(|shared| shared.token.get())
                    .is_some_and(CancellationToken::is_cancelled),
            )
            .field("observed", &self.observer().is_some())
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

        // A default context asked for its token first, then cloned: still one token.
        let cx = ToolContext::default();
        let token = cx.cancellation().clone();
        let clone = cx.clone();
        token.cancel();
        assert!(clone.cancellation().is_cancelled());
        assert_eq!((clone.call_id(), clone.tool_name()), ("", ""));
        assert!(
            format!("{clone:?}").contains("cancelled: true"),
            "{clone:?}"
        );

        let cx = ToolContext::new("c1", "t");
        let token = cx.cancellation().clone();
        let moved = cx;
        token.cancel();
        assert!(moved.cancellation().is_cancelled());
        assert_eq!((moved.call_id(), moved.tool_name()), ("c1", "t"));
    }

    #[test]
    fn call_ids_short_and_long() {
        let name: Arc<str> = Arc::from("t");
        let parent = CancellationToken::new();
        for id in [
            "",
            "7",
            "toolu_01A09q90qw90lq917835lq9",
            "é".repeat(15).as_str(),
            &"x".repeat(31),
        ] {
            let cx = ToolContext::child_of(id, &name, parent.clone(), None);
            assert_eq!(cx.call_id(), id);
            let token = CancellationToken::new();
            assert_eq!(cx.with_cancellation(token).call_id(), id);
        }
        assert_eq!(ToolContext::default().call_id(), "");
    }

    #[test]
    fn a_child_token_follows_its_parent_also_when_made_late() {
        let parent = CancellationToken::new();
        let name: Arc<str> = Arc::from("t");
        let cx = ToolContext::child_of("c1", &name, parent.clone(), None);
        parent.cancel();
        assert!(cx.cancellation().is_cancelled());

        let parent = CancellationToken::new();
        let cx = ToolContext::child_of("c2", &name, parent.clone(), None);
        cx.abandon();
        assert!(cx.cancellation().is_cancelled());
        assert!(!parent.is_cancelled());
    }
}
