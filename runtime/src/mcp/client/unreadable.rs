//! Answers the client cannot read. rmcp skips a message it cannot decode (not JSON, nested
//! deeper than the parser's limit, over the client's `max_message_size`), so the request it
//! answered would wait for ever. The client's transports (`stdio.rs`, `http.rs`) notice such a message and
//! answer the requests it may have been meant for themselves, with an error marked by a
//! number the server never sees, so that the client can tell it from any error the server
//! sends and report it as [`McpCallError::Unreadable`](super::McpCallError::Unreadable).

use std::hash::{BuildHasher, RandomState};

use rmcp::ServiceError;
use rmcp::model::{ErrorCode, ErrorData, RequestId, ServerJsonRpcMessage};
use serde_json::Value;

/// The key of the mark in the error's `data`.
const KEY: &str = "reticent/unreadableAnswer";

/// The mark of one connection's errors for answers it could not read.
#[derive(Clone, Copy, Debug)]
pub(super) struct Marker(u64);

impl Marker {
    /// A mark no server can know.
    pub(super) fn new() -> Self {
        Self(RandomState::new().hash_one(KEY))
    }

    /// The answer that fails the request `id`, whose real answer could not be read.
    pub(super) fn answer(self, id: RequestId, reason: String) -> ServerJsonRpcMessage {
        let mark = serde_json::json!({ KEY: self.0 });
        ServerJsonRpcMessage::error(
            ErrorData::new(ErrorCode::PARSE_ERROR, reason, Some(mark)),
            Some(id),
        )
    }

    /// Why the answer could not be read, if `error` is one of this connection's answers.
    pub(super) fn reason(self, error: &ServiceError) -> Option<&str> {
        match error {
            ServiceError::McpError(error)
                if error
                    .data
                    .as_ref()
                    .and_then(|data| data.get(KEY))
                    .and_then(Value::as_u64)
                    == Some(self.0) =>
            {
                Some(&error.message)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_connections_own_mark_is_recognized() {
        let marker = Marker::new();
        let answer = marker.answer(RequestId::Number(3), "not JSON".to_owned());
        let ServerJsonRpcMessage::Error(error) = answer else {
            panic!("an error answer")
        };
        assert_eq!(error.id, Some(RequestId::Number(3)));
        let ours = ServiceError::McpError(error.error.clone());
        assert_eq!(marker.reason(&ours), Some("not JSON"));

        // the server's own error, and one that guesses the key but not the number
        let plain = ServiceError::McpError(ErrorData::new(ErrorCode::PARSE_ERROR, "x", None));
        assert_eq!(marker.reason(&plain), None);
        let guess = ServiceError::McpError(ErrorData::new(
            ErrorCode::PARSE_ERROR,
            "x",
            Some(serde_json::json!({ KEY: marker.0.wrapping_add(1) })),
        ));
        assert_eq!(marker.reason(&guess), None);
        assert_eq!(Marker::new().reason(&ours), None);
    }
}
