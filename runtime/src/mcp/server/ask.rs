//! A tool asks the MCP client that made its call: its user ([`ToolContext::elicit`],
//! `elicitation/create`) or its model ([`ToolContext::sample`], `sampling/createMessage`). Every
//! wait has a bound, and a call that is abandoned stops waiting.
#![allow(deprecated)] // sampling is deprecated by the 2026-07-28 protocol (SEP-2577), still in use.

use std::future::Future;
use std::time::Duration;

use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema,
};
use rmcp::service::{ElicitationMode, Peer, RoleServer, ServiceError};
use serde_json::Value;

use crate::ToolContext;
use crate::error::BoxError;
use crate::render;

/// What the client's user answered a question ([`ToolContext::elicit`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Elicited {
    /// The user answered with this content. It comes from outside: the client should have
    /// checked it against the form's schema, and the tool checks it again.
    Accepted(Value),
    /// The user declined to answer.
    Declined,
    /// The user dismissed the question without a choice.
    Cancelled,
}

/// Why a tool could not ask the client that made its call.
///
/// A tool that returns it fails as any tool does: the model is shown its type name
/// (`AskError`), the caller all of it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The call was not made by an MCP client (an agent's own call, say): nobody to ask.
    #[error("the call was not made by an MCP client: there is nobody to ask")]
    NoClient,
    /// The client did not declare the capability the question needs (`elicitation` in form
    /// mode, or `sampling`).
    #[error("the MCP client cannot be asked this: it declared no `{0}` capability")]
    NotSupported(&'static str),
    /// No answer came within the wait.
    #[error("the MCP client did not answer within {}", render::format_duration(*.0))]
    NoAnswer(Duration),
    /// The call was abandoned (cancelled, or out of time) while it waited.
    #[error("the call was abandoned while it waited for the MCP client's answer")]
    Abandoned,
    /// The request failed, or the client answered it with an error.
    #[error("the request to the MCP client failed")]
    Failed(#[source] BoxError),
}

impl ToolContext {
    /// Asks the user of the MCP client that made this call a question (`elicitation/create`
    /// in form mode): `message`, and a form described by `schema` (build one with
    /// [`ElicitationSchema::builder`], or from a JSON Schema with
    /// [`ElicitationSchema::from_json_schema`]). Waits up to `wait` for the answer, and stops
    /// waiting when the call is abandoned.
    ///
    /// With the `mcp` feature. Works only in a call an [`McpServer`](crate::mcp::McpServer)
    /// serves, to a client that declared form elicitation on a protocol that allows the
    /// server requests of its own (before 2026-07-28); otherwise it is an [`AskError`] at once.
    ///
    /// ```
    /// use std::time::Duration;
    /// use reticent::ToolContext;
    /// use reticent::mcp::{AskError, Elicited};
    /// use reticent::mcp::rmcp::model::ElicitationSchema;
    ///
    /// /// Book a table, asking the user for the party's size.
    /// #[reticent::tool]
    /// async fn book(restaurant: String, cx: &ToolContext) -> Result<String, AskError> {
    ///     let form = ElicitationSchema::builder().required_integer("people", 1, 12).build_unchecked();
    ///     let question = format!("How many people for {restaurant}?");
    ///     Ok(match cx.elicit(question, form, Duration::from_secs(60)).await? {
    ///         Elicited::Accepted(answer) => format!("booked for {}", answer["people"]),
    ///         _ => "not booked".to_owned(),
    ///     })
    /// }
    ///
    /// let server = reticent::mcp::McpServer::builder().tool(Book).build();
    /// # assert!(server.is_ok());
    /// ```
    pub async fn elicit(
        &self,
        message: impl Into<String>,
        schema: ElicitationSchema,
        wait: Duration,
    ) -> Result<Elicited, AskError> {
        let client = self.client().ok_or(AskError::NoClient)?;
        if !client
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return Err(AskError::NotSupported("elicitation"));
        }
        let question = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.into(),
            requested_schema: schema,
        };
        let answer = self
            .unless_abandoned(elicit(client, question, wait))
            .await??;
        Ok(match answer.action {
            ElicitationAction::Accept => Elicited::Accepted(answer.content.unwrap_or(Value::Null)),
            ElicitationAction::Decline => Elicited::Declined,
            // And any action this version does not know: nothing was answered.
            _ => Elicited::Cancelled,
        })
    }

    /// Asks the model of the MCP client that made this call for a completion
    /// (`sampling/createMessage`), waiting up to `wait`, and stops waiting when the call is
    /// abandoned.
    ///
    /// With the `mcp` feature. Works only in a call an [`McpServer`](crate::mcp::McpServer)
    /// serves, to a client that declared `sampling`; otherwise it is an [`AskError`] at once.
    /// Sampling is deprecated by the 2026-07-28 protocol, which allows the server no requests
    /// of its own.
    pub async fn sample(
        &self,
        request: CreateMessageRequestParams,
        wait: Duration,
    ) -> Result<CreateMessageResult, AskError> {
        let client = self.client().ok_or(AskError::NoClient)?;
        let declared = client
            .peer_info()
            .is_some_and(|info| info.capabilities.sampling.is_some());
        if !declared {
            return Err(AskError::NotSupported("sampling"));
        }
        let asked = client.create_message(request);
        let answer = tokio::time::timeout(wait, asked);
        match self.unless_abandoned(answer).await? {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(error)) => Err(AskError::Failed(Box::new(error))),
            Err(_) => Err(AskError::NoAnswer(wait)),
        }
    }

    /// `asked`, unless the call is abandoned first.
    async fn unless_abandoned<T>(&self, asked: impl Future<Output = T>) -> Result<T, AskError> {
        tokio::select! {
            answer = asked => Ok(answer),
            () = self.cancellation().cancelled() => Err(AskError::Abandoned),
        }
    }
}

/// Asks `client`'s user `question`, waiting up to `wait` for the answer.
pub(super) async fn elicit(
    client: &Peer<RoleServer>,
    question: ElicitRequestParams,
    wait: Duration,
) -> Result<ElicitResult, AskError> {
    let asked = client.create_elicitation_with_timeout(question, Some(wait));
    match tokio::time::timeout(wait, asked).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(ServiceError::Timeout { .. })) | Err(_) => Err(AskError::NoAnswer(wait)),
        Ok(Err(error)) => Err(AskError::Failed(Box::new(error))),
    }
}
