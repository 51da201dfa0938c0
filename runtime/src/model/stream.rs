//! [`ModelEvent`]: one turn of the model as it is produced, for [`Model::stream`].
//!
//! [`Model::stream`]: super::Model::stream

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::{self, BoxStream};

use super::{ModelError, ModelResponse};

/// One step of a model's answer as it streams in; see [`Model::stream`] for the order they
/// come in and what a consumer can rely on.
///
/// ```
/// use futures::StreamExt;
/// use reticent::{Model, ModelRequest, ModelResponse, ScriptedModel, model::ModelEvent};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let model = ScriptedModel::new(vec![ModelResponse::text("Hello!")]);
/// let request = ModelRequest::default();
/// let mut events = model.stream(&request);
/// let mut shown = String::new();
/// while let Some(event) = events.next().await {
///     match event.unwrap() {
///         ModelEvent::TextDelta(delta) => shown.push_str(&delta),
///         ModelEvent::Completed(response) => {
///             assert_eq!(response.text.as_deref(), Some(shown.as_str()));
///         }
///         _ => {}
///     }
/// }
/// assert_eq!(shown, "Hello!");
/// # });
/// ```
///
/// [`Model::stream`]: super::Model::stream
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ModelEvent {
    /// More of the text for the user, to append to what came before.
    TextDelta(String),
    /// The model began tool call number `index` (0, 1, 2, … in the order the calls start).
    ToolCallStarted {
        /// The call's position in [`ModelResponse::tool_calls`] of the final response.
        index: usize,
        /// The id the model gave the call.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of the arguments of call `index`, as raw JSON text to append to what came before.
    /// A fragment may end anywhere, inside a JSON token or a string.
    ToolCallDelta {
        /// The call, as numbered by its [`ModelEvent::ToolCallStarted`].
        index: usize,
        /// The next piece of the arguments' text.
        arguments: String,
    },
    /// The whole answer, assembled from the events before it: always the last event of a
    /// stream that succeeded.
    Completed(ModelResponse),
}

/// The stream of a model that only completes: the response of `complete`, told as events
/// (its text as one [`ModelEvent::TextDelta`], each tool call as a start and one delta with
/// all its arguments), then [`ModelEvent::Completed`] with the response itself. An error of
/// `complete` is the stream's only item.
pub(crate) fn from_complete<'a>(
    complete: BoxFuture<'a, Result<ModelResponse, ModelError>>,
) -> BoxStream<'a, Result<ModelEvent, ModelError>> {
    stream::once(complete)
        .flat_map(|result| {
            let events: Vec<Result<ModelEvent, ModelError>> = match result {
                Ok(response) => events(response).into_iter().map(Ok).collect(),
                Err(error) => vec![Err(error)],
            };
            stream::iter(events)
        })
        .fuse()
        .boxed()
}

/// `response` as the events a stream would have produced for it, ending with
/// [`ModelEvent::Completed`].
pub(crate) fn events(response: ModelResponse) -> Vec<ModelEvent> {
    let mut events = Vec::with_capacity(2 + 2 * response.tool_calls.len());
    if let Some(text) = response.text.as_ref().filter(|t| !t.is_empty()) {
        events.push(ModelEvent::TextDelta(text.clone()));
    }
    for (index, call) in response.tool_calls.iter().enumerate() {
        events.push(ModelEvent::ToolCallStarted {
            index,
            id: call.id.clone(),
            name: call.name.clone(),
        });
        // the model's own text (also when it was not JSON), or the value written out
        let arguments = call.arguments.to_json_text().into_owned();
        if !arguments.is_empty() {
            events.push(ModelEvent::ToolCallDelta { index, arguments });
        }
    }
    events.push(ModelEvent::Completed(response));
    events
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use serde_json::json;

    use crate::model::{Model, ModelEvent, ModelRequest, ModelResponse, ScriptedModel, ToolCall};
    use crate::model::{Usage, stream_events};

    #[tokio::test]
    async fn a_scripted_model_streams_its_response_then_completed() {
        let response = ModelResponse::tool_calls(vec![
            ToolCall::new("call_1", "lookup_order", json!({"order_id": "ORD-1042"})),
            ToolCall::new("call_2", "add", json!("{\"a\": 2,")),
        ])
        .with_text("Looking it up.")
        .with_usage(Usage::new(12, 7));
        let model = ScriptedModel::new(vec![response.clone()]);
        let request = ModelRequest::default();
        let events: Vec<_> = model.stream(&request).collect().await;
        let events: Vec<ModelEvent> = events.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            events,
            [
                ModelEvent::TextDelta("Looking it up.".into()),
                ModelEvent::ToolCallStarted {
                    index: 0,
                    id: "call_1".into(),
                    name: "lookup_order".into()
                },
                ModelEvent::ToolCallDelta {
                    index: 0,
                    arguments: r#"{"order_id":"ORD-1042"}"#.into()
                },
                ModelEvent::ToolCallStarted {
                    index: 1,
                    id: "call_2".into(),
                    name: "add".into()
                },
                // arguments kept as the model's text are handed over as that text
                ModelEvent::ToolCallDelta {
                    index: 1,
                    arguments: "{\"a\": 2,".into()
                },
                ModelEvent::Completed(response),
            ]
        );
        assert_eq!(model.requests(), [request]);
    }

    #[tokio::test]
    async fn a_text_response_is_one_delta_and_an_empty_one_none() {
        let model = ScriptedModel::new(vec![ModelResponse::text("Hi"), ModelResponse::default()]);
        let request = ModelRequest::default();
        for expected in [
            vec![
                ModelEvent::TextDelta("Hi".into()),
                ModelEvent::Completed(ModelResponse::text("Hi")),
            ],
            vec![ModelEvent::Completed(ModelResponse::default())],
        ] {
            let mut stream = model.stream(&request);
            let mut events = Vec::new();
            while let Some(event) = stream.next().await {
                events.push(event.unwrap());
            }
            assert_eq!(events, expected);
            assert!(stream.next().await.is_none(), "the stream stays ended");
        }
        assert_eq!(stream_events(ModelResponse::text("")).len(), 1);
    }

    #[tokio::test]
    async fn an_error_of_complete_is_the_only_item() {
        let model = ScriptedModel::new(Vec::new());
        let request = ModelRequest::default();
        let items: Vec<_> = model.stream(&request).collect().await;
        let [Err(error)] = &items[..] else {
            panic!("expected one error, got {items:?}");
        };
        assert!(error.message().contains("no response left"), "{error}");
    }
}
