//! [`RemoteTool`]: one tool of an MCP server, as a [`Tool`] like any other. Its arguments are
//! checked against its input schema here, before the call; while it runs, the server's progress
//! and log lines for it go to its context ([`notes`](super::notes)); a call the server answers
//! with a task is followed to its end ([`task`](super::task)); the server's answer is turned
//! into the tool's output or classified as a failure.

use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientNotification, ClientRequest, ContentBlock, RequestId,
    ResourceContents, ServerResult, Tool as McpTool, ToolAnnotations as McpAnnotations,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::child::ChildProcess;
use super::error::{McpCallError, McpClientError, McpToolError};
use super::notes::Routes;
use super::task::{self, Followed, Lost};
use super::unreadable::Marker;
use crate::content::{self, Block};
use crate::error::{ArgumentError, EffectOutcome, Failure, ToolError};
use crate::tool::{
    ArgumentValidator, Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolFuture,
};

/// What the tools of one client share: the connection and the client's settings.
pub(super) struct Connection {
    pub(super) peer: Peer<RoleClient>,
    /// The server, as errors name it.
    pub(super) server: Arc<str>,
    /// The kind the model is shown for a tool error.
    pub(super) kind: &'static str,
    pub(super) include_error_message: bool,
    pub(super) trusted_output: bool,
    /// How long a call may take: [`Tool::timeout`].
    pub(super) timeout: Duration,
    /// How long a call may go without an answer or progress, when that is bounded too.
    pub(super) idle_timeout: Option<Duration>,
    /// The output budget of the client's tools: [`Tool::max_output`].
    pub(super) max_output: Option<usize>,
    /// Where the server's progress and log lines go.
    pub(super) routes: Arc<Routes>,
    /// Cancelled when the client is closed or dropped.
    pub(super) closed: CancellationToken,
    /// The server's process, to ask how it ended; the client owns it.
    pub(super) process: Option<Weak<ChildProcess>>,
    /// The mark of the transport's errors for answers it could not read.
    pub(super) marker: Marker,
}

/// How long after its [`Tool::timeout`] a call made outside an agent or a server gives up.
/// The agent and the server apply that limit themselves, from before the call starts; this
/// one ends later, so that theirs ends the call first and reports it as a timeout.
const AFTER_OWN_LIMIT: Duration = Duration::from_secs(1);

/// How a call ended without a result.
enum Ended {
    /// The client was closed during the call.
    Closed,
    Service(ServiceError),
    /// Neither an answer nor progress for this long.
    Silent(Duration),
    /// The call was answered with a task, which ended without the call's result.
    Task(Lost),
}

/// Tells the server a call nobody waits for any more is cancelled, when it is dropped before
/// the answer came.
struct Abandoned<'a> {
    peer: &'a Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        let cancelled = CancelledNotification::new(CancelledNotificationParam::new(
            Some(id),
            Some("the call was abandoned".to_owned()),
        ));
        runtime.spawn(async move {
            let notification = ClientNotification::CancelledNotification(cancelled);
            let _ = peer.send_notification(notification).await;
        });
    }
}

/// One tool of an MCP server.
pub(super) struct RemoteTool {
    definition: ToolDefinition,
    /// The tool's name on the server.
    remote: Arc<str>,
    /// The whole input schema: the server's tool has no types of its own here.
    validator: Arc<ArgumentValidator>,
    connection: Arc<Connection>,
}

impl RemoteTool {
    /// The tool `listed` by the server, named `name` here. Its input schema must be an object
    /// schema the validator compiles.
    pub(super) fn new(
        listed: McpTool,
        name: String,
        connection: &Arc<Connection>,
    ) -> Result<Self, McpClientError> {
        let invalid = |reason: String| McpClientError::InvalidSchema {
            server: connection.server.to_string(),
            remote: listed.name.to_string(),
            reason,
        };
        let parameters = Value::Object((*listed.input_schema).clone());
        if parameters.get("type") != Some(&Value::from("object")) {
            return Err(invalid(
                "its root is not an object schema (`\"type\": \"object\"`)".to_owned(),
            ));
        }
        let validator = ArgumentValidator::complete(&parameters)
            .map_err(|error| invalid(error.reason().to_owned()))?;
        let title = listed
            .title
            .clone()
            .or_else(|| listed.annotations.as_ref().and_then(|a| a.title.clone()));
        let description = match (listed.description, &title) {
            (Some(description), _) => description.into_owned(),
            (None, Some(title)) => title.clone(),
            (None, None) => String::new(),
        };
        let mut definition = ToolDefinition::new(name, description, parameters)
            .with_annotations(annotations(listed.annotations.as_ref()));
        if let Some(title) = title {
            definition = definition.with_title(title);
        }
        if let Some(schema) = listed.output_schema {
            definition = definition.with_output_schema(Value::Object((*schema).clone()));
        }
        Ok(Self {
            definition,
            remote: Arc::from(&*listed.name),
            validator: Arc::new(validator),
            connection: Arc::clone(connection),
        })
    }

    async fn run(&self, arguments: Value, cx: ToolContext) -> Result<Value, ToolError> {
        // an argument error naming each violation's path and what the schema asks; a costly
        // check (the server chose the patterns) on the blocking pool, under the call's limit
        let arguments = self.validator.check_owned(arguments).await?;
        let Value::Object(arguments) = arguments else {
            // The schema's root is an object schema, so this was refused above.
            return Err(ArgumentError::new("the arguments must be a JSON object").into());
        };
        let connection = &*self.connection;
        if connection.closed.is_cancelled() {
            return Err(self.failed(McpCallError::Closed {
                server: connection.server.to_string(),
                tool: self.remote.to_string(),
            }));
        }
        let params = CallToolRequestParams::new(self.remote.to_string()).with_arguments(arguments);
        // Dropping the exchange before the server answers sends `notifications/cancelled`: on
        // cancellation here, on a timeout (here, or the caller drops this future), and when
        // the run is cancelled.
        let wait = connection.timeout.saturating_add(AFTER_OWN_LIMIT);
        let result = tokio::select! {
            biased;
            () = cx.cancellation().cancelled() => {
                return Err(self.failed(McpCallError::Cancelled {
                    server: connection.server.to_string(),
                    tool: self.remote.to_string(),
                }));
            }
            () = connection.closed.cancelled() => Err(Ended::Closed),
            result = self.exchange(params, &cx) => result,
            () = tokio::time::sleep(wait) => {
                return Err(self.failed(McpCallError::TimedOut {
                    server: connection.server.to_string(),
                    tool: self.remote.to_string(),
                    timeout: wait,
                }));
            }
        };
        match result {
            Ok(result) if result.is_error == Some(true) => Err(self.tool_error(result)),
            Ok(result) => Ok(output(result)),
            Err(Ended::Closed) => Err(self.call_error(None).await),
            Err(Ended::Service(error)) => Err(self.call_error(Some(error)).await),
            Err(Ended::Silent(idle)) => Err(self.failed(McpCallError::Silent {
                server: connection.server.to_string(),
                tool: self.remote.to_string(),
                idle,
            })),
            Err(Ended::Task(lost)) => {
                let (reason, source) = match lost {
                    Lost::Failed(error) => ("the task failed", Some(ServiceError::McpError(error))),
                    Lost::Cancelled => ("the server cancelled the task", None),
                    Lost::Unknown(error) => ("the server no longer knows the task", Some(error)),
                    Lost::Unreadable => ("the task's answer is not a tool result", None),
                };
                Err(self.failed(McpCallError::TaskEnded {
                    server: connection.server.to_string(),
                    tool: self.remote.to_string(),
                    reason,
                    source,
                }))
            }
        }
    }

    /// Sends the call with a progress token, and waits for its answer while the server's
    /// progress and log lines for it go to `cx`. With an idle timeout, progress that moves
    /// the call on restarts it; the call's own limit is the caller's to apply.
    async fn exchange(
        &self,
        params: CallToolRequestParams,
        cx: &ToolContext,
    ) -> Result<CallToolResult, Ended> {
        let connection = &*self.connection;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        // The call's idempotency key, in `_meta`: a server that reads it (as `McpServer` does)
        // gives the call the same key however often it is sent.
        let mut meta = rmcp::model::RequestMetaObject::default();
        meta.0.insert(
            crate::tool::idempotency::META_KEY.to_owned(),
            Value::from(cx.idempotency_key()),
        );
        let mut options = PeerRequestOptions::no_options();
        options.meta = Some(meta);
        // rmcp gives every request a progress token of its own.
        let handle = connection
            .peer
            .send_request_with_option(request, options)
            .await
            .map_err(Ended::Service)?;
        let watch = connection.routes.watch(handle.progress_token.clone(), cx);
        let mut abandoned = Abandoned {
            peer: &connection.peer,
            id: Some(handle.id.clone()),
        };
        let answer = handle.await_response();
        let mut answer = std::pin::pin!(answer);
        let idle = connection.idle_timeout;
        let silence = tokio::time::sleep(idle.unwrap_or(Duration::MAX));
        let mut silence = std::pin::pin!(silence);
        let answered = loop {
            tokio::select! {
                biased;
                answered = &mut answer => break answered,
                () = watch.heard() => {
                    if let Some(idle) = idle {
                        silence.as_mut().reset(tokio::time::Instant::now() + idle);
                    }
                }
                () = &mut silence, if idle.is_some() => {
                    return Err(Ended::Silent(idle.unwrap_or_default()));
                }
            }
        };
        abandoned.id = None;
        match answered.map_err(Ended::Service)? {
            ServerResult::CallToolResult(result) => Ok(result),
            // The server runs the call as a task: followed here, cancelled if dropped.
            ServerResult::CreateTaskResult(created) => {
                match task::follow(&connection.peer, created.task, &watch, idle).await {
                    Followed::Result(result) => Ok(result),
                    Followed::Lost(lost) => Err(Ended::Task(lost)),
                    Followed::Service(error) => Err(Ended::Service(error)),
                    Followed::Silent(idle) => Err(Ended::Silent(idle)),
                }
            }
            _ => Err(Ended::Service(ServiceError::UnexpectedResponse)),
        }
    }

    /// A result with `isError: true`: the kind for the model, unless the client opted in to
    /// show the server's text; the text for the caller.
    fn tool_error(&self, result: CallToolResult) -> ToolError {
        let mut content = content_text(&result.content);
        if content.is_empty()
            && let Some(structured) = &result.structured_content
        {
            content = structured.to_string();
        }
        let error = McpToolError {
            server: Arc::clone(&self.connection.server),
            tool: Arc::clone(&self.remote),
            content,
            structured_content: result.structured_content,
            kind: self.connection.kind,
        };
        let failure = Failure::new(error.kind, error);
        ToolError::Failed(if self.connection.include_error_message {
            failure.show_message()
        } else {
            failure
        })
    }

    /// A call that got no result; `None` when the client was closed during the call.
    async fn call_error(&self, error: Option<ServiceError>) -> ToolError {
        let server = self.connection.server.to_string();
        let tool = self.remote.to_string();
        let error = match error {
            None => McpCallError::Disconnected {
                server,
                tool,
                exit_status: None,
                source: None,
            },
            Some(error @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                let process = self.connection.process.as_ref().and_then(Weak::upgrade);
                let exit_status = match process {
                    Some(process) => process.exit_status().await,
                    None => None,
                };
                McpCallError::Disconnected {
                    server,
                    tool,
                    exit_status,
                    source: Some(error),
                }
            }
            Some(ServiceError::Cancelled { .. }) => McpCallError::Cancelled { server, tool },
            Some(error) => match self.connection.marker.reason(&error).map(str::to_owned) {
                Some(reason) => McpCallError::Unreadable {
                    server,
                    tool,
                    source: reason.into(),
                },
                None => McpCallError::Protocol {
                    server,
                    tool,
                    source: error,
                },
            },
        };
        self.failed(error)
    }

    fn failed(&self, error: McpCallError) -> ToolError {
        let effect = if error.effect_unknown() {
            EffectOutcome::Unknown
        } else {
            EffectOutcome::Failed
        };
        ToolError::Failed(Failure::new(error.kind(), error).with_effect(effect))
    }
}

impl Tool for RemoteTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(&self, args: Value, cx: ToolContext) -> ToolFuture<'_> {
        ToolFuture::new(self.run(args, cx))
    }

    fn timeout(&self) -> Option<Duration> {
        Some(self.connection.timeout)
    }

    fn untrusted_output(&self) -> bool {
        !self.connection.trusted_output
    }

    fn max_output(&self) -> Option<usize> {
        self.connection.max_output
    }
}

/// The server's hints, with MCP's defaults for absent ones: not read-only, destructive, not
/// idempotent, open-world. A read-only tool is never destructive (MCP: `destructiveHint` is
/// meaningful only when `readOnlyHint` is false).
fn annotations(hints: Option<&McpAnnotations>) -> ToolAnnotations {
    let hint = |get: fn(&McpAnnotations) -> Option<bool>, default: bool| {
        hints.and_then(get).unwrap_or(default)
    };
    let read_only = hint(|a| a.read_only_hint, false);
    ToolAnnotations {
        read_only,
        destructive: !read_only && hint(|a| a.destructive_hint, true),
        idempotent: hint(|a| a.idempotent_hint, false),
        open_world: hint(|a| a.open_world_hint, true),
    }
}

/// A successful result as the tool's output: its `structuredContent` when it has one (the
/// model is shown it as JSON), otherwise its content as text.
fn output(result: CallToolResult) -> Value {
    match result.structured_content {
        Some(structured) => structured,
        None => Value::String(content_text(&result.content)),
    }
}

/// The content blocks as the model is shown them (`content::described`, as a local content
/// tool's): text as it is (an embedded text resource too); images, audio and binary resources
/// as a note of what they are and their size; resource links as their name and URI; content of
/// a type added to MCP later as a note that it is not shown.
fn content_text(blocks: &[ContentBlock]) -> String {
    content::described(blocks.iter().map(|block| match block {
        ContentBlock::Text(text) => Block::Text(&text.text),
        ContentBlock::Image(image) => Block::Binary {
            what: "image",
            uri: None,
            mime_type: Some(&image.mime_type),
            bytes: content::decoded_len(&image.data),
        },
        ContentBlock::Audio(audio) => Block::Binary {
            what: "audio",
            uri: None,
            mime_type: Some(&audio.mime_type),
            bytes: content::decoded_len(&audio.data),
        },
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => Block::Text(text),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => Block::Binary {
                what: "resource",
                uri: Some(uri),
                mime_type: mime_type.as_deref(),
                bytes: content::decoded_len(blob),
            },
            _ => Block::Unknown,
        },
        ContentBlock::ResourceLink(link) => Block::Link {
            name: &link.name,
            uri: &link.uri,
        },
        _ => Block::Unknown,
    }))
}
