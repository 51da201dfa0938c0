//! Recording the spans a test makes, and the events in them, in a process that runs many tests
//! at once: what [`LeakCheck`](super::LeakCheck) reads the spans of a run with, and what a test
//! of telemetry can read them with too.
//!
//! One global subscriber serves the whole test binary: a per-test default subscriber
//! (`tracing::subscriber::set_default`) would race with other tests over tracing's global cache
//! of which call sites are enabled, and lose spans now and then. The subscriber's layer keeps
//! each span for the test that made it:
//!
//! - a span created on a thread that is capturing ([`capture_spans`]) belongs to that
//!   thread's test;
//! - a span whose parent belongs to a test belongs to the same test, on whatever thread it is
//!   created (a task spawned with the parent span on a worker thread of a multi-thread runtime);
//! - every other span is not recorded, nor made: the layer says it is not wanted, so a run
//!   that no test captures sees its spans disabled, as under no subscriber at all.
//!
//! The owner is stored in the span's own extensions, so a field recorded later, or the span's
//! close, reaches the right test from any thread, and two tests never see each other's spans.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, Once};

use tracing::Metadata;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{Layer, Registry};

/// One span as the capture saw it: its name, its parent and every field recorded on it, as
/// text.
#[derive(Clone, Debug)]
pub struct SpanRecord {
    /// The span's position among the spans of its test (span ids are reused, this is not).
    pub seq: usize,
    /// The span's name.
    pub name: &'static str,
    /// The parent's `seq`, when the parent was recorded for the same test.
    pub parent: Option<usize>,
    /// Every field recorded on the span, by name, as text.
    pub fields: BTreeMap<String, String>,
}

impl SpanRecord {
    /// The field's recorded value; `None` when it was never recorded.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// One event as the capture saw it: the span it happened in, its level and its fields (the
/// message is the field `message`).
#[derive(Clone, Debug)]
pub struct EventRecord {
    /// The `seq` of the span it happened in.
    pub span: Option<usize>,
    /// The event's level.
    pub level: tracing::Level,
    /// Every field of the event, by name, as text.
    pub fields: BTreeMap<String, String>,
}

impl EventRecord {
    /// The field's recorded value; `None` when the event has no such field.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// The spans, and the events in them, recorded for one test by [`capture_spans`].
#[derive(Clone, Debug, Default)]
pub struct Spans {
    recorded: Arc<Mutex<Vec<SpanRecord>>>,
    events: Arc<Mutex<Vec<EventRecord>>>,
}

impl Spans {
    /// Every span recorded so far, in the order they were created.
    pub fn all(&self) -> Vec<SpanRecord> {
        self.recorded.lock().unwrap().clone()
    }

    /// The spans named `name`, in the order they were created.
    pub fn named(&self, name: &str) -> Vec<SpanRecord> {
        self.all().into_iter().filter(|s| s.name == name).collect()
    }

    /// The only span named `name`; panics unless there is exactly one.
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
        self.events
            .lock()
            .unwrap()
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

    /// Records a new span; returns its `seq`.
    fn push(&self, name: &'static str, parent: Option<usize>, attrs: &Attributes<'_>) -> usize {
        let mut fields = BTreeMap::new();
        attrs.record(&mut FieldText(&mut fields));
        let mut recorded = self.recorded.lock().unwrap();
        let seq = recorded.len();
        recorded.push(SpanRecord {
            seq,
            name,
            parent,
            fields,
        });
        seq
    }

    fn same(&self, other: &Spans) -> bool {
        Arc::ptr_eq(&self.recorded, &other.recorded)
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

/// Which test a span belongs to, and where it is in that test's record: kept in the span's
/// extensions.
struct Owner {
    spans: Spans,
    seq: usize,
}

/// Records each span for the test it belongs to (see the module's documentation).
struct CaptureLayer;

thread_local! {
    /// The spans of the test capturing on this thread.
    static CURRENT: RefCell<Option<Spans>> = const { RefCell::new(None) };
}

impl<S> Layer<S> for CaptureLayer
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        // Whether a span is wanted depends on the test that makes it: asked each time.
        Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>, ctx: Context<'_, S>) -> bool {
        // An event is kept by `on_event` when its span, or the thread, belongs to a test; a
        // span is made only for a test, so that a run no test captures has no span at all, as
        // under no subscriber. (The runtime gives an explicit parent only to events.)
        metadata.is_event()
            || CURRENT.with(|c| c.borrow().is_some())
            || ctx
                .lookup_current()
                .is_some_and(|span| span.extensions().get::<Owner>().is_some())
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let parent = span.parent().and_then(|parent| {
            let extensions = parent.extensions();
            let owner = extensions.get::<Owner>()?;
            Some((owner.spans.clone(), owner.seq))
        });
        let spans = match (CURRENT.with(|c| c.borrow().clone()), &parent) {
            (Some(spans), _) => spans,
            (None, Some((spans, _))) => spans.clone(),
            (None, None) => return,
        };
        let parent = parent
            .filter(|(owner, _)| owner.same(&spans))
            .map(|(_, seq)| seq);
        let seq = spans.push(attrs.metadata().name(), parent, attrs);
        span.extensions_mut().insert(Owner { spans, seq });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let extensions = span.extensions();
        let Some(owner) = extensions.get::<Owner>() else {
            return;
        };
        let mut recorded = owner.spans.recorded.lock().unwrap();
        values.record(&mut FieldText(&mut recorded[owner.seq].fields));
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let owner = ctx.event_span(event).and_then(|span| {
            let extensions = span.extensions();
            let owner = extensions.get::<Owner>()?;
            Some((owner.spans.clone(), owner.seq))
        });
        let (spans, span) = match owner {
            Some((spans, seq)) => (spans, Some(seq)),
            None => match CURRENT.with(|c| c.borrow().clone()) {
                Some(spans) => (spans, None),
                None => return,
            },
        };
        let mut fields = BTreeMap::new();
        event.record(&mut FieldText(&mut fields));
        spans.events.lock().unwrap().push(EventRecord {
            span,
            level: *event.metadata().level(),
            fields,
        });
    }
}

/// Stops capturing on this thread when dropped.
#[derive(Debug)]
pub struct CaptureGuard(());

impl Drop for CaptureGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.borrow_mut().take());
    }
}

/// Records every span the calling test creates until the guard is dropped: the spans created
/// on this thread, and their descendants on any thread. In a current-thread runtime (the
/// default of `#[tokio::test]`) that is every span the test's runs make.
///
/// The first call installs the global subscriber; a test binary that captures spans must not
/// install another.
pub fn capture_spans() -> (Spans, CaptureGuard) {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        tracing::subscriber::set_global_default(Registry::default().with(CaptureLayer))
            .expect("no other global subscriber in a test binary that captures spans");
    });
    let spans = Spans::default();
    CURRENT.with(|c| *c.borrow_mut() = Some(spans.clone()));
    (spans, CaptureGuard(()))
}
