//! rmcp's HTTP client (reqwest), checked: an answer to a request that rmcp cannot read fails
//! that request instead of leaving it waiting. Each request is a POST, and its answer comes
//! in that POST's response, so an answer here is always tied to its request:
//!
//! - a response stream event that does not decode (rmcp skips it and goes on waiting) is
//!   replaced with an error answer for the request;
//! - a response rmcp refuses — a JSON body that does not decode or is over the client's
//!   `max_message_size`, a body that is neither JSON nor a stream — fails the request with an
//!   error answer too, rather than as a transport error that would read as a lost connection.
//!
//! An event over `max_message_size` ends rmcp's reading of the stream, and rmcp then fails
//! the request as disconnected at once; streams that are not a request's own (the session's,
//! a resumed one) are left to rmcp and to the client's timeouts. rmcp's client reads a JSON
//! body and an event up to the limit and no further, so neither is held whole past it.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::unreadable::Marker;

/// An HTTP client whose requests' unreadable answers fail them.
#[derive(Clone, Debug)]
pub(super) struct Checked<C> {
    inner: C,
    marker: Marker,
}

impl<C> Checked<C> {
    pub(super) fn new(inner: C, marker: Marker) -> Self {
        Self { inner, marker }
    }
}

type Posted<E> = Result<StreamableHttpPostResponse, StreamableHttpError<E>>;

impl<C: StreamableHttpClient + Sync> Checked<C> {
    /// The response to a POST of the request `id` (`None` for what is not a request), with
    /// what cannot be read of its answer turned into an error answer.
    async fn check(
        &self,
        id: Option<RequestId>,
        posted: impl Future<Output = Posted<C::Error>>,
    ) -> Posted<C::Error> {
        let response = posted.await;
        let Some(id) = id else { return response };
        let marker = self.marker;
        match response {
            Ok(StreamableHttpPostResponse::Sse(events, session)) => {
                let events = events.map(move |event| {
                    event.map(|mut event| {
                        let message = matches!(event.event.as_deref(), None | Some("" | "message"));
                        if message
                            && let Some(data) = &event.data
                            // an event with no data (a stream's first, to resume from) is
                            // no message, and rmcp passes over it
                            && !data.trim().is_empty()
                            && let Err(error) = serde_json::from_str::<ServerJsonRpcMessage>(data)
                        {
                            let reason = format!(
                                "an event of the answer's stream is not a JSON-RPC message \
                                 ({error})"
                            );
                            tracing::warn!(%id, reason, "an answer from the MCP server does not decode");
                            let answer = marker.answer(id.clone(), reason);
                            event.data = serde_json::to_string(&answer).ok();
                        }
                        event
                    })
                });
                Ok(StreamableHttpPostResponse::Sse(events.boxed(), session))
            }
            Err(
                error @ (StreamableHttpError::UnexpectedServerResponse(_)
                | StreamableHttpError::ResponseBodyTooLarge { .. }
                | StreamableHttpError::Deserialize(_)
                | StreamableHttpError::UnexpectedContentType(_)),
            ) => {
                let reason = error.to_string();
                tracing::warn!(%id, reason, "an answer from the MCP server cannot be read");
                Ok(StreamableHttpPostResponse::Json(
                    marker.answer(id, reason),
                    None,
                ))
            }
            response => response,
        }
    }
}

/// The id of `message` if it is a request.
fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for Checked<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Posted<Self::Error> {
        let id = request_id(&message);
        let posted = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers);
        self.check(id, posted).await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Posted<Self::Error> {
        let id = request_id(&message);
        let posted = self.inner.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        self.check(id, posted).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Posted<Self::Error> {
        let id = request_id(&message);
        let posted = self.inner.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        );
        self.check(id, posted).await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, StreamableHttpError<Self::Error>> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, StreamableHttpError<Self::Error>> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
