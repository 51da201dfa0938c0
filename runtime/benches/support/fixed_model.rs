//! A model that answers from a fixed script by position: `ROUND_TRIPS` calls of `add`, then
//! a text answer.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::BoxFuture;
use reticent::{Model, ModelError, ModelRequest, ModelResponse};
use serde_json::json;

/// Answers from a fixed script by position, without recording requests: the model costs
/// next to nothing, so what is measured is the loop.
pub struct FixedModel {
    script: Vec<ModelResponse>,
    next: AtomicUsize,
}

impl FixedModel {
    pub fn new(round_trips: usize) -> Self {
        let mut script: Vec<ModelResponse> = (0..round_trips)
            .map(|i| ModelResponse::tool_call(format!("call_{i}"), "add", json!({"a": i, "b": 1})))
            .collect();
        script.push(ModelResponse::text("done"));
        Self {
            script,
            next: AtomicUsize::new(0),
        }
    }

    fn respond(&self) -> ModelResponse {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.script.len();
        self.script[i].clone()
    }
}

impl Model for FixedModel {
    fn complete<'a>(
        &'a self,
        _request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let response = self.respond();
        Box::pin(async move { Ok(response) })
    }
}
