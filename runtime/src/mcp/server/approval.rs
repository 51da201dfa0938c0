//! Approvals over MCP: a call of a tool that needs a person's approval, served by a server built
//! with [`elicit_approval`](super::McpServerBuilder::elicit_approval), is shown to the client's
//! user (`elicitation/create`: the tool, the arguments and their [`CallDigest`]) and runs only
//! when the user accepts with that digest. A decline, a cancel, another digest, no answer within
//! the wait, or a client that cannot ask its user refuses the call; it is never run.

use std::fmt;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, ContentBlock, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, ErrorCode, ErrorData, NumberOrString, PrimitiveSchemaDefinition,
    StringSchema,
};
use rmcp::service::{ElicitationMode, RequestContext, RoleServer};
use serde_json::Value;
use tokio::time::Instant;

use super::McpServer;
use super::ask::{self, AskError};
use super::call::{Answered, Request};
use crate::agent::CallDigest;
use crate::error::{ToolFailure, kinds};
use crate::in_place::FirstPoll;
use crate::render;
use crate::tool::CallSpan;

/// The property of the elicitation form that holds the digest of the call the user approves.
pub(super) const DIGEST_FIELD: &str = "digest";

/// A call of a tool that needs a person's approval, which the client's user did not approve:
/// it was not run. The model is shown `Tool 'NAME' was not approved` (or, when the client
/// cannot ask its user, that the tool needs an approval this client cannot give); the reason
/// is here, for the server's side ([`McpServerBuilder::on_failure`](super::McpServerBuilder::on_failure)).
#[derive(Clone, Debug, thiserror::Error)]
#[error("the call `{call_id}` of `{tool}` was not approved ({reason}); it was not run")]
#[non_exhaustive]
pub struct ApprovalRefused {
    /// The tool.
    pub tool: String,
    /// The call's id (the request's).
    pub call_id: String,
    /// The digest of the call as the user was shown it.
    pub digest: CallDigest,
    /// Why the call was not approved.
    pub reason: RefusalReason,
}

/// Why a call was not approved over MCP.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusalReason {
    /// The user declined.
    Declined,
    /// The user dismissed the question without a choice.
    Cancelled,
    /// The client accepted, but not with the digest of this call: the user approved another
    /// call, or nothing that names one.
    Mismatch,
    /// No answer came within the wait the server allows.
    NoAnswer(Duration),
    /// The client cannot ask its user: it declared no form elicitation, or its protocol
    /// (2026-07-28 and later) allows the server no requests of its own.
    CannotAsk,
    /// The question could not be asked or its answer not read; the error, as rmcp gave it.
    Failed(String),
}

impl fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Declined => f.write_str("the user declined"),
            Self::Cancelled => f.write_str("the user dismissed the question"),
            Self::Mismatch => f.write_str("the answer does not name this call's digest"),
            Self::NoAnswer(wait) => {
                write!(f, "no answer within {}", render::format_duration(*wait))
            }
            Self::CannotAsk => f.write_str("the client cannot ask its user"),
            Self::Failed(error) => write!(f, "the question failed: {error}"),
        }
    }
}

impl McpServer {
    /// Whether a call of `name` waits for the client's user's approval before it runs.
    #[inline(always)]
    pub(super) fn asks_approval(&self, name: &str) -> bool {
        self.inner.approval_wait.is_some()
            && self
                .inner
                .tools
                .find(name)
                .is_some_and(|(_, _, tool)| tool.needs_approval())
    }

    /// Asks the client's user to approve `request`, then answers it: run as any call when
    /// approved, refused otherwise.
    pub(super) fn approve_then_call<R: From<CallToolResult> + Send + 'static>(
        &self,
        request: Request,
    ) -> FirstPoll<'_, Answered<R>> {
        FirstPoll::Running(Box::pin(async move {
            let (name, arguments, context) = request;
            if let Err(refused) = self.approve(&name, &arguments, &context).await {
                return refused.map(R::from);
            }
            let mut request = Some((name, arguments, context));
            let started = std::future::poll_fn(|task| {
                let (name, arguments, context) = request.take().expect("polled once: ready");
                Poll::Ready(self.begin(&name, arguments, &context, task))
            })
            .await;
            match started {
                FirstPoll::Done(answered) => answered,
                FirstPoll::Running(running) => running.await,
            }
        }))
    }

    /// `Ok` when the client's user approved this very call; otherwise the answer the client is
    /// sent: the refusal, or the error of a request the client cancelled meanwhile.
    async fn approve(
        &self,
        name: &str,
        arguments: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), Answered> {
        let start = Instant::now();
        // Arguments sent as JSON text are shown as the JSON they hold; text that is not JSON
        // is an argument error, and the call never runs: there is nothing to approve.
        let parsed;
        let shown = match arguments {
            Value::String(text) => match serde_json::from_str::<Value>(text) {
                Ok(value) => {
                    parsed = value;
                    &parsed
                }
                Err(_) => return Ok(()),
            },
            arguments => arguments,
        };
        let digest = CallDigest::of(name, shown);
        let wait = self.inner.approval_wait.unwrap_or_default();
        let reason = if can_ask(context) {
            tokio::select! {
                answer = ask::elicit(&context.peer, question(name, shown, digest), wait) => {
                    match answer {
                        Ok(answer) => match verdict(&answer, digest) {
                            None => return Ok(()),
                            Some(reason) => reason,
                        },
                        Err(AskError::NoAnswer(wait)) => RefusalReason::NoAnswer(wait),
                        Err(error) => RefusalReason::Failed(failed(&error)),
                    }
                },
                // The client cancelled the call, or left: nobody waits for the answer.
                () = context.ct.cancelled() => return Err(Err(cancelled())),
                () = self.session.closed.cancelled() => return Err(Err(cancelled())),
            }
        } else if self.inner.trust_client_approval {
            // As before elicitation: the client is trusted to have asked.
            return Ok(());
        } else {
            RefusalReason::CannotAsk
        };
        Err(Ok(
            self.refuse(name, arguments, context, digest, reason, start)
        ))
    }

    /// The result of a call that was not approved, reported to the server's side.
    fn refuse(
        &self,
        name: &str,
        arguments: &Value,
        context: &RequestContext<RoleServer>,
        digest: CallDigest,
        reason: RefusalReason,
        start: Instant,
    ) -> CallToolResult {
        let call_id = match &context.id {
            NumberOrString::Number(n) => n.to_string(),
            NumberOrString::String(s) => s.to_string(),
        };
        let shown = match reason {
            RefusalReason::CannotAsk => render::approval_unavailable(name),
            _ => render::not_approved(name),
        };
        let error = ApprovalRefused {
            tool: name.to_owned(),
            call_id: call_id.clone(),
            digest,
            reason,
        };
        let mut failure =
            ToolFailure::new(name, &call_id, kinds::NOT_APPROVED, Arc::new(error), shown);
        if !self.inner.on_failure.is_empty() {
            failure.arguments = arguments.clone();
        }
        failure.elapsed = start.elapsed();
        let span = CallSpan::new(name, &call_id);
        self.report(&span, &failure);
        CallToolResult::error(vec![ContentBlock::text(failure.shown_to_model)])
    }
}

/// Whether the client of `context` can be asked a question: it declared form elicitation, and
/// its protocol allows the server requests of its own.
fn can_ask(context: &RequestContext<RoleServer>) -> bool {
    !super::session::modern(context)
        && context
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
}

/// The question the client's user is asked: the call, its digest, and a form whose one field
/// holds the digest (filled in), which the user accepts to approve exactly this call.
fn question(name: &str, arguments: &Value, digest: CallDigest) -> ElicitRequestParams {
    let arguments = serde_json::to_string_pretty(arguments).unwrap_or_default();
    let message = format!(
        "Approve this call of the tool `{name}`? It runs only if you accept.\n\n\
         Arguments:\n{arguments}\n\n\
         Digest of the tool and its arguments (SHA-256): {digest}"
    );
    let field = StringSchema::new()
        .title("Call digest")
        .description(
            "The digest of the call shown above. Accept it as it is to run exactly this call.",
        )
        .length(64, 64)
        .with_default(digest.to_string());
    let schema = ElicitationSchema::builder()
        .required_property(DIGEST_FIELD, PrimitiveSchemaDefinition::String(field))
        .build_unchecked();
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    }
}

/// `None` when `answer` approves the call whose digest is `digest`; otherwise why not.
fn verdict(answer: &ElicitResult, digest: CallDigest) -> Option<RefusalReason> {
    match answer.action {
        ElicitationAction::Accept => {
            let named = answer
                .content
                .as_ref()
                .and_then(|content| content.get(DIGEST_FIELD))
                .and_then(Value::as_str)
                .and_then(|text| text.parse::<CallDigest>().ok());
            (named != Some(digest)).then_some(RefusalReason::Mismatch)
        }
        ElicitationAction::Decline => Some(RefusalReason::Declined),
        ElicitationAction::Cancel => Some(RefusalReason::Cancelled),
        // An action this version does not know approves nothing.
        _ => Some(RefusalReason::Mismatch),
    }
}

/// `error` and its sources, for the server's side.
fn failed(error: &AskError) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(error) = source {
        text.push_str(": ");
        text.push_str(&error.to_string());
        source = error.source();
    }
    text
}

/// The error of a call whose request was cancelled while its user was asked; the transport
/// drops it, as the protocol says.
fn cancelled() -> ErrorData {
    ErrorData::new(ErrorCode::INTERNAL_ERROR, "the request was cancelled", None)
}
