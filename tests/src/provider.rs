//! A scripted HTTP/1.1 server on loopback for testing the HTTP providers: it answers each
//! request with the next scripted reply, records every request it received, and for a streamed
//! reply records how the stream ended: finished, cut by the server, or closed by the client.
//! And the recorded provider responses in `tests/fixtures/`.

pub mod retry_after;
pub mod stream;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reticent::ToolDefinition;
use reticent::providers::anthropic::Anthropic;
use reticent::providers::openai::OpenAi;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// The OpenAI API key of the tests.
pub const OPENAI_KEY: &str = "sk-test-4f9a1c0b8e7d6a5f";

/// The Anthropic API key of the tests.
pub const ANTHROPIC_KEY: &str = "sk-ant-api03-test-9c8b7a6f5e4d";

/// `OpenAi` at `server`, retrying quickly.
pub fn openai(server: &TestServer) -> OpenAi {
    OpenAi::new(OPENAI_KEY, "gpt-4o-mini")
        .base_url(format!("{}/v1", server.url))
        .retry_delay(Duration::from_millis(10))
        .timeout(Duration::from_secs(10))
}

/// An OpenAI Chat Completions response body with one tool call, `arguments` as the text the
/// model wrote.
pub fn openai_tool_call(id: &str, name: &str, arguments: &str) -> String {
    serde_json::json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": id, "type": "function",
                            "function": {"name": name, "arguments": arguments}}]
        }}]
    })
    .to_string()
}

/// `Anthropic` at `server`, retrying quickly.
pub fn anthropic(server: &TestServer) -> Anthropic {
    Anthropic::new(ANTHROPIC_KEY, "claude-sonnet-4-5")
        .base_url(&server.url)
        .retry_delay(Duration::from_millis(10))
        .timeout(Duration::from_secs(10))
}

/// An Anthropic Messages response body with one `tool_use` block.
pub fn anthropic_tool_call(id: &str, name: &str, input: serde_json::Value) -> String {
    serde_json::json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 100, "output_tokens": 20}
    })
    .to_string()
}

/// One reply of the script.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A response with this status, extra headers and JSON (or other) body.
    Respond {
        /// The status code.
        status: u16,
        /// Headers besides `content-type: application/json` and `content-length`.
        headers: Vec<(String, String)>,
        /// The body.
        body: String,
    },
    /// Read the request and never answer (until the test ends).
    Hang,
    /// Read the request and close the connection without answering.
    Close,
    /// A `200` event stream (`text/event-stream`, chunked): each piece is written as one
    /// chunk, `delay` after the one before. Then the body ends, or with `cut` the connection
    /// is closed in its middle.
    Stream {
        /// The chunks, in order.
        pieces: Vec<Vec<u8>>,
        /// The wait before each chunk.
        delay: Duration,
        /// Close the connection after the pieces instead of ending the body.
        cut: bool,
    },
}

impl Reply {
    /// `200 OK` with a JSON body.
    pub fn json(body: impl Into<String>) -> Self {
        Self::Respond {
            status: 200,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// An error status with a JSON body.
    pub fn status(status: u16, body: impl Into<String>) -> Self {
        Self::Respond {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// The same reply with one more header.
    pub fn header(self, name: &str, value: &str) -> Self {
        match self {
            Self::Respond {
                status,
                mut headers,
                body,
            } => {
                headers.push((name.to_owned(), value.to_owned()));
                Self::Respond {
                    status,
                    headers,
                    body,
                }
            }
            other => other,
        }
    }

    /// An event stream with this body, in one piece.
    pub fn events(body: impl Into<String>) -> Self {
        Self::Stream {
            pieces: vec![body.into().into_bytes()],
            delay: Duration::ZERO,
            cut: false,
        }
    }

    /// The same stream, its bytes written in pieces of `size` bytes (splitting lines, JSON
    /// tokens and UTF-8 characters), `delay` apart.
    pub fn in_pieces(self, size: usize, delay: Duration) -> Self {
        match self {
            Self::Stream { pieces, cut, .. } => Self::Stream {
                pieces: pieces.concat().chunks(size).map(<[u8]>::to_vec).collect(),
                delay,
                cut,
            },
            other => other,
        }
    }

    /// The same stream, one piece per event (per empty line), `delay` apart.
    pub fn per_event(self, delay: Duration) -> Self {
        match self {
            Self::Stream { pieces, cut, .. } => {
                let body = String::from_utf8(pieces.concat()).expect("an event stream is text");
                let pieces = body
                    .split_inclusive("\n\n")
                    .map(|event| event.as_bytes().to_vec())
                    .collect();
                Self::Stream { pieces, delay, cut }
            }
            other => other,
        }
    }

    /// The same stream, cut after its first `bytes` bytes: the server closes the connection
    /// there, in the middle of the body.
    pub fn cut_after(self, bytes: usize) -> Self {
        match self {
            Self::Stream { pieces, delay, .. } => {
                let mut left = bytes;
                let pieces = pieces
                    .into_iter()
                    .filter_map(|mut piece| {
                        piece.truncate(left);
                        left -= piece.len();
                        (!piece.is_empty()).then_some(piece)
                    })
                    .collect();
                Self::Stream {
                    pieces,
                    delay,
                    cut: true,
                }
            }
            other => other,
        }
    }
}

/// How a streamed reply ended, as the server saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamEnd {
    /// Every piece was written and the body ended.
    Finished,
    /// The script cut the stream after this many pieces.
    Cut {
        /// The pieces written before the cut.
        pieces: usize,
    },
    /// The client closed the connection after this many pieces were written.
    ClientClosed {
        /// The pieces written before the client closed.
        pieces: usize,
    },
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Received {
    /// The method, like `POST`.
    pub method: String,
    /// The path, like `/v1/chat/completions`.
    pub path: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body, as text.
    pub body: String,
}

impl Received {
    /// The value of a header, by lowercase name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("the request body is JSON")
    }

    /// The whole request as text, for "never contains" checks.
    pub fn text(&self) -> String {
        let headers: String = self
            .headers
            .iter()
            .map(|(n, v)| format!("{n}: {v}\n"))
            .collect();
        format!("{} {}\n{headers}\n{}", self.method, self.path, self.body)
    }
}

/// The server. It stops when dropped with the test's runtime.
#[derive(Debug)]
pub struct TestServer {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    log: Arc<Log>,
}

/// What the server saw.
#[derive(Debug, Default)]
struct Log {
    received: Mutex<Vec<Received>>,
    streams: Mutex<Vec<StreamEnd>>,
    stream_ended: Notify,
}

impl TestServer {
    /// Starts a server that answers with `replies`, in order; past the end it answers 500.
    pub async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let log = Arc::new(Log::default());
        let server_log = Arc::clone(&log);
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let replies = Arc::clone(&replies);
                let log = Arc::clone(&server_log);
                tokio::spawn(serve(stream, replies, log));
            }
        });
        Self { url, log }
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<Received> {
        self.log.received.lock().unwrap().clone()
    }

    /// How each streamed reply so far ended, in the order they ended.
    pub fn streams(&self) -> Vec<StreamEnd> {
        self.log.streams.lock().unwrap().clone()
    }

    /// Waits until `count` streamed replies have ended (at most 10 s), and returns how they
    /// ended.
    pub async fn streams_ended(&self, count: usize) -> Vec<StreamEnd> {
        let wait = async {
            loop {
                let ended = self.log.stream_ended.notified();
                if self.streams().len() >= count {
                    return;
                }
                ended.await;
            }
        };
        if tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .is_err()
        {
            panic!(
                "{count} streams did not end; they ended: {:?}",
                self.streams()
            );
        }
        self.streams()
    }
}

/// Answers requests on one connection until the client or a reply closes it.
async fn serve(mut stream: TcpStream, replies: Arc<Mutex<VecDeque<Reply>>>, log: Arc<Log>) {
    let _ = stream.set_nodelay(true);
    let mut buffer = Vec::new();
    loop {
        let Some(request) = read_request(&mut stream, &mut buffer).await else {
            return;
        };
        log.received.lock().unwrap().push(request);
        let reply = replies.lock().unwrap().pop_front();
        let (status, headers, body) = match reply {
            Some(Reply::Respond {
                status,
                headers,
                body,
            }) => (status, headers, body),
            Some(Reply::Hang) => {
                tokio::time::sleep(Duration::from_secs(60)).await;
                return;
            }
            Some(Reply::Close) => return,
            Some(Reply::Stream { pieces, delay, cut }) => {
                let end = write_stream(&mut stream, &pieces, delay, cut).await;
                log.streams.lock().unwrap().push(end);
                log.stream_ended.notify_waiters();
                if end == StreamEnd::Finished {
                    continue;
                }
                return;
            }
            None => (
                500,
                Vec::new(),
                r#"{"error":{"message":"the test server has no reply left"}}"#.to_owned(),
            ),
        };
        let mut response = format!(
            "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
            reason(status),
            body.len()
        );
        for (name, value) in headers {
            response.push_str(&format!("{name}: {value}\r\n"));
        }
        response.push_str("\r\n");
        response.push_str(&body);
        if stream.write_all(response.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// Writes a streamed reply, watching for the client to close the connection meanwhile.
async fn write_stream(
    stream: &mut TcpStream,
    pieces: &[Vec<u8>],
    delay: Duration,
    cut: bool,
) -> StreamEnd {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                transfer-encoding: chunked\r\n\r\n";
    if stream.write_all(head.as_bytes()).await.is_err() {
        return StreamEnd::ClientClosed { pieces: 0 };
    }
    for (sent, piece) in pieces.iter().enumerate() {
        if sent > 0 && !delay.is_zero() {
            // the client sends nothing more on this connection: a read that returns is the
            // client closing it
            let mut byte = [0u8; 1];
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = stream.read(&mut byte) => return StreamEnd::ClientClosed { pieces: sent },
            }
        }
        let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
        chunk.extend_from_slice(piece);
        chunk.extend_from_slice(b"\r\n");
        if stream.write_all(&chunk).await.is_err() {
            return StreamEnd::ClientClosed { pieces: sent };
        }
    }
    if cut {
        return StreamEnd::Cut {
            pieces: pieces.len(),
        };
    }
    if stream.write_all(b"0\r\n\r\n").await.is_err() {
        return StreamEnd::ClientClosed {
            pieces: pieces.len(),
        };
    }
    StreamEnd::Finished
}

/// Reads one request (headers and a `content-length` body); `None` when the connection ends.
async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<Received> {
    let header_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let body_start = header_end + 4;
    while buffer.len() < body_start + length {
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buffer[body_start..body_start + length]).into_owned();
    buffer.drain(..body_start + length);
    Some(Received {
        method,
        path,
        headers,
        body,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// The two tools the `request_tool_turn.json` fixtures offer, `lookup_order` and
/// `charge_card`, with the schemas `#[tool]` generates for them.
pub fn order_tools() -> [ToolDefinition; 2] {
    let lookup = ToolDefinition::new(
        "lookup_order",
        "Look up an order by id.",
        json!({
            "type": "object",
            "properties": {
                "order_id": {"type": "string", "description": "The order id, like \"ORD-1042\"."},
                "with_items": {"type": ["boolean", "null"], "description": "Include line items (default false)."}
            },
            "required": ["order_id"],
            "additionalProperties": false
        }),
    );
    let charge = ToolDefinition::new(
        "charge_card",
        "Charge the customer's card.",
        json!({
            "type": "object",
            "properties": {"amount_cents": {"type": "integer", "format": "uint64", "minimum": 0}},
            "required": ["amount_cents"],
            "additionalProperties": false
        }),
    );
    [lookup, charge]
}

/// Reads a fixture from `tests/fixtures/`.
pub fn fixture(path: &str) -> String {
    let full = format!("{}/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("read {full}: {e}"))
}

/// A fixture as JSON.
pub fn fixture_json(path: &str) -> serde_json::Value {
    serde_json::from_str(&fixture(path)).unwrap_or_else(|e| panic!("parse {path}: {e}"))
}
