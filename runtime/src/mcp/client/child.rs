//! The server's process, for a server started over stdio: killed when the client is dropped,
//! asked to exit (its stdin closed) when the client is closed, and asked how it ended when
//! the connection breaks.

use std::process::ExitStatus;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::process::Child;

/// How long [`ChildProcess::exit_status`] waits for a process whose output ended to exit.
const EXIT_WAIT: Duration = Duration::from_millis(200);

/// A server's process. Dropping it kills the process.
#[derive(Debug)]
pub(super) struct ChildProcess {
    pid: Option<u32>,
    /// `None` once the process has been killed, waited for, or handed to a reaper.
    child: Mutex<Option<Child>>,
}

impl ChildProcess {
    /// Takes charge of `child`, which must have been spawned with `kill_on_drop(true)` so
    /// that it is killed even when the runtime drops it first.
    pub(super) fn new(child: Child) -> Self {
        Self {
            pid: child.id(),
            child: Mutex::new(Some(child)),
        }
    }

    pub(super) fn pid(&self) -> Option<u32> {
        self.pid
    }

    fn take(&self) -> Option<Child> {
        self.child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// How the process ended, if it has (or does within a moment: its output can end just
    /// before it exits).
    pub(super) async fn exit_status(&self) -> Option<ExitStatus> {
        let deadline = tokio::time::Instant::now() + EXIT_WAIT;
        loop {
            {
                let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
                match child.as_mut().map(Child::try_wait) {
                    Some(Ok(Some(status))) => return Some(status),
                    Some(Ok(None)) => {}
                    None | Some(Err(_)) => return None,
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits up to `grace` for the process to exit on its own, then kills it.
    pub(super) async fn shut_down(&self, grace: Duration) {
        let Some(mut child) = self.take() else { return };
        if tokio::time::timeout(grace, child.wait()).await.is_err() {
            tracing::debug!(pid = ?self.pid, "the MCP server did not exit when its stdin closed; killing it");
            let _ = child.kill().await;
        }
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        let Some(mut child) = self.take() else { return };
        // Now, not on some later poll: the process is gone when the client is.
        let _ = child.start_kill();
        // Reap it, so that it does not linger as a zombie; without a runtime, tokio's own
        // reaper does that the next time it runs.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = child.wait().await;
            });
        }
    }
}
