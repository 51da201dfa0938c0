//! [`ScriptedModel`]: a model that answers from a script, for examples and tests.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;

use super::{Model, ModelError, ModelRequest, ModelResponse, SchemaDialect};

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
///
/// It takes tool schemas as they are ([`SchemaDialect::Standard`]) unless told to ask for
/// another dialect with [`ScriptedModel::with_dialect`], so that what an agent does for a
/// provider's dialect can be tested offline.
#[derive(Clone, Debug, Default)]
pub struct ScriptedModel {
    inner: Arc<Mutex<Inner>>,
    dialect: SchemaDialect,
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
            dialect: SchemaDialect::Standard,
        }
    }

    /// The same model (sharing the script and the record of requests), declaring that it
    /// accepts tool schemas in `dialect`: an agent built on it converts every tool's schema to
    /// the dialect, refuses one the dialect cannot express, and normalises the model's
    /// arguments, as it does for a provider that asks for the dialect.
    ///
    /// ```
    /// use reticent::{Agent, BuildError, ScriptedModel, SchemaDialect};
    /// use std::collections::HashMap;
    ///
    /// /// Set labels.
    /// #[reticent::tool]
    /// fn set_labels(labels: HashMap<String, String>) -> usize {
    ///     labels.len()
    /// }
    ///
    /// let model = ScriptedModel::new(vec![]).with_dialect(SchemaDialect::OpenAiStrict);
    /// let error = Agent::builder(model).tool(SetLabels).build().unwrap_err();
    /// assert!(matches!(error, BuildError::UnsupportedSchema { .. }));
    /// ```
    #[must_use]
    pub fn with_dialect(mut self, dialect: SchemaDialect) -> Self {
        self.dialect = dialect;
        self
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

    fn schema_dialect(&self) -> SchemaDialect {
        self.dialect
    }
}
