//! [`ReplayModel`]: a model that replays a recorded [`Trajectory`].

use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;

use super::{Model, ModelError, ModelRequest, ModelResponse, Trajectory};

/// A model that replays a recorded [`Trajectory`]: it serves the recorded responses in order
/// and fails with a clear [`ModelError`] when a request diverges from the recording.
///
/// A run that replays it fences untrusted output with the recording's boundary
/// ([`Trajectory::fence_boundary`]), so a recorded run with untrusted output replays too.
#[derive(Clone, Debug)]
pub struct ReplayModel {
    inner: Arc<ReplayInner>,
}

#[derive(Debug)]
struct ReplayInner {
    trajectory: Trajectory,
    next: Mutex<usize>,
}

impl ReplayModel {
    /// A model that replays `trajectory`.
    pub fn new(trajectory: Trajectory) -> Self {
        Self {
            inner: Arc::new(ReplayInner {
                trajectory,
                next: Mutex::new(0),
            }),
        }
    }

    /// How many recorded responses are left.
    pub fn remaining(&self) -> usize {
        let next = *self
            .inner
            .next
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.inner.trajectory.len().saturating_sub(next)
    }
}

impl Model for ReplayModel {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let trajectory = &self.inner.trajectory;
        let mut next = self
            .inner
            .next
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let index = *next;
        let result = if index >= trajectory.len() {
            Err(ModelError::new(format!(
                "request {} diverges from the recording: the recording has only {} response(s)",
                index + 1,
                trajectory.len()
            )))
        } else {
            match trajectory.check(index, request) {
                Ok(()) => {
                    *next += 1;
                    Ok(trajectory.response(index).clone())
                }
                Err(why) => Err(ModelError::new(format!(
                    "request {} diverges from the recording: {why}",
                    index + 1
                ))),
            }
        };
        Box::pin(std::future::ready(result))
    }

    fn fence_boundary(&self) -> Option<String> {
        self.inner.trajectory.fence_boundary().map(str::to_owned)
    }
}
