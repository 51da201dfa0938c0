//! Work on the blocking pool, as far as its caller waits: a sync tool that a timeout or a
//! cancellation can stop runs there, so that stopping it does not wait for its body; so does
//! a costly check of a call's arguments, before the call.

use std::any::Any;
use std::time::Duration;

/// How work on the blocking pool ended, as far as its caller waited.
pub(super) enum Blocked<T> {
    /// It returned.
    Returned(T),
    /// It panicked (or the runtime shut down under it).
    Panicked(Box<dyn Any + Send>),
    /// It was still running at its limit, and was left to finish on its own.
    TimedOut(Duration),
}

/// Runs `work` on the blocking pool: at `limit`, or when the caller stops waiting, it is
/// abandoned and its thread finishes on its own.
pub(super) async fn run_blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
    limit: Option<Duration>,
) -> Blocked<T> {
    let task = tokio::task::spawn_blocking(work);
    let joined = match limit {
        Some(limit) => match tokio::time::timeout(limit, task).await {
            Ok(joined) => joined,
            Err(_) => return Blocked::TimedOut(limit),
        },
        None => task.await,
    };
    match joined {
        Ok(output) => Blocked::Returned(output),
        Err(error) => match error.try_into_panic() {
            Ok(payload) => Blocked::Panicked(payload),
            // Cancelled: only when the runtime shuts down.
            Err(_) => Blocked::Panicked(Box::new("the blocking task was cancelled")),
        },
    }
}

/// Runs `work` on the blocking pool and waits for it, as long as the caller waits: a panic in
/// it goes on in the caller.
pub(crate) async fn on_pool<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    match run_blocking(work, None).await {
        Blocked::Returned(output) => output,
        Blocked::Panicked(payload) => std::panic::resume_unwind(payload),
        Blocked::TimedOut(_) => unreachable!("work without a limit does not time out"),
    }
}
