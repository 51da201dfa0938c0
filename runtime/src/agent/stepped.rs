//! The run's model and tool calls handed to a [`StepExecutor`](super::StepExecutor), when the
//! run has one.

use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

use super::call::CallStage;
use super::reconcile::Again;
use super::run::Run;
use super::steps::{ModelStep, StepError, StepExecutor, ToolStep};
use crate::error::ToolFailure;
use crate::model::{ModelError, ModelResponse, ToolCall};
use crate::tool::idempotency::KeySource;

impl Run<'_> {
    /// The model call of `turn`, through `steps`, cancellable; `None` when it was cancelled.
    pub(super) async fn model_step(
        &self,
        steps: &dyn StepExecutor,
        turn: u32,
        span: &tracing::Span,
    ) -> Option<Result<ModelResponse, ModelError>> {
        let step = ModelStep {
            turn,
            model: Arc::clone(&self.inner.model),
            request: self.record.request.clone(),
            span: span.clone(),
        };
        tokio::select! {
            biased;
            () = self.token.cancelled() => None,
            result = steps.model_call(step) => match result {
                Ok(response) => Some(Ok(response)),
                Err(StepError::Model(error)) => Some(Err(error)),
                Err(StepError::Cancelled) => None,
            },
        }
    }

    /// Runs `call` through `steps`: how far it got. `Running` when the executor stopped the
    /// run.
    pub(super) async fn tool_step(
        &self,
        steps: &dyn StepExecutor,
        call: &ToolCall,
        refused: Option<ToolFailure>,
        token: &CancellationToken,
        key: KeySource,
        again: Again,
    ) -> CallStage {
        let live = Arc::new(Mutex::new(None));
        let step = ToolStep {
            inner: Arc::clone(&self.inner),
            call: call.clone(),
            refused,
            token: token.clone(),
            cancellable: self.cancellable,
            live: Arc::clone(&live),
            key,
            again,
        };
        match steps.tool_call(step).await {
            Err(_) => CallStage::Running,
            Ok(record) if record.interrupted => CallStage::Interrupted,
            Ok(record) => {
                let live = live.lock().unwrap_or_else(PoisonError::into_inner).take();
                CallStage::Finished(record.into_executed(call, live))
            }
        }
    }

    /// Tells the step executor, if there is one, which calls are about to start: those of
    /// `calls` that have not finished. `false` when the run was stopped meanwhile.
    pub(super) async fn calls_starting(
        &self,
        calls: &[ToolCall],
        progress: &[Mutex<CallStage>],
    ) -> bool {
        let Some(steps) = self.steps else {
            return true;
        };
        let starting: Vec<ToolCall> = calls
            .iter()
            .zip(progress)
            .filter(|(_, slot)| {
                !matches!(
                    *slot.lock().unwrap_or_else(PoisonError::into_inner),
                    CallStage::Finished(_)
                )
            })
            .map(|(call, _)| call.clone())
            .collect();
        if starting.is_empty() {
            return true;
        }
        tokio::select! {
            biased;
            () = self.token.cancelled() => false,
            result = steps.calls_starting(&starting) => result.is_ok(),
        }
    }
}
