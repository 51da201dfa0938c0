//! [`ToolFuture`]: what [`Tool::call`](super::Tool::call) returns — ready at once when the
//! tool did its work as it was called, boxed otherwise.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use serde_json::Value;

use super::output::Encoded;
use crate::error::ToolError;

/// The future of one tool call: its output (as JSON unless said otherwise), or why it failed.
///
/// A sync `#[tool]` runs its body when it is called and returns a ready future, with nothing
/// allocated; an async one returns its future boxed. Either way it is awaited the same:
///
/// ```
/// use reticent::tool::ToolFuture;
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
///
/// The output is the tool's output as JSON, `T = Value`, except for
/// [`Tool::call_text_output`](super::Tool::call_text_output), which has it as text.
#[must_use = "a tool future does nothing unless awaited"]
pub struct ToolFuture<'a, T = Value>(Repr<'a, T>);

enum Repr<'a, T> {
    Ready(Option<Result<T, ToolError>>),
    Boxed(BoxFuture<'a, Result<T, ToolError>>),
    /// A `#[tool]`'s future, whose output is encoded as the call asked (see `body.rs`), made
    /// into `T` as it is done: one future type per tool, whichever output the call wants.
    Encoded(BoxFuture<'a, Result<Encoded, ToolError>>, fn(Encoded) -> T),
}

impl<'a, T> ToolFuture<'a, T> {
    /// A future that is ready with `result`.
    #[inline]
    pub fn ready(result: Result<T, ToolError>) -> Self {
        Self(Repr::Ready(Some(result)))
    }

    /// A future that runs `future`, boxed.
    #[inline]
    pub fn new(future: impl Future<Output = Result<T, ToolError>> + Send + 'a) -> Self {
        Self(Repr::Boxed(Box::pin(future)))
    }

    /// Whether the result is already there (the tool did its work when called).
    pub fn is_ready(&self) -> bool {
        matches!(self.0, Repr::Ready(Some(_)))
    }

    /// The same call, its output passed through `f`: still ready, with nothing allocated,
    /// when this one is; boxed again otherwise.
    pub(crate) fn map_output<U: Send + 'a>(self, f: fn(T) -> U) -> ToolFuture<'a, U>
    where
        T: Send + 'a,
    {
        match self.0 {
            Repr::Ready(result) => ToolFuture(Repr::Ready(result.map(|result| result.map(f)))),
            Repr::Boxed(future) => ToolFuture::new(async move { future.await.map(f) }),
            Repr::Encoded(future, g) => ToolFuture::new(async move { future.await.map(g).map(f) }),
        }
    }
}

impl<'a> ToolFuture<'a, Encoded> {
    /// The same call, its encoded output made into `T` by `f`: still ready, with nothing
    /// allocated, when this one is; the same box otherwise.
    #[inline]
    pub(crate) fn decode<T: Send + 'a>(self, f: fn(Encoded) -> T) -> ToolFuture<'a, T> {
        match self.0 {
            Repr::Ready(result) => ToolFuture(Repr::Ready(result.map(|result| result.map(f)))),
            Repr::Boxed(future) => ToolFuture(Repr::Encoded(future, f)),
            // Never made: only a boxed `Encoded` future is wrapped, and only once.
            Repr::Encoded(future, g) => ToolFuture::new(async move { future.await.map(g).map(f) }),
        }
    }
}

impl<'a, T> From<BoxFuture<'a, Result<T, ToolError>>> for ToolFuture<'a, T> {
    #[inline]
    fn from(future: BoxFuture<'a, Result<T, ToolError>>) -> Self {
        Self(Repr::Boxed(future))
    }
}

// The output is only ever moved out whole, never pinned.
impl<T> Unpin for ToolFuture<'_, T> {}

impl<T> Future for ToolFuture<'_, T> {
    type Output = Result<T, ToolError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, ToolError>> {
        match &mut self.get_mut().0 {
            Repr::Ready(result) => Poll::Ready(
                result
                    .take()
                    .expect("a ToolFuture was polled after it completed"),
            ),
            Repr::Boxed(future) => future.as_mut().poll(cx),
            Repr::Encoded(future, f) => future.as_mut().poll(cx).map(|result| result.map(*f)),
        }
    }
}

impl<T> fmt::Debug for ToolFuture<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Ready(Some(_)) => f.write_str("ToolFuture::Ready"),
            Repr::Ready(None) => f.write_str("ToolFuture::Done"),
            Repr::Boxed(_) | Repr::Encoded(..) => f.write_str("ToolFuture::Boxed"),
        }
    }
}
