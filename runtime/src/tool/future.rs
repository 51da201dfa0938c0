//! [`ToolFuture`]: what [`Tool::call`](super::Tool::call) returns — ready at once when the
//! tool did its work as it was called, boxed otherwise.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use serde_json::Value;

use crate::error::ToolError;

/// What a tool call produces: its output as JSON, or why it failed.
type ToolResult = Result<Value, ToolError>;

/// The future of one tool call.
///
/// A sync `#[tool]` runs its body when it is called and returns a ready future, with nothing
/// allocated; an async one returns its future boxed. Either way it is awaited the same:
///
/// ```
/// use reticent::ToolFuture;
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let ready = ToolFuture::ready(Ok(json!(5)));
/// assert!(ready.is_ready());
/// assert_eq!(ready.await.unwrap(), json!(5));
///
/// let boxed = ToolFuture::new(async { Ok(json!("done")) });
/// assert_eq!(boxed.await.unwrap(), json!("done"));
/// # });
/// ```
///
/// A `BoxFuture` converts into one with `.into()`, for tools written by hand.
#[must_use = "a tool future does nothing unless awaited"]
pub struct ToolFuture<'a>(Repr<'a>);

enum Repr<'a> {
    Ready(Option<ToolResult>),
    Boxed(BoxFuture<'a, ToolResult>),
}

impl<'a> ToolFuture<'a> {
    /// A future that is ready with `result`.
    #[inline]
    pub fn ready(result: ToolResult) -> Self {
        Self(Repr::Ready(Some(result)))
    }

    /// A future that runs `future`, boxed.
    #[inline]
    pub fn new(future: impl Future<Output = ToolResult> + Send + 'a) -> Self {
        Self(Repr::Boxed(Box::pin(future)))
    }

    /// Whether the result is already there (the tool did its work when called).
    pub fn is_ready(&self) -> bool {
        matches!(self.0, Repr::Ready(Some(_)))
    }
}

impl<'a> From<BoxFuture<'a, ToolResult>> for ToolFuture<'a> {
    #[inline]
    fn from(future: BoxFuture<'a, ToolResult>) -> Self {
        Self(Repr::Boxed(future))
    }
}

impl Future for ToolFuture<'_> {
    type Output = ToolResult;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ToolResult> {
        match &mut self.get_mut().0 {
            Repr::Ready(result) => Poll::Ready(
                result
                    .take()
                    .expect("a ToolFuture was polled after it completed"),
            ),
            Repr::Boxed(future) => future.as_mut().poll(cx),
        }
    }
}

impl fmt::Debug for ToolFuture<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Ready(Some(_)) => f.write_str("ToolFuture::Ready"),
            Repr::Ready(None) => f.write_str("ToolFuture::Done"),
            Repr::Boxed(_) => f.write_str("ToolFuture::Boxed"),
        }
    }
}
