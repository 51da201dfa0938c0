//! A future whose first poll does its work in place: [`InPlace`], the state of such a future
//! (not started, going on boxed, finished), and [`FirstPoll`], what its first poll did. A call done
//! when first polled is answered with no state machine and no allocation around it; one that
//! has to wait goes on boxed.

use std::task::{Context, Poll};

use futures::future::BoxFuture;

/// What a first poll did: done, or the rest of the work, boxed.
pub(crate) enum FirstPoll<'a, T> {
    /// Done.
    Done(T),
    /// Still running: to be polled next, with the task's context.
    Running(BoxFuture<'a, T>),
}

/// The state of a future whose first poll does its work in place, from `S`: done then with no
/// state machine around it, or going on boxed.
pub(crate) enum InPlace<'a, S, T> {
    /// Not polled yet.
    Start(S),
    /// Going on.
    Running(BoxFuture<'a, T>),
    /// Finished.
    Done,
}

impl<'a, S, T> InPlace<'a, S, T> {
    /// Polls: on the first poll `start` does the work from `S`, with `task`.
    pub(crate) fn poll_with(
        &mut self,
        task: &mut Context<'_>,
        start: impl FnOnce(S, &mut Context<'_>) -> FirstPoll<'a, T>,
    ) -> Poll<T> {
        if let Self::Start(_) = self {
            let Self::Start(from) = std::mem::replace(self, Self::Done) else {
                unreachable!("matched as started")
            };
            let step = start(from, task);
            self.started(step, task)
        } else {
            self.poll_running(task)
        }
    }

    /// Polls as [`poll_with`](Self::poll_with) does, with `start` lent the state in place
    /// rather than given it: what it does not take out of it is dropped where it lies, never
    /// moved. For a large state of which the work takes a little (the MCP server's request,
    /// 240 bytes, of which the call takes the arguments): moving it out costs a copy per call.
    #[cfg(any(test, feature = "mcp"))]
    #[inline(always)]
    pub(crate) fn poll_in_place(
        &mut self,
        task: &mut Context<'_>,
        start: impl FnOnce(&mut S, &mut Context<'_>) -> FirstPoll<'a, T>,
    ) -> Poll<T> {
        if let Self::Start(from) = self {
            let step = start(from, task);
            self.started(step, task)
        } else {
            self.poll_running(task)
        }
    }

    /// After the first poll's `step`: done, or going on (and polled at once, as the caller
    /// polled).
    #[inline(always)]
    fn started(&mut self, step: FirstPoll<'a, T>, task: &mut Context<'_>) -> Poll<T> {
        match step {
            FirstPoll::Done(output) => {
                *self = Self::Done;
                Poll::Ready(output)
            }
            FirstPoll::Running(running) => {
                *self = Self::Running(running);
                self.poll_running(task)
            }
        }
    }

    /// Polls the call that went on; done, the state is `Done`.
    fn poll_running(&mut self, task: &mut Context<'_>) -> Poll<T> {
        let Self::Running(running) = self else {
            panic!("a future was polled after it completed")
        };
        let polled = running.as_mut().poll(task);
        if polled.is_ready() {
            *self = Self::Done;
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::task::{Context, Poll, Waker};

    use super::{FirstPoll, InPlace};

    /// A state with a part the start takes and a part it leaves, which counts its drops.
    struct State {
        taken: String,
        /// Held only to be dropped.
        _left: Arc<()>,
    }

    fn state(left: &Arc<()>) -> InPlace<'static, State, String> {
        InPlace::Start(State {
            taken: "taken".to_owned(),
            _left: Arc::clone(left),
        })
    }

    #[test]
    fn a_start_done_at_once_takes_the_state_and_what_it_leaves_is_dropped() {
        let left = Arc::new(());
        let mut stage = state(&left);
        let mut task = Context::from_waker(Waker::noop());
        let polled = stage.poll_with(&mut task, |state, _| FirstPoll::Done(state.taken));
        assert_eq!(polled, Poll::Ready("taken".to_owned()));
        assert_eq!(
            Arc::strong_count(&left),
            1,
            "what was left is dropped when done"
        );
        assert!(matches!(stage, InPlace::Done));
    }

    #[test]
    fn a_start_that_goes_on_is_polled_at_once_and_again_until_done() {
        let left = Arc::new(());
        let mut stage = state(&left);
        let mut task = Context::from_waker(Waker::noop());
        let polled = stage.poll_with(&mut task, |state, _| {
            let taken = state.taken;
            let mut once = false;
            FirstPoll::Running(Box::pin(std::future::poll_fn(move |_| {
                if std::mem::replace(&mut once, true) {
                    Poll::Ready(taken.clone())
                } else {
                    Poll::Pending
                }
            })))
        });
        assert_eq!(polled, Poll::Pending);
        assert_eq!(
            Arc::strong_count(&left),
            1,
            "the state is dropped once the call goes on"
        );
        assert_eq!(
            stage.poll_with(&mut task, |_, _| unreachable!("started once")),
            Poll::Ready("taken".to_owned())
        );
        assert!(matches!(stage, InPlace::Done));
        let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            stage.poll_with(&mut task, |_, _| unreachable!("started once"))
        }));
        assert!(again.is_err(), "a finished future panics when polled again");
    }

    #[test]
    fn a_start_in_place_takes_what_it_needs_and_the_rest_is_dropped_where_it_lies() {
        let left = Arc::new(());
        let mut stage = state(&left);
        let mut task = Context::from_waker(Waker::noop());
        let polled = stage.poll_in_place(&mut task, |state, _| {
            assert_eq!(Arc::strong_count(&left), 2, "lent, not moved or dropped");
            FirstPoll::Done(std::mem::take(&mut state.taken))
        });
        assert_eq!(polled, Poll::Ready("taken".to_owned()));
        assert_eq!(
            Arc::strong_count(&left),
            1,
            "what was left is dropped when done"
        );
        assert!(matches!(stage, InPlace::Done));
        let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            stage.poll_in_place(&mut task, |_, _| unreachable!("started once"))
        }));
        assert!(again.is_err(), "a finished future panics when polled again");
    }
}
