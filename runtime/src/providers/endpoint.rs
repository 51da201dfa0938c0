//! What a provider is: a [`Wire`] format (the request body, the URL and headers, the decoding
//! of a whole response and of its event stream) and its settings, held by an [`Endpoint`] that
//! does the rest the same way for every provider: the key, the model name, the base URL, the
//! caller's extra body fields, the HTTP transport with its timeout, retries and limits, the
//! bound on tool calls, and streaming through [`post_stream`].
//!
//! A provider's public type holds an `Endpoint<ItsWire>` named `endpoint` and gets its shared
//! builder methods from [`transport_setters!`](super::http::transport_setters) and
//! [`endpoint_setters!`] (`from_env`, `base_url`, `model`), and its
//! [`Model`](crate::Model) and `Debug` implementations from [`endpoint_model!`]. A setting
//! added to the [`Transport`] (and its setter to the macro) applies to every provider at once.
//! docs/providers.md has the checklist of what a new provider writes and tests.

use std::fmt;

use futures::stream::BoxStream;
use reqwest::header::HeaderMap;
use serde_json::{Map, Value};

use super::http::{Transport, tool_calls_within};
use super::stream::{Decode, post_stream};
use crate::model::{ModelError, ModelEvent, ModelRequest, ModelResponse, SchemaDialect};
use crate::secret::Secret;

/// One API's wire format and the settings that shape it (strict mode, `max_tokens`, caching).
pub(crate) trait Wire: fmt::Debug + Clone + Send + Sync + 'static {
    /// Reads the API's event stream, and a whole response body ([`Decode::parse_whole`]).
    type Events: Decode;

    /// Where a request for `model` goes, at `base_url`; `stream` for a streamed one.
    fn url(&self, base_url: &str, model: &str, stream: bool) -> String;

    /// The request's authentication and version headers, the key in a sensitive value
    /// ([`secret_header`](super::http::secret_header)).
    fn headers(&self, api_key: &Secret<String>) -> Result<HeaderMap, ModelError>;

    /// The request body for `request` to `model`; `stream` asks for server-sent events. The
    /// caller's extra fields are set over it afterwards.
    fn body(&self, model: &str, request: &ModelRequest, stream: bool) -> Map<String, Value>;

    /// The schema dialect the API's tool definitions take.
    fn schema_dialect(&self) -> SchemaDialect;
}

/// A provider's settings and the shared machinery that sends its requests.
#[derive(Clone)]
pub(crate) struct Endpoint<W> {
    pub(crate) api_key: Secret<String>,
    pub(crate) model: String,
    pub(crate) base_url: String,
    /// Top-level body fields the caller set, over what the wire format writes.
    pub(crate) params: Map<String, Value>,
    pub(crate) transport: Transport,
    pub(crate) wire: W,
}

impl<W: Wire> Endpoint<W> {
    pub(crate) fn new(api_key: String, model: String, base_url: &str, wire: W) -> Self {
        Self {
            api_key: Secret::new(api_key),
            model,
            base_url: base_url.to_owned(),
            params: Map::new(),
            transport: Transport::new(),
            wire,
        }
    }

    /// The headers and the encoded body of the request for `request`.
    pub(crate) fn prepare(
        &self,
        request: &ModelRequest,
        stream: bool,
    ) -> Result<(HeaderMap, Vec<u8>), ModelError> {
        let headers = self.wire.headers(&self.api_key)?;
        let mut body = self.wire.body(&self.model, request, stream);
        for (name, value) in &self.params {
            body.insert(name.clone(), value.clone());
        }
        let body = serde_json::to_vec(&Value::Object(body))
            .map_err(|e| ModelError::new("could not encode the request").with_source(e))?;
        Ok((headers, body))
    }

    /// Sends the request and reads the whole response.
    pub(crate) async fn complete(
        &self,
        request: &ModelRequest,
    ) -> Result<ModelResponse, ModelError> {
        let (headers, body) = self.prepare(request, false)?;
        let url = self.wire.url(&self.base_url, &self.model, false);
        let response = self
            .transport
            .post_json(&url, headers, body, &self.api_key)
            .await?;
        tool_calls_within(
            W::Events::parse_whole(&response)?,
            self.transport.max_tool_calls,
        )
    }

    /// Sends the request and streams the answer.
    pub(crate) fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxStream<'a, Result<ModelEvent, ModelError>> {
        let prepared = self.prepare(request, true);
        let url = self.wire.url(&self.base_url, &self.model, true);
        post_stream::<W::Events>(&self.transport, url, prepared, &self.api_key)
    }

    /// `Debug` of the provider `name`: never the key's value, nor the values of extra fields.
    pub(crate) fn debug(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(name)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key)
            .field("wire", &self.wire)
            .field("params", &self.params.keys().collect::<Vec<_>>())
            .field("transport", &self.transport)
            .finish()
    }
}

/// `Model` and `Debug` for a provider type `$name` that holds an `Endpoint` named `endpoint`.
macro_rules! endpoint_model {
    ($name:ident) => {
        impl $crate::model::Model for $name {
            fn complete<'a>(
                &'a self,
                request: &'a $crate::model::ModelRequest,
            ) -> futures::future::BoxFuture<
                'a,
                Result<$crate::model::ModelResponse, $crate::model::ModelError>,
            > {
                Box::pin(self.endpoint.complete(request))
            }

            /// Streams the answer from the API's server-sent events; see
            /// [`Model::stream`](crate::Model::stream) for what the stream holds.
            fn stream<'a>(
                &'a self,
                request: &'a $crate::model::ModelRequest,
            ) -> futures::stream::BoxStream<
                'a,
                Result<$crate::model::ModelEvent, $crate::model::ModelError>,
            > {
                self.endpoint.stream(request)
            }

            fn schema_dialect(&self) -> $crate::model::SchemaDialect {
                super::endpoint::Wire::schema_dialect(&self.endpoint.wire)
            }

            /// The provider's retry settings: the agent loop retries a broken turn with
            /// them, within the same budget.
            fn retry_policy(&self) -> Option<$crate::model::RetryPolicy> {
                Some(self.endpoint.transport.retry_policy())
            }
        }

        #[cfg(feature = "testing")]
        impl $name {
            /// The body of the request this provider sends for `request` (`stream`: the
            /// streamed form), encoded by its own code: what `reticent::testing` reads.
            pub(crate) fn request_body(
                &self,
                request: &$crate::model::ModelRequest,
                stream: bool,
            ) -> Result<Vec<u8>, $crate::model::ModelError> {
                self.endpoint.prepare(request, stream).map(|(_, body)| body)
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.endpoint.debug(stringify!($name), f)
            }
        }
    };
}
pub(crate) use endpoint_model;

/// The builder methods every provider shares that name its own variables and endpoint:
/// `from_env` (reading `$key` and `$base`; with `key_optional`, a base URL without a key is
/// enough, for servers that need none), `base_url` (documented with `$endpoint`, what the
/// base URL includes and where requests go) and `model`.
macro_rules! endpoint_setters {
    (key: $key:literal, base: $base:literal, key_optional: $optional:tt, endpoint: $endpoint:literal $(,)?) => {
        #[doc = concat!(
            "The model `model`, with the key from `", $key, "` and the endpoint from `", $base,
            "` (default [`Self::DEFAULT_BASE_URL`]).",
            $crate::providers::endpoint::endpoint_setters!(@optional $optional),
        )]
        pub fn from_env(model: impl Into<String>) -> Result<Self, super::ConfigError> {
            Self::from_lookup(&model.into(), &super::env)
        }

        pub(super) fn from_lookup(
            model: &str,
            lookup: &dyn Fn(&str) -> Option<String>,
        ) -> Result<Self, super::ConfigError> {
            let (api_key, base_url) =
                super::endpoint::key_and_base_url(lookup, $key, $base, $optional)?;
            let model = Self::new(api_key, model);
            Ok(match base_url {
                Some(url) => model.base_url(url),
                None => model,
            })
        }

        #[doc = $endpoint]
        #[must_use]
        pub fn base_url(mut self, url: impl Into<String>) -> Self {
            self.endpoint.base_url = url.into();
            self
        }

        /// The model's name.
        pub fn model(&self) -> &str {
            &self.endpoint.model
        }
    };
    (@optional true) => {
        " The key may be missing only when a base URL is set, for servers that need none."
    };
    (@optional false) => {
        ""
    };
}
pub(crate) use endpoint_setters;

/// The key and base URL of a provider from `lookup`: `key_var` and `base_var`. Without a key,
/// a base URL is enough when `key_optional_with_base_url` (servers that need none).
pub(crate) fn key_and_base_url(
    lookup: &dyn Fn(&str) -> Option<String>,
    key_var: &str,
    base_var: &str,
    key_optional_with_base_url: bool,
) -> Result<(String, Option<String>), super::ConfigError> {
    let base_url = lookup(base_var);
    match (lookup(key_var), &base_url) {
        (Some(key), _) => Ok((key, base_url)),
        (None, Some(_)) if key_optional_with_base_url => Ok((String::new(), base_url)),
        _ => Err(super::ConfigError::MissingEnv {
            var: key_var.to_owned(),
        }),
    }
}
