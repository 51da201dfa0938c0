//! Calls that may run twice: before a call whose effect is unknown (cut off mid-flight by a
//! cancellation or a crash) runs again, its tool's reconcile hook (`#[tool(reconcile = path)]`)
//! is asked whether it took effect, and the answer decides — applied: it does not run again
//! and is recorded as applied; not applied: it runs; unknown: as without a hook, it runs only
//! if the caller approved that, and otherwise the run stops with it pending. The answer goes on
//! the call's [`Effect`](super::Effect).

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;
use futures::channel::mpsc::Sender;
use tokio_util::sync::CancellationToken;

use super::call::{CallStage, Executed, execute};
use super::{AgentEvent, Inner};
use crate::error::ToolFailure;
use crate::model::ToolCall;
use crate::tool::idempotency::KeySource;
use crate::tool::{Reconcile, Reconciled, ToolContext, drop_contained, text_of};

/// How a call comes to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Again {
    /// As the model made it.
    #[default]
    No,
    /// Again after its effect was unknown, because the caller approved that.
    Approved,
    /// Again after its effect was unknown, with no decision: only if its hook says it did not
    /// take effect.
    Undecided,
}

/// How long a hook may take when neither the tool nor the agent sets a time limit.
const HOOK_LIMIT: Duration = Duration::from_secs(60);

/// Runs `call` as [`execute`] does, asking its tool's reconcile hook first when the call runs
/// `again`: how far it got. `Interrupted` when it is still unknown whether the call took
/// effect and nobody approved running it again.
#[expect(
    clippy::too_many_arguments,
    reason = "`execute`'s, and how the call runs"
)]
pub(super) async fn run_call(
    inner: &Inner,
    call: &ToolCall,
    refused: Option<ToolFailure>,
    token: &CancellationToken,
    cancellable: bool,
    events: Option<&mut Sender<AgentEvent>>,
    key: KeySource,
    again: Again,
) -> CallStage {
    // A call a rule refuses does not run, whatever the hook would say.
    let reconciled = match (again, &refused) {
        (Again::No, _) | (_, Some(_)) => None,
        _ => {
            let start = tokio::time::Instant::now();
            let answer = ask(inner, call, token, &key).await;
            match (answer, again) {
                (Some(Reconciled::Applied(output)), _) => {
                    return CallStage::Finished(Executed {
                        outcome: Ok(text_of(&output).into_owned()),
                        elapsed: start.elapsed(),
                        reconciled: Some(Reconciled::Applied(output)),
                    });
                }
                (answer @ Some(Reconciled::NotApplied), _) => answer,
                (None | Some(Reconciled::Unknown), Again::Undecided) => {
                    return CallStage::Interrupted;
                }
                (answer, _) => answer,
            }
        }
    };
    let mut executed = execute(inner, call, refused, token, cancellable, events, key).await;
    executed.reconciled = reconciled;
    CallStage::Finished(executed)
}

/// The answer of `call`'s reconcile hook; `None` when its tool has none. A hook that panics,
/// or does not answer within the call's time limit, answers [`Reconciled::Unknown`]; what it
/// panicked with is never shown to the model.
async fn ask(
    inner: &Inner,
    call: &ToolCall,
    token: &CancellationToken,
    key: &KeySource,
) -> Option<Reconciled> {
    let (name, tool) = inner.tools.get(&call.name)?;
    let hook = tool.definition().reconcile()?;
    let limit = [tool.timeout(), inner.failure_options.timeout]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(HOOK_LIMIT);
    let context = ToolContext::child_of(&call.id, name, token.clone(), None, key.clone());
    let abandon = context.clone();
    let question = Reconcile::new(context, call.arguments.value().clone());
    // The hook's own code runs when it is called, as its future's does when polled: both
    // under the guard.
    let answer = AssertUnwindSafe(async move { hook(question).await }).catch_unwind();
    let answer = match tokio::time::timeout(limit, answer).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(panic)) => {
            drop_contained(panic);
            tracing::warn!(
                call_id = %call.id,
                tool = %call.name,
                "the reconcile hook panicked; whether the call took effect is unknown"
            );
            Reconciled::Unknown
        }
        Err(_) => {
            abandon.abandon();
            tracing::warn!(
                call_id = %call.id,
                tool = %call.name,
                limit_ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
                "the reconcile hook did not answer in time; whether the call took effect is \
                 unknown"
            );
            Reconciled::Unknown
        }
    };
    Some(answer)
}
