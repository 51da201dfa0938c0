//! [`ScriptedModel`]: a model that answers from a script, for examples and tests.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;

use super::{Model, ModelError, ModelRequest, ModelResponse};

/// A model that answers each request with the next response of a script, and records the
/// requests it received.
///
/// Clones share the script and the record, so keep a clone to inspect what the agent sent:
///
/// ```
/// use reticent::{Agent, ModelResponse, ScriptedModel};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let model = ScriptedModel::new(vec![ModelResponse::text("Hello!")]);
/// let agent = Agent::builder(model.clone()).build().unwrap();
/// let result = agent.run("Hi").await.unwrap();
/// assert_eq!(result.output, "Hello!");
/// assert_eq!(model.requests().len(), 1);
/// # });
/// ```
#[derive(Clone, Debug, Default)]
pub struct ScriptedModel {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    script: VecDeque<ModelResponse>,
    scripted: usize,
    requests: Vec<ModelRequest>,
}

impl ScriptedModel {
    /// A model that gives these responses, in order.
    pub fn new(responses: Vec<ModelResponse>) -> Self {
        let scripted = responses.len();
        Self {
            inner: Arc::new(Mutex::new(Inner {
                script: responses.into(),
                scripted,
                requests: Vec::new(),
            })),
        }
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.lock().requests.clone()
    }

    /// How many scripted responses are left.
    pub fn remaining(&self) -> usize {
        self.lock().script.len()
    }

    /// Appends a response to the script.
    pub fn push(&self, response: ModelResponse) {
        let mut inner = self.lock();
        inner.script.push_back(response);
        inner.scripted += 1;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Model for ScriptedModel {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let mut inner = self.lock();
        inner.requests.push(request.clone());
        let response = inner.script.pop_front().ok_or_else(|| {
            ModelError::new(format!(
                "the scripted model has no response left for request {} ({} were scripted)",
                inner.requests.len(),
                inner.scripted
            ))
        });
        Box::pin(std::future::ready(response))
    }
}
