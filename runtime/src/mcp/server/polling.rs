//! SSE polling (SEP-1699) over streamable HTTP: a request's event stream is closed once it has
//! been open a while, with a hint of when to come back, and the client resumes it with a GET
//! that names the last event it read (`Last-Event-ID`) — so that a long call outlives proxies
//! and load balancers that cut quiet or long responses. [`HttpSessions`] is rmcp's
//! in-memory session manager with the window; [`EventLog`] keeps the events to resume from.
//!
//! Bounds: the log keeps at most [`MAX_STREAMS`] streams of at most [`MAX_EVENTS`] events
//! each, [`MAX_BYTES`] in all; a finished stream (its answer sent) is forgotten [`KEEP_FINISHED`] after it was
//! last written or read, and when the log is full the stream least recently written or read
//! goes first. Every stream sent to a client ends within its window; a resumed stream's
//! follower also gives up at a bound of its own.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::Either;
use futures::{Stream, StreamExt as _};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventId, EventStore, EventStoreError, EventStream, RestoreOutcome, ServerSseMessage, SessionId,
    SessionManager,
};
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, Sleep};
use uuid::Uuid;

/// How many streams the log keeps at most.
pub(crate) const MAX_STREAMS: usize = 1024;

/// How many events of one stream the log keeps at most: the latest. A client that resumes
/// from an event no longer kept gets the stream from the oldest event kept.
pub(crate) const MAX_EVENTS: usize = 256;

/// How many bytes of events (as JSON) the log keeps at most, over all its streams. Past it,
/// the streams least recently written or read go first; the latest event is always kept.
pub(crate) const MAX_BYTES: usize = 64 << 20;

/// What an event is counted as besides its message.
const EVENT_OVERHEAD: usize = 64;

/// How long a finished stream is kept after it was last written or read.
pub(crate) const KEEP_FINISHED: Duration = Duration::from_secs(60);

/// How often, at most, finished streams past their time are looked for.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// How many events a resumed stream's follower holds for a client reading slowly.
const FOLLOW_BUFFER: usize = 16;

/// The polling settings: how long a request's stream stays open, and the hint sent before it
/// is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Polling {
    pub(crate) open_for: Duration,
    pub(crate) retry: Duration,
}

/// The session manager of [`McpServer::http_service`](super::McpServer::http_service): rmcp's
/// [`LocalSessionManager`] (sessions in memory), and, with
/// [`McpServerBuilder::sse_polling`](super::McpServerBuilder::sse_polling), the window that
/// closes each request's event stream and the log its client resumes it from.
#[derive(Debug)]
pub struct HttpSessions {
    local: LocalSessionManager,
    polling: Option<Polling>,
}

impl HttpSessions {
    /// Sessions in memory, closing request streams as `polling` says (never with `None`).
    pub(crate) fn new(polling: Option<Polling>) -> Self {
        let mut local = LocalSessionManager::default();
        if let Some(polling) = polling {
            // The first event of each request's stream carries its id and the hint.
            local.session_config.sse_retry = Some(polling.retry);
            local = local.with_event_store(Arc::new(EventLog::new(polling)));
        }
        Self { local, polling }
    }

    /// rmcp's session manager these sessions are kept by.
    pub fn local(&self) -> &LocalSessionManager {
        &self.local
    }

    /// `stream`, closed at the end of the window when polling.
    fn windowed<S>(&self, stream: S) -> impl Stream<Item = ServerSseMessage> + Send + Sync + use<S>
    where
        S: Stream<Item = ServerSseMessage> + Send + Sync + 'static,
    {
        match self.polling {
            None => Either::Left(stream),
            Some(polling) => Either::Right(Window::new(stream, polling)),
        }
    }
}

impl SessionManager for HttpSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.local.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.local.create_stream(id, message).await?;
        Ok(self.windowed(stream))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.local.resume(id, last_event_id).await?;
        Ok(self.windowed(stream))
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.local.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.local.event_store()
    }
}

/// A stream that ends once it has been open for the window, with the hint of when to come
/// back as its last event, even when it never waits. An event ready when it opens is sent
/// however short the window (a request's stream opens with the event its client resumes
/// from).
struct Window<S> {
    inner: Pin<Box<S>>,
    close: Pin<Box<Sleep>>,
    retry: Duration,
    state: WindowState,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum WindowState {
    Opened,
    Sent,
    Closed,
}

impl<S> Window<S> {
    fn new(inner: S, polling: Polling) -> Self {
        Self {
            inner: Box::pin(inner),
            close: Box::pin(tokio::time::sleep(polling.open_for)),
            retry: polling.retry,
            state: WindowState::Opened,
        }
    }
}

impl<S: Stream<Item = ServerSseMessage>> Stream for Window<S> {
    type Item = ServerSseMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match this.state {
            WindowState::Closed => return Poll::Ready(None),
            // Over, also for a stream that never waits.
            WindowState::Sent if this.close.as_mut().poll(cx).is_ready() => {
                this.state = WindowState::Closed;
                return Poll::Ready(Some(ServerSseMessage::retry(this.retry)));
            }
            _ => {}
        }
        match this.inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(event)) => {
                this.state = WindowState::Sent;
                Poll::Ready(Some(event))
            }
            Poll::Ready(None) => {
                this.state = WindowState::Closed;
                Poll::Ready(None)
            }
            // The window's timer was polled above, and wakes this stream.
            Poll::Pending if this.state == WindowState::Sent => Poll::Pending,
            Poll::Pending => {
                std::task::ready!(this.close.as_mut().poll(cx));
                this.state = WindowState::Closed;
                Poll::Ready(Some(ServerSseMessage::retry(this.retry)))
            }
        }
    }
}

/// The events of request streams (and the session's own), kept for clients to resume from:
/// rmcp's [`EventStore`], in memory and bounded (see the module docs). An event's id is its
/// stream's random key and its place in the stream, so that no client can guess another's.
#[derive(Clone)]
pub(crate) struct EventLog(Arc<Shared>);

struct Shared {
    streams: Mutex<Streams>,
    polling: Polling,
}

struct Streams {
    /// By rmcp's name of the stream.
    by_name: HashMap<String, Log>,
    /// The name of the stream of each key.
    names: HashMap<Uuid, String>,
    /// When finished streams past their time were last looked for.
    swept: Instant,
    /// The size of every event kept.
    bytes: usize,
}

/// One stream's latest events.
struct Log {
    key: Uuid,
    /// The index of `events[0]` in the stream.
    first: u64,
    /// Each with its size.
    events: VecDeque<(ServerSseMessage, usize)>,
    /// The size of its events.
    bytes: usize,
    /// Whether the stream's answer (its last event) is in.
    finished: bool,
    /// When it was last written or read.
    touched: Instant,
    /// The index the next event will have, for followers to wait on.
    next: watch::Sender<u64>,
}

impl Log {
    fn next_index(&self) -> u64 {
        self.first + self.events.len() as u64
    }

    /// Forgets the oldest event kept; its size.
    fn forget_oldest(&mut self) -> usize {
        let Some((_, size)) = self.events.pop_front() else {
            return 0;
        };
        self.first += 1;
        self.bytes -= size;
        size
    }

    /// The events kept from index `from` on, and the index after them.
    fn from(&self, from: u64) -> (Vec<ServerSseMessage>, u64) {
        let skip = from.saturating_sub(self.first);
        let skip = usize::try_from(skip).unwrap_or(usize::MAX);
        (
            self.events
                .iter()
                .skip(skip)
                .map(|(event, _)| event.clone())
                .collect(),
            self.next_index(),
        )
    }
}

/// The size of `event`: its message as JSON, and [`EVENT_OVERHEAD`].
fn size(event: &ServerSseMessage) -> usize {
    /// Counts what is written.
    struct Count(usize);

    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    let mut count = Count(EVENT_OVERHEAD);
    if let Some(message) = &event.message {
        // Writing to a counter cannot fail, and rmcp's messages are JSON.
        let _ = serde_json::to_writer(&mut count, &**message);
    }
    count.0
}

/// Whether `event` ends its stream: a request's answer.
fn is_answer(event: &ServerSseMessage) -> bool {
    matches!(
        event.message.as_deref(),
        Some(ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_))
    )
}

impl Streams {
    fn new() -> Self {
        Self {
            by_name: HashMap::new(),
            names: HashMap::new(),
            swept: Instant::now(),
            bytes: 0,
        }
    }

    /// Forgets the stream rmcp names `name`.
    fn forget(&mut self, name: &str) {
        if let Some(log) = self.by_name.remove(name) {
            self.names.remove(&log.key);
            self.bytes -= log.bytes;
        }
    }

    /// The name of the stream least recently written or read, other than `except`.
    fn least_recent(&self, except: Option<&str>) -> Option<String> {
        self.by_name
            .iter()
            .filter(|(name, _)| Some(name.as_str()) != except)
            .min_by_key(|(_, log)| log.touched)
            .map(|(name, _)| name.clone())
    }

    /// Makes room for one more stream: the finished ones past their time go (looked for at
    /// most once every [`SWEEP_EVERY`] unless the log is full), and then, when still full,
    /// the one least recently written or read.
    fn make_room(&mut self) {
        let full = self.by_name.len() >= MAX_STREAMS;
        if full || self.swept.elapsed() >= SWEEP_EVERY {
            self.swept = Instant::now();
            let expired: Vec<String> = self
                .by_name
                .iter()
                .filter(|(_, log)| log.finished && log.touched.elapsed() > KEEP_FINISHED)
                .map(|(name, _)| name.clone())
                .collect();
            for name in expired {
                self.forget(&name);
            }
        }
        if self.by_name.len() >= MAX_STREAMS
            && let Some(name) = self.least_recent(None)
        {
            self.forget(&name);
        }
    }

    /// Keeps the events within [`MAX_BYTES`] once `current` was written: the other streams
    /// least recently written or read go first, then `current`'s oldest events, never its
    /// latest.
    fn within_budget(&mut self, current: &str) {
        while self.bytes > MAX_BYTES {
            if let Some(name) = self.least_recent(Some(current)) {
                self.forget(&name);
                continue;
            }
            match self.by_name.get_mut(current) {
                Some(log) if log.events.len() > 1 => self.bytes -= log.forget_oldest(),
                _ => return,
            }
        }
    }

    /// The stream whose key is `key`, marked as read now.
    fn read(&mut self, key: &Uuid) -> Option<&mut Log> {
        let log = self.by_name.get_mut(self.names.get(key)?)?;
        log.touched = Instant::now();
        Some(log)
    }
}

impl EventLog {
    pub(crate) fn new(polling: Polling) -> Self {
        Self(Arc::new(Shared {
            streams: Mutex::new(Streams::new()),
            polling,
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Streams> {
        // A panic while the lock is held leaves the log as consistent as any write does.
        self.0
            .streams
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn store(&self, stream: &str, event: &ServerSseMessage) -> EventId {
        let size = size(event);
        let mut streams = self.lock();
        if !streams.by_name.contains_key(stream) {
            streams.make_room();
            let key = Uuid::new_v4();
            streams.names.insert(key, stream.to_owned());
            streams.by_name.insert(
                stream.to_owned(),
                Log {
                    key,
                    first: 0,
                    events: VecDeque::new(),
                    bytes: 0,
                    finished: false,
                    touched: Instant::now(),
                    next: watch::Sender::new(0),
                },
            );
        }
        let log = streams
            .by_name
            .get_mut(stream)
            .expect("the stream was just added");
        let id = format!("{}-{}", log.key.simple(), log.next_index());
        let mut event = event.clone();
        event.event_id = Some(id.clone());
        log.finished |= is_answer(&event);
        log.events.push_back((event, size));
        log.bytes += size;
        let mut forgotten = 0;
        if log.events.len() > MAX_EVENTS {
            forgotten = log.forget_oldest();
        }
        log.touched = Instant::now();
        log.next.send_replace(log.next_index());
        streams.bytes = streams.bytes + size - forgotten;
        streams.within_budget(stream);
        id
    }

    /// The events after `last_event_id`, followed by those still to come until the stream's
    /// answer, or the bound.
    fn replay(&self, last_event_id: &str) -> Result<EventStream, EventStoreError> {
        let (key, index) = parse(last_event_id).ok_or("not an event id of this server")?;
        let mut streams = self.lock();
        let log = streams
            .read(&key)
            .ok_or("the stream of this event id is no longer kept")?;
        let (kept, next) = log.from(index.saturating_add(1));
        let replayed = futures::stream::iter(kept);
        if log.finished {
            return Ok(Box::pin(replayed));
        }
        let follower = Follower {
            key,
            next,
            changes: log.next.subscribe(),
            deadline: after(
                self.0
                    .polling
                    .open_for
                    .saturating_mul(2)
                    .saturating_add(self.0.polling.retry),
            ),
        };
        drop(streams);
        let (tx, mut rx) = mpsc::channel(FOLLOW_BUFFER);
        tokio::spawn(follower.run(self.clone(), tx));
        let followed = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
        Ok(Box::pin(replayed.chain(followed)))
    }
}

/// `wait` from now, or a year from now when that is later than a clock can say.
fn after(wait: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600))
}

/// `KEY-INDEX`, as [`EventLog`] writes an event id.
fn parse(id: &str) -> Option<(Uuid, u64)> {
    let (key, index) = id.rsplit_once('-')?;
    Some((Uuid::try_parse(key).ok()?, index.parse().ok()?))
}

/// Sends a resumed stream's new events as they are written, until its answer, the client
/// leaving, or the deadline.
struct Follower {
    key: Uuid,
    next: u64,
    changes: watch::Receiver<u64>,
    deadline: Instant,
}

impl Follower {
    async fn run(mut self, log: EventLog, tx: mpsc::Sender<ServerSseMessage>) {
        loop {
            tokio::select! {
                changed = tokio::time::timeout_at(self.deadline, self.changes.changed()) => {
                    // Past the deadline, or the stream is no longer kept.
                    if !matches!(changed, Ok(Ok(()))) {
                        return;
                    }
                }
                () = tx.closed() => return,
            }
            let (events, finished) = {
                let mut streams = log.lock();
                let Some(log) = streams.read(&self.key) else {
                    return;
                };
                let (events, next) = log.from(self.next);
                self.next = next;
                (events, log.finished)
            };
            for event in events {
                let sent = tokio::time::timeout_at(self.deadline, tx.send(event)).await;
                if !matches!(sent, Ok(Ok(()))) {
                    return;
                }
            }
            if finished {
                return;
            }
        }
    }
}

/// The future of an [`EventStore`] method, as the trait (written with `async_trait`) has it.
type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, EventStoreError>> + Send + 'a>>;

impl EventStore for EventLog {
    fn store_event<'life0, 'life1, 'life2, 'async_trait>(
        &'life0 self,
        stream_id: &'life1 str,
        event: &'life2 ServerSseMessage,
    ) -> StoreFuture<'async_trait, EventId>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        Self: 'async_trait,
    {
        let id = self.store(stream_id, event);
        Box::pin(std::future::ready(Ok(id)))
    }

    fn replay_events_after<'life0, 'life1, 'async_trait>(
        &'life0 self,
        last_event_id: &'life1 str,
    ) -> StoreFuture<'async_trait, EventStream>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(std::future::ready(self.replay(last_event_id)))
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock, EmptyResult, NumberOrString, ServerResult};

    use super::*;

    const POLLING: Polling = Polling {
        open_for: Duration::from_millis(200),
        retry: Duration::from_millis(50),
    };

    /// An event that is not an answer (a stream's first).
    fn priming() -> ServerSseMessage {
        ServerSseMessage::retry(POLLING.retry)
    }

    /// A request's answer, which ends its stream.
    fn answer() -> ServerSseMessage {
        ServerSseMessage::from_message(ServerJsonRpcMessage::response(
            ServerResult::EmptyResult(EmptyResult {}),
            NumberOrString::Number(1),
        ))
    }

    async fn ids(stream: EventStream) -> Vec<String> {
        let events = tokio::time::timeout(Duration::from_secs(5), stream.collect::<Vec<_>>())
            .await
            .expect("the stream ends");
        events.into_iter().map(|e| e.event_id.unwrap()).collect()
    }

    #[tokio::test]
    async fn a_stream_keeps_its_latest_events_and_resumes_from_the_oldest_kept() {
        let log = EventLog::new(POLLING);
        let first = log.store("s", &priming());
        for _ in 0..MAX_EVENTS + 9 {
            log.store("s", &priming());
        }
        let last = log.store("s", &answer());
        let (key, index) = parse(&last).unwrap();
        assert_eq!(index, MAX_EVENTS as u64 + 10);
        assert_eq!(parse(&first), Some((key, 0)));

        // The first event is no longer kept: the stream comes from the oldest that is.
        let resumed = ids(log.replay(&first).unwrap()).await;
        assert_eq!(resumed.len(), MAX_EVENTS);
        assert_eq!(resumed[0], format!("{}-11", key.simple()));
        assert_eq!(resumed.last(), Some(&last));
        // From the answer on, nothing is left.
        assert!(ids(log.replay(&last).unwrap()).await.is_empty());
    }

    #[tokio::test]
    async fn a_resumed_stream_follows_new_events_until_the_answer() {
        let log = EventLog::new(POLLING);
        let first = log.store("s", &priming());
        let resumed = log.replay(&first).unwrap();
        let writer = log.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            writer.store("s", &priming());
            tokio::time::sleep(Duration::from_millis(20)).await;
            writer.store("s", &answer());
        });
        let key = parse(&first).unwrap().0.simple().to_string();
        assert_eq!(ids(resumed).await, [format!("{key}-1"), format!("{key}-2")]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_follower_gives_up_at_its_deadline() {
        let log = EventLog::new(POLLING);
        let first = log.store("s", &priming());
        // Nothing more is written: the stream ends on its own, past two windows.
        let started = Instant::now();
        assert!(ids(log.replay(&first).unwrap()).await.is_empty());
        assert!(started.elapsed() >= POLLING.open_for * 2);
    }

    #[test]
    fn a_full_log_forgets_the_stream_least_recently_used() {
        let log = EventLog::new(POLLING);
        let oldest = log.store("stream-0", &priming());
        // Later than the oldest, by any clock's resolution.
        std::thread::sleep(Duration::from_millis(2));
        let kept = log.store("stream-1", &answer());
        for n in 2..MAX_STREAMS {
            log.store(&format!("stream-{n}"), &priming());
        }
        // Reading a stream counts as using it.
        assert!(log.replay(&kept).is_ok());
        log.store("one-more", &priming());
        assert!(log.replay(&oldest).is_err());
        assert!(log.replay(&kept).is_ok());
        assert_eq!(log.lock().by_name.len(), MAX_STREAMS);
    }

    #[tokio::test]
    async fn the_log_keeps_within_its_bytes_the_streams_last_used_and_always_the_latest_event() {
        let log = EventLog::new(POLLING);
        let text = "x".repeat(MAX_BYTES / 2 + 1024);
        let big = ServerSseMessage::from_message(ServerJsonRpcMessage::response(
            ServerResult::CallToolResult(CallToolResult::success(vec![ContentBlock::text(text)])),
            NumberOrString::Number(1),
        ));
        assert!(size(&big) > MAX_BYTES / 2);
        let a = log.store("a", &big);
        std::thread::sleep(Duration::from_millis(2));
        let b = log.store("b", &priming());
        // Over the budget: `a`, used least recently, goes.
        log.store("c", &big);
        assert!(log.replay(&a).is_err());
        assert!(log.replay(&b).is_ok());
        // Over it again with `c` alone: its oldest event goes, its latest stays.
        let latest = log.store("c", &big);
        let streams = log.lock();
        let c = &streams.by_name["c"];
        assert_eq!(c.events.len(), 1);
        assert_eq!(c.events[0].0.event_id.as_ref(), Some(&latest));
        assert!(streams.bytes <= MAX_BYTES);
        assert_eq!(
            streams.bytes,
            streams.by_name.values().map(|log| log.bytes).sum::<usize>()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_window_closes_a_busy_stream_too_and_sends_the_first_event_however_short() {
        let busy = futures::stream::repeat_with(priming);
        let sent: Vec<_> = Window::new(busy, POLLING)
            .then(|event| async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                event
            })
            .collect()
            .await;
        // About one event each 10 ms for 200 ms, then the hint.
        assert!((19..=22).contains(&sent.len()), "{}", sent.len());
        let instant = Polling {
            open_for: Duration::ZERO,
            retry: POLLING.retry,
        };
        let answered = futures::stream::iter([answer(), priming()]);
        let sent: Vec<_> = Window::new(answered, instant).collect().await;
        assert_eq!(sent.len(), 2, "the first event, then the hint");
        assert!(sent[0].message.is_some() && sent[1].message.is_none());
    }

    #[test]
    fn event_ids_name_a_random_key_per_stream() {
        let log = EventLog::new(POLLING);
        let a = parse(&log.store("a", &priming())).unwrap();
        let b = parse(&log.store("b", &priming())).unwrap();
        assert_ne!(a.0, b.0);
        assert_eq!((a.1, b.1), (0, 0));
        for id in [
            "",
            "0/0",
            "0",
            "nope-1",
            "-1",
            &format!("{}-x", a.0.simple()),
        ] {
            assert!(parse(id).is_none(), "{id}");
        }
        assert!(log.replay("00000000000000000000000000000000-0").is_err());
    }
}
