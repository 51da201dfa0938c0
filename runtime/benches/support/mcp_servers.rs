//! The same three-parameter tool served by reticent's `McpServer` and by a server written
//! with rmcp's own macros (`#[tool_router]` + `#[tool_handler]`), and one `tools/call` on each,
//! made by calling the handler's `ServerHandler::call_tool` directly: both servers get the
//! same request and the same `RequestContext`, and the transport, which costs both alike, is
//! left out. The tool is `support/booking.rs`'s, async, in two forms:
//!
//! - `book`: the output as text only. rmcp's tool serializes it to a `String` itself;
//!   reticent's tool has no output schema (`output_schema = false`).
//! - `book_structured`: structured output, the text and `structuredContent`. rmcp's tool
//!   returns `Json<Booking>`; reticent's has the output schema `#[tool]` derives.
//!
//! Beside them, for the text form, a [`BareHandler`]: reticent's tool called by the least an
//! rmcp handler can do with it, which splits a difference between the two servers into what
//! the tool costs and what the server around it adds.
#![allow(dead_code)]

use futures::FutureExt;
use reticent::mcp::McpServer;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{CallToolRequestParams, CallToolResponse, NumberOrString};
use rmcp::service::{RequestContext, RoleServer, RunningService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::Value;

use super::booking::{Address, Booking, args, book_impl};

// ---- reticent ---------------------------------------------------------------------------

/// Book a room.
#[reticent::tool(name = "book", output_schema = false)]
pub async fn book_text(
    /// The guest's name.
    guest: String,
    /// How many nights.
    nights: u32,
    /// Where to send the invoice.
    address: Option<Address>,
) -> Booking {
    book_impl(guest, nights, address)
}

/// Book a room.
#[reticent::tool]
pub async fn book_structured(
    /// The guest's name.
    guest: String,
    /// How many nights.
    nights: u32,
    /// Where to send the invoice.
    address: Option<Address>,
) -> Booking {
    book_impl(guest, nights, address)
}

/// Reticent's server for the tools.
pub fn reticent_server() -> McpServer {
    McpServer::builder()
        .tool(BookText)
        .tool(BookStructured)
        .build()
        .expect("valid")
}

// ---- rmcp's own -------------------------------------------------------------------------

/// The tool's arguments, as rmcp's `Parameters` takes them.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BookArgs {
    /// The guest's name.
    pub guest: String,
    /// How many nights.
    pub nights: u32,
    /// Where to send the invoice.
    #[serde(default)]
    pub address: Option<Address>,
}

/// The same tools written with rmcp's macros, answering with the same results.
#[derive(Clone)]
pub struct RmcpServer {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpServer {
    /// Book a room.
    #[tool(description = "Book a room.")]
    async fn book(&self, Parameters(args): Parameters<BookArgs>) -> String {
        let booking = book_impl(args.guest, args.nights, args.address);
        serde_json::to_string(&booking).expect("serializes")
    }

    /// Book a room.
    #[tool(description = "Book a room.")]
    async fn book_structured(&self, Parameters(args): Parameters<BookArgs>) -> Json<Booking> {
        Json(book_impl(args.guest, args.nights, args.address))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpServer {}

/// rmcp's server for the tools.
pub fn rmcp_server() -> RmcpServer {
    RmcpServer {
        tool_router: RmcpServer::tool_router(),
    }
}

// ---- the least a handler can do -----------------------------------------------------------

/// A reference, not a server: an rmcp handler that calls reticent's `book` tool for every
/// `tools/call` and answers with its text, with nothing around the call — no lookup by name, no
/// span, no clock, no panic containment, no failure record, no cancellation. The tool's own
/// work (its arguments decoded and checked, its output written through the guard) is all
/// there is; what `McpServer` costs beyond it is the server's. The tool is called through
/// `dyn Tool`, as a server calls it.
pub struct BareHandler(std::sync::Arc<dyn reticent::Tool>);

impl BareHandler {
    /// The handler of `book` (text output).
    pub fn new() -> Self {
        Self(std::sync::Arc::new(BookText))
    }
}

impl ServerHandler for BareHandler {
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl std::future::Future<Output = Result<CallToolResponse, rmcp::model::ErrorData>> + Send + '_
    {
        drop(context);
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let text =
            reticent::Tool::call_text_output(&*self.0, arguments, reticent::ToolContext::default())
                .now_or_never()
                .expect("the tool is ready when called")
                .expect("the bench's arguments are valid");
        std::future::ready(Ok(CallToolResponse::from(
            rmcp::model::CallToolResult::success(vec![rmcp::model::ContentBlock::text(text)]),
        )))
    }
}

// ---- one call -----------------------------------------------------------------------------

/// One call's inputs: the request and its context.
pub type Input = (CallToolRequestParams, RequestContext<RoleServer>);

/// Where the calls are made: a runtime, and a peer for the request contexts (a server served
/// on a duplex nobody writes to).
pub struct Bench {
    pub runtime: tokio::runtime::Runtime,
    pub reticent: McpServer,
    pub rmcp: RmcpServer,
    running: RunningService<RoleServer, RmcpServer>,
    _client_end: tokio::io::DuplexStream,
    next_id: i64,
}

impl Bench {
    pub fn new() -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let (client_end, server_end) = tokio::io::duplex(4096);
        let running = {
            let _entered = runtime.enter();
            rmcp::service::serve_directly(rmcp_server(), server_end, None)
        };
        Self {
            runtime,
            reticent: reticent_server(),
            rmcp: rmcp_server(),
            running,
            _client_end: client_end,
            next_id: 0,
        }
    }

    /// One call's inputs, made before the clock starts: the request to `tool` and its context.
    pub fn input(&mut self, tool: &'static str) -> Input {
        self.next_id += 1;
        let Value::Object(arguments) = args() else {
            unreachable!("the arguments are an object")
        };
        let request = CallToolRequestParams::new(tool).with_arguments(arguments);
        let context = RequestContext::new(
            NumberOrString::Number(self.next_id),
            self.running.peer().clone(),
        );
        (request, context)
    }
}

/// One `tools/call` on `server`, polled once: the tool is ready when called, so the call is.
/// Must run inside the bench's runtime (`runtime.enter()`).
pub fn call(server: &impl ServerHandler, (request, context): Input) -> CallToolResponse {
    server
        .call_tool(request, context)
        .now_or_never()
        .expect("the call completes when first polled")
        .expect("a response")
}

/// Checks that both servers answer alike: the same text, the same structured content.
pub fn check(bench: &mut Bench) {
    let _entered = bench.runtime.enter();
    for tool in ["book", "book_structured"] {
        let answer = |response: CallToolResponse| {
            let CallToolResponse::Complete(result) = response else {
                panic!("a result")
            };
            assert_ne!(result.is_error, Some(true), "{result:?}");
            let text = result.content[0].as_text().expect("text").text.clone();
            (text, result.structured_content)
        };
        let input = bench.input(tool);
        let ours = answer(call(&bench.reticent, input));
        let input = bench.input(tool);
        let theirs = answer(call(&bench.rmcp, input));
        assert_eq!(ours, theirs, "{tool}");
        assert_eq!(ours.1.is_some(), tool == "book_structured", "{tool}");
    }
}
