//! Helpers shared by the agent and MCP tests: reading transcripts, and a tracing layer that
//! records spans and the events in them.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, Once};

use reticent::{Message, ModelRequest, ToolResult};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{Layer, Registry};

/// The tool results of a transcript, in order.
pub fn tool_results(messages: &[Message]) -> Vec<&ToolResult> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(result) => Some(result),
            _ => None,
        })
        .collect()
}

/// The last message of a request, which must be a tool result.
pub fn last_tool_result(request: &ModelRequest) -> &ToolResult {
    match request.messages.last() {
        Some(Message::Tool(result)) => result,
        other => panic!("the request does not end with a tool result: {other:?}"),
    }
}

/// The names of the tools a request offered.
pub fn offered(request: &ModelRequest) -> Vec<&str> {
    request.tools.iter().map(|t| t.name.as_str()).collect()
}

/// One span as a layer saw it: its name, its parent and every field recorded on it, as text.
#[derive(Clone, Debug)]
pub struct SpanRecord {
    /// The span's position among all recorded spans (span ids are reused, this is not).
    pub seq: usize,
    pub name: &'static str,
    /// The parent's `seq`.
    pub parent: Option<usize>,
    pub fields: BTreeMap<String, String>,
}

impl SpanRecord {
    /// The field's recorded value; `None` when it was never recorded.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// One event as a layer saw it: the span it happened in, its level and its fields (the
/// message is the field `message`).
#[derive(Clone, Debug)]
pub struct EventRecord {
    /// The `seq` of the span it happened in.
    pub span: Option<usize>,
    pub level: tracing::Level,
    pub fields: BTreeMap<String, String>,
}

impl EventRecord {
    /// The field's recorded value; `None` when the event has no such field.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

#[derive(Default)]
struct Recorded {
    spans: Vec<SpanRecord>,
    events: Vec<EventRecord>,
    /// Live span id → `seq`.
    live: HashMap<u64, usize>,
}

/// The spans recorded by a [`capture_spans`] layer.
#[derive(Clone, Default)]
pub struct Spans {
    recorded: Arc<Mutex<Recorded>>,
}

impl Spans {
    pub fn all(&self) -> Vec<SpanRecord> {
        self.recorded.lock().unwrap().spans.clone()
    }

    pub fn named(&self, name: &str) -> Vec<SpanRecord> {
        self.all().into_iter().filter(|s| s.name == name).collect()
    }

    pub fn one(&self, name: &str) -> SpanRecord {
        let spans = self.named(name);
        assert_eq!(spans.len(), 1, "expected one `{name}` span: {spans:#?}");
        spans.into_iter().next().unwrap()
    }

    /// The `execute_tool` span with `gen_ai.tool.call.id` = `call_id`.
    pub fn tool_call(&self, call_id: &str) -> SpanRecord {
        let spans: Vec<_> = self
            .named("execute_tool")
            .into_iter()
            .filter(|s| s.field("gen_ai.tool.call.id") == Some(call_id))
            .collect();
        assert_eq!(
            spans.len(),
            1,
            "expected one span of call {call_id}: {spans:#?}"
        );
        spans.into_iter().next().unwrap()
    }

    /// The events that happened in `span`, in order.
    pub fn events_in(&self, span: &SpanRecord) -> Vec<EventRecord> {
        let recorded = self.recorded.lock().unwrap();
        recorded
            .events
            .iter()
            .filter(|e| e.span == Some(span.seq))
            .cloned()
            .collect()
    }

    /// The name of the span's parent.
    pub fn parent_name(&self, span: &SpanRecord) -> Option<&'static str> {
        let parent = span.parent?;
        Some(self.all()[parent].name)
    }
}

struct FieldText<'a>(&'a mut BTreeMap<String, String>);

impl Visit for FieldText<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

/// Records into the [`Spans`] of the thread the span is created on, if it is capturing.
struct CaptureLayer;

thread_local! {
    static CURRENT: RefCell<Option<Spans>> = const { RefCell::new(None) };
}

fn current() -> Option<Spans> {
    CURRENT.with(|c| c.borrow().clone())
}

impl<S> Layer<S> for CaptureLayer
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(spans) = current() else { return };
        let mut fields = BTreeMap::new();
        attrs.record(&mut FieldText(&mut fields));
        let parent = ctx.span(id).and_then(|s| s.parent()).map(|p| p.id());
        let mut recorded = spans.recorded.lock().unwrap();
        let parent = parent.and_then(|p| recorded.live.get(&p.into_u64()).copied());
        let seq = recorded.spans.len();
        recorded.spans.push(SpanRecord {
            seq,
            name: attrs.metadata().name(),
            parent,
            fields,
        });
        recorded.live.insert(id.into_u64(), seq);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let Some(spans) = current() else { return };
        let mut recorded = spans.recorded.lock().unwrap();
        if let Some(&seq) = recorded.live.get(&id.into_u64()) {
            values.record(&mut FieldText(&mut recorded.spans[seq].fields));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let Some(spans) = current() else { return };
        let mut fields = BTreeMap::new();
        event.record(&mut FieldText(&mut fields));
        let span = ctx.event_span(event).map(|s| s.id());
        let mut recorded = spans.recorded.lock().unwrap();
        let span = span.and_then(|id| recorded.live.get(&id.into_u64()).copied());
        recorded.events.push(EventRecord {
            span,
            level: *event.metadata().level(),
            fields,
        });
    }

    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
        let Some(spans) = current() else { return };
        spans.recorded.lock().unwrap().live.remove(&id.into_u64());
    }
}

/// Stops capturing on this thread when dropped.
pub struct CaptureGuard(());

impl Drop for CaptureGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.borrow_mut().take());
    }
}

/// Records every span created on this thread until the guard is dropped. Use it in a
/// current-thread runtime (the default of `#[tokio::test]`), where every poll happens here.
///
/// One global subscriber serves every test and routes spans to the capturing thread: a
/// per-test default subscriber would race with other tests over tracing's global cache of
/// which call sites are enabled, and lose spans now and then.
pub fn capture_spans() -> (Spans, CaptureGuard) {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        tracing::subscriber::set_global_default(Registry::default().with(CaptureLayer))
            .expect("no other global subscriber in the agent tests");
    });
    let spans = Spans::default();
    CURRENT.with(|c| *c.borrow_mut() = Some(spans.clone()));
    (spans, CaptureGuard(()))
}
