//! The transport to a server started as a child process: JSON-RPC messages, one a line, on
//! its stdin and stdout. Writing is rmcp's; reading is done here, so that a line rmcp would
//! skip (not JSON, nested deeper than the parser's limit) fails the requests that wait for an
//! answer instead of leaving them waiting, and so that a line longer than the client's
//! `max_message_size` is dropped as it is read, never held whole, and fails them too.
//!
//! Such a line carries no id anyone can trust. A line that is JSON and names a waiting
//! request's id fails that request; any other fails every request waiting at that moment,
//! since it cannot be told which it answered (MCP allows nothing but its messages on a
//! server's stdout). Until the handshake is done nothing waits, so a line a server prints
//! before it (a banner) is skipped, as rmcp skips it; the connect timeout bounds the handshake.

use std::borrow::Cow;
use std::collections::{HashSet, VecDeque};

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, RequestId, ServerJsonRpcMessage,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};

use super::unreadable::Marker;

/// A UTF-8 byte order mark, which JSON parsers may skip (RFC 8259 §8.1), as rmcp does.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The transport over a child's stdout (`R`) and stdin (`W`).
pub(super) struct StdioTransport<R, W: AsyncWrite> {
    lines: Lines<R>,
    /// Sends, framed as rmcp frames them; its reader is never read.
    write: AsyncRwTransport<RoleClient, tokio::io::Empty, W>,
    /// The requests sent and not yet answered, failed or cancelled.
    waiting: HashSet<RequestId>,
    /// Answers made here, delivered before anything else is read.
    made: VecDeque<ServerJsonRpcMessage>,
    marker: Marker,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// The transport reading lines of at most `max_line` bytes.
    pub(super) fn new(read: R, write: W, marker: Marker, max_line: usize) -> Self {
        Self {
            lines: Lines::new(read, max_line),
            write: AsyncRwTransport::new(tokio::io::empty(), write),
            waiting: HashSet::new(),
            made: VecDeque::new(),
            marker,
        }
    }

    /// Fails every waiting request with `reason`.
    fn fail_waiting(&mut self, reason: &str) {
        if self.waiting.is_empty() {
            tracing::warn!(
                reason,
                "skipped a line from the MCP server that is not a message; no request waited"
            );
            return;
        }
        tracing::warn!(
            reason,
            waiting = self.waiting.len(),
            "a line from the MCP server is not a message; the requests waiting fail"
        );
        let reason = match self.waiting.len() {
            1 => format!("{reason}, while this request was the only one waiting"),
            waiting => format!(
                "{reason}, while {waiting} requests waited; it names none of them, so all failed"
            ),
        };
        let marker = self.marker;
        self.made.extend(
            self.waiting
                .drain()
                .map(|id| marker.answer(id, reason.clone())),
        );
    }

    /// What to do with a line that did not decode.
    fn unreadable(&mut self, line: &[u8], error: &serde_json::Error) {
        let Ok(value) = serde_json::from_slice::<Value>(line) else {
            // Not JSON, or nested deeper than the parser goes.
            return self.fail_waiting(&format!(
                "the server wrote a line that is not JSON ({error})"
            ));
        };
        let id = value.get("id").cloned();
        let request = value.get("method").is_some();
        match id.map(serde_json::from_value::<RequestId>) {
            // A request or notification of the server's that rmcp cannot decode: not an
            // answer of the client's.
            _ if request => {
                tracing::warn!(%error, "skipped a message from the MCP server that does not decode");
            }
            Some(Ok(id)) => {
                if self.waiting.remove(&id) {
                    let reason = format!("the server's answer is not a JSON-RPC message ({error})");
                    self.made.push_back(self.marker.answer(id, reason));
                } else {
                    tracing::warn!(%id, %error, "skipped an answer from the MCP server to no waiting request that does not decode");
                }
            }
            _ => self.fail_waiting(&format!(
                "the server wrote a line that is not a JSON-RPC message ({error})"
            )),
        }
    }
}

impl<R, W> Transport<RoleClient> for StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        Cow::Borrowed("stdio")
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &item {
            // The handshake is not tracked (see the module docs).
            ClientJsonRpcMessage::Request(request)
                if !matches!(
                    request.request,
                    ClientRequest::InitializeRequest(_) | ClientRequest::DiscoverRequest(_)
                ) =>
            {
                self.waiting.insert(request.id.clone());
            }
            ClientJsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.waiting.remove(id);
                }
            }
            _ => {}
        }
        self.write.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if let Some(answer) = self.made.pop_front() {
                return Some(answer);
            }
            match self.lines.next().await {
                Read::Line => {}
                Read::TooLong => {
                    self.fail_waiting(&format!(
                        "the server wrote a line longer than {} bytes, the limit of one message",
                        self.lines.max
                    ));
                    continue;
                }
                Read::End => return None,
            }
            let line = self.lines.line();
            let line = line.strip_prefix(BOM).unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
                Ok(message) => {
                    match &message {
                        ServerJsonRpcMessage::Response(response) => {
                            self.waiting.remove(&response.id);
                        }
                        ServerJsonRpcMessage::Error(error) => {
                            if let Some(id) = &error.id {
                                self.waiting.remove(id);
                            }
                        }
                        _ => {}
                    }
                    return Some(message);
                }
                Err(error) => {
                    let line = line.to_vec();
                    self.unreadable(&line, &error);
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.close().await
    }
}

/// Lines of at most a given length, read so that a read dropped half-way (in rmcp's
/// `select!`) goes on where it stopped.
struct Lines<R> {
    read: BufReader<R>,
    /// The line being read; a whole one (without its newline) after [`Read::Line`].
    line: Vec<u8>,
    /// Whether `line` holds a whole line, to be cleared before the next is read.
    whole: bool,
    /// Whether the rest of a line found too long is being skipped.
    skipping: bool,
    max: usize,
}

/// What [`Lines::next`] found.
#[derive(Debug, PartialEq, Eq)]
enum Read {
    Line,
    /// A line longer than the limit: what was read of it is dropped, the rest skipped.
    TooLong,
    /// The end of the output, or an error reading it.
    End,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    fn new(read: R, max: usize) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            whole: false,
            skipping: false,
            max,
        }
    }

    /// The line [`next`](Self::next) found, without its line ending.
    fn line(&self) -> &[u8] {
        let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        line.strip_suffix(b"\r").unwrap_or(line)
    }

    async fn next(&mut self) -> Read {
        if self.whole {
            self.line.clear();
            self.whole = false;
        }
        loop {
            // Nothing is consumed across an await: `fill_buf` keeps what it read until
            // `consume`, which follows the copy at once.
            let available = match self.read.fill_buf().await {
                Ok([]) => return Read::End,
                Ok(available) => available,
                Err(error) => {
                    tracing::warn!(%error, "could not read from the MCP server");
                    return Read::End;
                }
            };
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            let found = if self.skipping {
                self.skipping = newline.is_none();
                None
            } else if self.line.len() + take > self.max {
                self.line.clear();
                self.skipping = newline.is_none();
                Some(Read::TooLong)
            } else {
                self.line.extend_from_slice(&available[..take]);
                newline.map(|_| {
                    self.whole = true;
                    Read::Line
                })
            };
            self.read.consume(take);
            if let Some(found) = found {
                return found;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(input: &[u8], max: usize) -> Vec<(Read, Vec<u8>)> {
        let mut lines = Lines::new(input, max);
        let mut found = Vec::new();
        loop {
            let read = lines.next().await;
            if read == Read::End {
                return found;
            }
            let line = if read == Read::Line {
                lines.line().to_vec()
            } else {
                Vec::new()
            };
            found.push((read, line));
        }
    }

    #[tokio::test]
    async fn lines_are_cut_at_newlines_and_bounded() {
        let found = read_all(b"one\r\ntwo\n0123456789abc\nthree\nfour", 8).await;
        assert_eq!(
            found,
            vec![
                (Read::Line, b"one".to_vec()),
                (Read::Line, b"two".to_vec()),
                (Read::TooLong, Vec::new()),
                (Read::Line, b"three".to_vec()),
                // a last line without a newline never ended
            ]
        );
    }

    #[tokio::test]
    async fn a_line_too_long_is_reported_before_its_end() {
        // no newline ever: the line is reported as too long once it passes the limit
        let mut lines = Lines::new(tokio::io::repeat(b'x'), 1024);
        let read = tokio::time::timeout(std::time::Duration::from_secs(5), lines.next()).await;
        assert_eq!(read.ok(), Some(Read::TooLong));
    }
}
