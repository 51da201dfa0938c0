//! A scripted HTTP/1.1 server on loopback for testing the HTTP providers: it answers each
//! request with the next scripted reply and records every request it received. And the
//! recorded provider responses in `tests/fixtures/`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reticent::ToolDefinition;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

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
            Self::Hang => Self::Hang,
        }
    }
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
    received: Arc<Mutex<Vec<Received>>>,
}

impl TestServer {
    /// Starts a server that answers with `replies`, in order; past the end it answers 500.
    pub async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&received);
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let replies = Arc::clone(&replies);
                let log = Arc::clone(&log);
                tokio::spawn(serve(stream, replies, log));
            }
        });
        Self { url, received }
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

/// Answers requests on one connection until the client or a reply closes it.
async fn serve(
    mut stream: TcpStream,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    log: Arc<Mutex<Vec<Received>>>,
) {
    let mut buffer = Vec::new();
    loop {
        let Some(request) = read_request(&mut stream, &mut buffer).await else {
            return;
        };
        log.lock().unwrap().push(request);
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
    let lookup = ToolDefinition {
        name: "lookup_order".into(),
        description: "Look up an order by id.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "order_id": {"type": "string", "description": "The order id, like \"ORD-1042\"."},
                "with_items": {"type": ["boolean", "null"], "description": "Include line items (default false)."}
            },
            "required": ["order_id"],
            "additionalProperties": false
        }),
        annotations: Default::default(),
    };
    let charge = ToolDefinition {
        name: "charge_card".into(),
        description: "Charge the customer's card.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"amount_cents": {"type": "integer", "format": "uint64", "minimum": 0}},
            "required": ["amount_cents"],
            "additionalProperties": false
        }),
        annotations: Default::default(),
    };
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
