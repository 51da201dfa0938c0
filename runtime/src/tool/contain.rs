//! Keeping a tool's panics out of its caller: a tool future whose `Drop` cannot unwind into
//! its owner, values dropped under `catch_unwind`, and a panic's message read without dropping
//! its payload (which is the tool's, and may panic too).

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Drops `value` under `catch_unwind`: a value from a tool may panic in its `Drop`.
pub(crate) fn drop_contained<T>(value: T) {
    let _ = drop_reporting(value);
}

/// Drops `value` under `catch_unwind`, and says what it panicked with, if it did.
pub(super) fn drop_reporting<T>(value: T) -> Option<String> {
    let payload = catch_unwind(AssertUnwindSafe(move || drop(value))).err()?;
    Some(payload_message(payload))
}

/// A panic's message. The payload itself is forgotten rather than dropped: it is the tool's
/// value, and may panic in its own `Drop`.
pub(super) fn payload_message(payload: Box<dyn Any + Send>) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned());
    std::mem::forget(payload);
    message
}

/// A future whose `Drop` cannot unwind into its owner: dropped before it finished (a timeout,
/// a cancelled run), or after, the inner future is dropped under `catch_unwind`.
pub(super) struct Contained<F>(Option<F>);

impl<F> Contained<F> {
    pub(super) fn new(future: F) -> Self {
        Self(Some(future))
    }

    /// Drops the future now; what it panicked with, if it panicked as it was dropped.
    pub(super) fn stop(&mut self) -> Option<String> {
        drop_reporting(self.0.take())
    }
}

impl<F: Future + Unpin> Future for Contained<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let future = self
            .0
            .as_mut()
            .expect("a contained future is not polled after it completed");
        let output = std::task::ready!(Pin::new(future).poll(cx));
        drop_contained(self.0.take());
        Poll::Ready(output)
    }
}

impl<F> Drop for Contained<F> {
    fn drop(&mut self) {
        drop_contained(self.0.take());
    }
}
