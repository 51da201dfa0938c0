//! Streaming a response: the request and its retries, the event stream read as it arrives and
//! within bounds, and the answer assembled from the API's events into [`ModelEvent`]s and a
//! final [`ModelResponse`].
//!
//! Each provider brings a [`Decode`]: what its API's events mean. The rest is shared:
//!
//! - the request is sent as [`Transport::post_json`] sends it, with the same retries, but
//!   only while nothing was passed on: once an event was, a failure ends the stream with an
//!   error that says it broke off, which the stream does not retry (it keeps its
//!   retryability: the agent loop asks the whole turn again);
//! - two events are at most `stream_idle_timeout` apart once the answer began (its first
//!   text or tool call), and the answer begins within `first_event_timeout` of the request
//!   (or of an event that carried no answer yet): a stall past either is a retryable failure
//!   that names the setting;
//! - the body is parsed with the bounded [`SseParser`] (`max_event_bytes` per event) and
//!   counted against `max_response_bytes`; the text and each call's arguments are held within
//!   `max_response_bytes` as well, and the calls within `max_tool_calls`: the call past it
//!   ends the stream, and nothing after it is read;
//! - each event is decoded in time that does not grow with the calls before it (a call is
//!   found by its number, never by a scan), so a stream is read in time linear in its size;
//! - a server that ignores `stream: true` and answers with one JSON body is read as
//!   `complete` reads it, and its response told as events;
//! - dropping the stream drops the response, which closes the connection.
//!
//! One file, longer than most: the assembly of a streamed answer (text, calls started and
//! their argument fragments, usage, the bounds on all of them) is shared by both providers and
//! reads as one state machine.

use std::collections::VecDeque;

use tokio::time::Instant;

use futures::StreamExt;
use futures::stream::{self, BoxStream};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;

use super::http::{Failed, Transport, error_message, tool_calls_within};
use super::sse::{SseEvent, SseParser};
use crate::model::{
    Arguments, ModelError, ModelEvent, ModelResponse, ToolCall, Usage, stream_events,
};
use crate::render::{MAX_NAME_LEN, bounded};
use crate::secret::Secret;

/// What one API's stream of events means.
pub(crate) trait Decode: Default + Send {
    /// Reads one event into `answer`. `Ok(true)` when it is the stream's last event.
    fn event(&mut self, event: SseEvent, answer: &mut Assembly) -> Result<bool, Failed>;

    /// Called once the stream is complete, before the answer is: a last check.
    fn end(&mut self) -> Result<(), Failed> {
        Ok(())
    }

    /// Whether the stream may end here without its last event (some compatible servers close
    /// the stream after the final chunk without one).
    fn may_end(&self) -> bool {
        false
    }

    /// The response of a whole JSON body, from a server that did not stream.
    fn parse_whole(body: &[u8]) -> Result<ModelResponse, ModelError>;
}

/// The answer so far: what was said, which calls were started with what arguments, the
/// usage, and the events not yet passed on.
#[derive(Debug)]
pub(crate) struct Assembly {
    text: String,
    calls: Vec<ToolCall>,
    /// The raw text of each call's arguments.
    arguments: Vec<String>,
    /// The tokens used; each provider fills it in from its own events.
    pub(crate) usage: Usage,
    /// The most bytes of text, and of one call's arguments.
    limit: usize,
    /// The most calls.
    max_calls: usize,
    events: Vec<ModelEvent>,
}

impl Assembly {
    pub(crate) fn new(limit: usize, max_calls: usize) -> Self {
        Self {
            text: String::new(),
            calls: Vec::new(),
            arguments: Vec::new(),
            usage: Usage::default(),
            limit,
            max_calls,
            events: Vec::new(),
        }
    }

    /// More text.
    pub(crate) fn text(&mut self, delta: &str) -> Result<(), Failed> {
        if delta.is_empty() {
            return Ok(());
        }
        if delta.len() > self.limit - self.text.len() {
            return Err(Failed::new(
                format!(
                    "the text of the answer is larger than {} bytes; raise `max_response_bytes` \
                     if the provider's answers can be that large",
                    self.limit
                ),
                false,
            ));
        }
        self.text.push_str(delta);
        self.events.push(ModelEvent::TextDelta(delta.to_owned()));
        Ok(())
    }

    /// Starts the next tool call; returns its index. Refused past `max_tool_calls`.
    pub(crate) fn start_call(&mut self, id: String, name: String) -> Result<usize, Failed> {
        let index = self.calls.len();
        if index >= self.max_calls {
            return Err(self.too_many_calls());
        }
        self.events.push(ModelEvent::ToolCallStarted {
            index,
            id: id.clone(),
            name: name.clone(),
        });
        self.calls.push(ToolCall::new(id, name, Value::Null));
        self.arguments.push(String::new());
        Ok(index)
    }

    /// More of the arguments of call `index`, which was started.
    pub(crate) fn arguments(&mut self, index: usize, fragment: &str) -> Result<(), Failed> {
        if fragment.is_empty() {
            return Ok(());
        }
        let Some(arguments) = self.arguments.get_mut(index) else {
            return Err(Failed::new(
                format!("the stream sent arguments for tool call {index}, which never started"),
                false,
            ));
        };
        if fragment.len() > self.limit - arguments.len() {
            return Err(self.arguments_too_large(&self.calls[index].name));
        }
        arguments.push_str(fragment);
        self.events.push(ModelEvent::ToolCallDelta {
            index,
            arguments: fragment.to_owned(),
        });
        Ok(())
    }

    /// The refusal of arguments of the call to `name` over the limit.
    pub(crate) fn arguments_too_large(&self, name: &str) -> Failed {
        Failed::new(
            format!(
                "the arguments of tool call `{}` are larger than {} bytes; raise \
                 `max_response_bytes` if the provider's answers can be that large",
                bounded(name, MAX_NAME_LEN),
                self.limit
            ),
            false,
        )
    }

    /// The refusal of a call past `max_tool_calls`.
    pub(crate) fn too_many_calls(&self) -> Failed {
        Failed::new(
            format!(
                "the answer has more than {} tool calls; raise `max_tool_calls` if the \
                 provider's answers can have that many",
                self.max_calls
            ),
            false,
        )
    }

    /// Keeps `data` with call `index`, which was started: what the provider must get back
    /// with it ([`ToolCall::provider_data`]).
    #[cfg_attr(not(any(feature = "openai", feature = "gemini")), allow(dead_code))]
    pub(crate) fn provider_data(&mut self, index: usize, data: Value) {
        if let Some(call) = self.calls.get_mut(index) {
            call.provider_data = Some(data);
        }
    }

    /// The most bytes of text, and of one call's arguments.
    #[cfg_attr(not(feature = "openai"), allow(dead_code))]
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// The most calls.
    #[cfg_attr(not(feature = "openai"), allow(dead_code))]
    pub(crate) fn max_calls(&self) -> usize {
        self.max_calls
    }

    /// How many calls were started.
    #[cfg_attr(not(any(feature = "openai", feature = "gemini")), allow(dead_code))]
    pub(crate) fn calls(&self) -> usize {
        self.calls.len()
    }

    fn take_events(&mut self) -> Vec<ModelEvent> {
        std::mem::take(&mut self.events)
    }

    /// The whole response.
    fn finish(self) -> ModelResponse {
        let tool_calls = self
            .calls
            .into_iter()
            .zip(self.arguments)
            .map(|(mut call, raw)| {
                call.arguments = arguments_from_text(raw);
                call
            })
            .collect();
        ModelResponse {
            text: (!self.text.is_empty()).then_some(self.text),
            tool_calls,
            usage: self.usage,
        }
    }
}

/// Arguments from the model's text: the JSON it holds, `{}` when it is empty, and the text
/// itself when it is not JSON, for the agent to report to the model as invalid arguments.
pub(crate) fn arguments_from_text(text: String) -> Arguments {
    if text.trim().is_empty() {
        return Arguments::empty();
    }
    // Handed over as text, parsed only if something asks for a value: the agent runs the
    // call straight from it.
    Arguments::from_text(text)
}

/// An error event in the stream: the provider's message (bounded), retried like the status it
/// stands for (overload, rate limits, server errors, timeouts) while nothing was passed on.
pub(crate) fn error_event(value: &Value) -> Failed {
    let message = error_message(value).unwrap_or_else(|| "the stream sent an error".to_owned());
    let kind = value
        .get("error")
        .and_then(|e| e.get("type"))
        .and_then(Value::as_str);
    let retryable = matches!(
        kind,
        Some(
            "overloaded_error"
                | "api_error"
                | "rate_limit_error"
                | "timeout_error"
                | "server_error"
                // Gemini's statuses
                | "UNAVAILABLE"
                | "RESOURCE_EXHAUSTED"
                | "INTERNAL"
                | "DEADLINE_EXCEEDED"
        )
    );
    Failed::new(format!("the stream sent an error: {message}"), retryable)
}

/// Sends the `prepared` headers and body to `url` and streams the answer with `D`; see the
/// [module docs](self). A request that could not be prepared is the stream's only item.
pub(crate) fn post_stream<'a, D: Decode + 'a>(
    transport: &'a Transport,
    url: String,
    prepared: Result<(HeaderMap, Vec<u8>), ModelError>,
    api_key: &'a Secret<String>,
) -> BoxStream<'a, Result<ModelEvent, ModelError>> {
    let (client, (mut headers, body)) = match transport.client().and_then(|c| Ok((c, prepared?))) {
        Ok(ready) => ready,
        Err(error) => return stream::once(async { Err(error) }).boxed(),
    };
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    let driver = Driver::<D> {
        transport,
        client,
        url,
        headers,
        body,
        api_key,
        retries: 0,
        attempt: None,
        pending: VecDeque::new(),
        passed_on: 0,
        end: None,
        done: false,
    };
    stream::unfold(driver, |mut driver| async move {
        let item = driver.next().await?;
        Some((item, driver))
    })
    .fuse()
    .boxed()
}

/// The state of one streamed request.
struct Driver<'a, D> {
    transport: &'a Transport,
    client: &'a reqwest::Client,
    url: String,
    headers: HeaderMap,
    body: Vec<u8>,
    api_key: &'a Secret<String>,
    retries: u32,
    /// The response being read.
    attempt: Option<Attempt<D>>,
    /// Events read but not yet passed on.
    pending: VecDeque<ModelEvent>,
    /// How many events were passed on.
    passed_on: usize,
    /// How the stream ends, once the pending events are passed on.
    end: Option<Result<ModelResponse, ModelError>>,
    done: bool,
}

/// One response being read.
struct Attempt<D> {
    response: reqwest::Response,
    reader: Reader<D>,
    /// When the request was sent, or its last event came: the idle limits count from here.
    quiet_since: Instant,
}

/// Reading one event stream: its events parsed within `max_event_bytes`, its bytes counted
/// against `max_response_bytes`, its meaning decoded into the answer (of at most
/// `max_tool_calls` calls).
struct Reader<D> {
    parser: SseParser,
    decoder: D,
    answer: Assembly,
    received: usize,
    max_response_bytes: usize,
    /// The events read, for the idle limits.
    events: usize,
    /// Whether the answer began: an event carried text or a tool call.
    begun: bool,
}

impl<D: Decode> Reader<D> {
    fn new(max_event_bytes: usize, max_response_bytes: usize, max_tool_calls: usize) -> Self {
        Self {
            parser: SseParser::new(max_event_bytes),
            decoder: D::default(),
            answer: Assembly::new(max_response_bytes, max_tool_calls),
            received: 0,
            max_response_bytes,
            events: 0,
            begun: false,
        }
    }

    /// Reads the next piece of the body, or its end (`None`), appending the events it adds to
    /// `out`. `Ok(true)` once the answer is complete. The events before a failure are
    /// appended too, whatever the pieces: the bytes are read up to where they fail (an event
    /// or the whole stream over its limit, an event that is an error).
    fn read(
        &mut self,
        piece: Option<&[u8]>,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, Failed> {
        let mut events = Vec::new();
        // how the bytes failed, once the events before the failure are read
        let mut failed = None;
        match piece {
            Some(piece) => {
                let room = self.max_response_bytes - self.received;
                let (within, over) = piece.split_at(piece.len().min(room));
                self.received += within.len();
                if let Err(error) = self.parser.feed(within, &mut events) {
                    failed = Some(Failed::new(error.to_string(), false));
                } else if !over.is_empty() {
                    failed = Some(Failed::new(
                        format!(
                            "the stream is larger than {} bytes; raise `max_response_bytes` if \
                             the provider's answers can be that large",
                            self.max_response_bytes
                        ),
                        false,
                    ));
                }
            }
            None => self.parser.finish(&mut events),
        }
        self.events += events.len();
        let mut read = Ok(false);
        for event in events {
            read = self.decoder.event(event, &mut self.answer);
            if !matches!(read, Ok(false)) {
                break;
            }
        }
        let answered = self.answer.take_events();
        self.begun |= !answered.is_empty();
        out.extend(answered);
        let last = read?;
        match failed {
            // the stream's last event came before what failed: the answer is whole
            Some(failed) if !last => return Err(failed),
            _ => {}
        }
        if !last && piece.is_some() {
            return Ok(false);
        }
        if !last && !self.decoder.may_end() {
            return Err(Failed::new(
                "the stream ended before the answer was complete",
                true,
            ));
        }
        self.decoder.end()?;
        Ok(true)
    }
}

impl<D: Decode> Driver<'_, D> {
    async fn next(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                self.passed_on += 1;
                return Some(Ok(event));
            }
            if let Some(end) = self.end.take() {
                self.done = true;
                return Some(end.map(ModelEvent::Completed));
            }
            if self.done {
                return None;
            }
            let Err(failed) = self.step().await else {
                continue;
            };
            // dropping the response closes the connection
            self.attempt = None;
            let failed = if self.passed_on == 0 {
                // nothing was passed on: what was read is dropped, and the request may be
                // sent again
                self.pending.clear();
                if self
                    .transport
                    .wait_to_retry(&failed, &mut self.retries)
                    .await
                {
                    continue;
                }
                failed
            } else {
                failed.after_events(self.passed_on + self.pending.len())
            };
            self.end = Some(Err(failed.into_error(self.retries + 1, self.api_key)));
        }
    }

    /// Sends the request, or reads the next piece of the response.
    async fn step(&mut self) -> Result<(), Failed> {
        let Some(attempt) = self.attempt.as_mut() else {
            return self.open().await;
        };
        // the limit between two events: longer until the answer begins
        let (limit, setting) = if attempt.reader.begun {
            (self.transport.stream_idle_timeout, "stream_idle_timeout")
        } else {
            (self.transport.first_event_timeout(), "first_event_timeout")
        };
        let deadline = attempt.quiet_since.checked_add(limit);
        let chunk = attempt.response.chunk();
        let piece = match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, chunk)
                .await
                .map_err(|_| Failed::stalled(limit, setting, attempt.reader.begun))?,
            // a limit too large to represent is no limit
            None => chunk.await,
        }
        .map_err(|e| Failed::stream_broke(e, self.transport.timeout))?;
        let events = attempt.reader.events;
        let read = attempt.reader.read(piece.as_deref(), &mut self.pending);
        if attempt.reader.events > events {
            attempt.quiet_since = Instant::now();
        }
        if read? {
            let attempt = self.attempt.take().expect("an attempt is being read");
            self.end = Some(Ok(attempt.reader.answer.finish()));
        }
        Ok(())
    }

    /// Sends the request and starts reading an event stream; a JSON body is read whole.
    async fn open(&mut self) -> Result<(), Failed> {
        let request = self
            .transport
            .request(self.client, &self.url, &self.headers, &self.body);
        let sent = Instant::now();
        let limit = self.transport.first_event_timeout();
        let send = self.transport.send(request);
        let response = match sent.checked_add(limit) {
            Some(deadline) => tokio::time::timeout_at(deadline, send)
                .await
                .map_err(|_| Failed::stalled(limit, "first_event_timeout", false))??,
            None => send.await?,
        };
        if is_json(&response) {
            let body = self.transport.read_body(response).await?;
            match D::parse_whole(&body)
                .and_then(|r| tool_calls_within(r, self.transport.max_tool_calls))
            {
                Ok(response) => {
                    let mut events = stream_events(response);
                    if let Some(ModelEvent::Completed(response)) = events.pop() {
                        self.end = Some(Ok(response));
                    }
                    self.pending.extend(events);
                }
                // as `complete` answers it: not retried
                Err(error) => self.end = Some(Err(error)),
            }
            return Ok(());
        }
        self.attempt = Some(Attempt {
            response,
            reader: Reader::new(
                self.transport.max_event_bytes,
                self.transport.max_response_bytes,
                self.transport.max_tool_calls,
            ),
            quiet_since: sent,
        });
        Ok(())
    }
}

/// Whether the response is a JSON body rather than an event stream.
fn is_json(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("json"))
}

/// Reads a whole event stream held in memory, fed in pieces of `piece` bytes, as a provider
/// reads one from the network: the events it yields, ending with `Completed` or an error.
/// For the fuzz targets, the hostile-input tests and the benches.
pub(crate) fn read_all<D: Decode>(
    body: &[u8],
    piece: usize,
    max_event_bytes: usize,
    max_response_bytes: usize,
    max_tool_calls: usize,
) -> Vec<Result<ModelEvent, ModelError>> {
    let mut reader = Reader::<D>::new(max_event_bytes, max_response_bytes, max_tool_calls);
    let mut events = VecDeque::new();
    let mut pieces = body.chunks(piece.max(1));
    let end = loop {
        match reader.read(pieces.next(), &mut events) {
            Ok(true) => break Ok(ModelEvent::Completed(reader.answer.finish())),
            Ok(false) => {}
            Err(failed) => break Err(failed.into_error(1, &Secret::new(String::new()))),
        }
    };
    events.into_iter().map(Ok).chain([end]).collect()
}
