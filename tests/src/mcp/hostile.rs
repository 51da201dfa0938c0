//! A hostile MCP server's answers, written by hand as raw JSON-RPC so that they can be
//! anything: a list never sent, answers that are not JSON, nested past the parser's limit or
//! over 16 MiB. The `hostile_mcp` program (`src/bin/`) speaks them over stdio, and the `mcp`
//! tests over HTTP, one message a line or an event.
//!
//! Each [`Misbehaviour`] spoils one answer; the rest are those of a server with one tool,
//! `echo`, that returns its `text`.

use serde_json::{Value, json};

/// What the server does wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misbehaviour {
    /// Never answers `tools/list`.
    SilentList,
    /// Answers `tools/list` with a line that is not JSON (JSON cut short).
    GarbledList,
    /// Lists a tool whose input schema is nested 200 objects deep: valid JSON, deeper than
    /// the parser goes.
    DeepSchema,
    /// Answers `tools/call` with a line that is not JSON; a call whose `text` is `wait`, with
    /// nothing.
    GarbledCall,
    /// Answers `tools/list` with a list larger than 16 MiB.
    HugeList,
    /// Answers `tools/call` with a result larger than 16 MiB.
    HugeCall,
    /// Never answers `tools/call`.
    SilentCall,
    /// Prints a line that is not JSON before its answer to `initialize`, and behaves
    /// otherwise.
    Banner,
}

impl Misbehaviour {
    /// Every misbehaviour.
    pub const ALL: [Self; 8] = [
        Self::SilentList,
        Self::GarbledList,
        Self::DeepSchema,
        Self::HugeList,
        Self::GarbledCall,
        Self::HugeCall,
        Self::SilentCall,
        Self::Banner,
    ];

    /// Its name, as the `hostile_mcp` program takes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::SilentList => "silent-list",
            Self::GarbledList => "garbled-list",
            Self::DeepSchema => "deep-schema",
            Self::HugeList => "huge-list",
            Self::GarbledCall => "garbled-call",
            Self::HugeCall => "huge-call",
            Self::SilentCall => "silent-call",
            Self::Banner => "banner",
        }
    }

    /// The misbehaviour named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// How deep [`Misbehaviour::DeepSchema`]'s schema is nested.
pub const SCHEMA_DEPTH: usize = 200;

/// The size of [`Misbehaviour::HugeList`]'s and [`Misbehaviour::HugeCall`]'s answers: over
/// rmcp's 16 MiB limit.
pub const HUGE: usize = 17 * 1024 * 1024;
const _: () = assert!(HUGE > 16 * 1024 * 1024);

/// The messages the server sends for `message`, in order: none for a notification or an
/// answer it withholds.
pub fn answer(misbehaviour: Misbehaviour, message: &Value) -> Vec<String> {
    let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
        return Vec::new();
    };
    let result = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    match (method, misbehaviour) {
        ("initialize", _) => {
            let initialized = result(json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1.0.0"},
            }));
            if misbehaviour == Misbehaviour::Banner {
                vec!["hostile MCP server 1.0 starting".to_owned(), initialized]
            } else {
                vec![initialized]
            }
        }
        ("ping", _) => vec![result(json!({}))],
        ("tools/list", Misbehaviour::SilentList) => Vec::new(),
        ("tools/list", Misbehaviour::GarbledList) => {
            vec![format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"echo","#
            )]
        }
        ("tools/list", Misbehaviour::DeepSchema) => {
            let mut schema = json!({"type": "string"});
            for _ in 0..SCHEMA_DEPTH {
                schema = json!({"type": "object", "properties": {"inner": schema}});
            }
            vec![result(
                json!({"tools": [{"name": "deep", "inputSchema": schema}]}),
            )]
        }
        ("tools/list", Misbehaviour::HugeList) => vec![result(json!({"tools": [{
            "name": "echo",
            "description": "x".repeat(HUGE),
            "inputSchema": {"type": "object"},
        }]}))],
        ("tools/list", _) => vec![result(json!({"tools": [{
            "name": "echo",
            "description": "Echo the text.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        }]}))],
        ("tools/call", Misbehaviour::SilentCall) => Vec::new(),
        ("tools/call", Misbehaviour::GarbledCall) => {
            if message["params"]["arguments"]["text"] == "wait" {
                Vec::new()
            } else {
                vec!["Traceback (most recent call last): echo failed".to_owned()]
            }
        }
        ("tools/call", Misbehaviour::HugeCall) => {
            vec![result(
                json!({"content": [{"type": "text", "text": "x".repeat(HUGE)}]}),
            )]
        }
        ("tools/call", _) => {
            let text = message["params"]["arguments"]["text"].clone();
            vec![result(json!({"content": [{"type": "text", "text": text}]}))]
        }
        _ => vec![
            json!({"jsonrpc": "2.0", "id": id,
                   "error": {"code": -32601, "message": "method not found"}})
            .to_string(),
        ],
    }
}
