//! The idle limits of a stream, over real HTTP on loopback, for every provider: a stream whose
//! answer began and then goes quiet past `stream_idle_timeout` is cut within that limit and
//! ends with a retryable error naming it (the agent asks the turn again); an answer that does
//! not begin within `first_event_timeout` is a timeout of the request, which the provider
//! retries itself.

use std::time::{Duration, Instant};

use futures::StreamExt;
use reticent::{Message, Model, ModelRequest, model::ModelEvent};
use reticent_tests::conformance::{Piece, Settings, gemini, openai_responses};
use reticent_tests::provider::{Reply, StreamEnd, TestServer, anthropic, fixture, openai};

fn request() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::user("Where is order ORD-1042?")],
        ..ModelRequest::default()
    }
}

/// Builds a provider at a server.
type Build = Box<dyn Fn(&TestServer) -> Box<dyn Model>>;

/// Each provider, with short idle limits, and its recorded text stream.
fn providers(idle: Duration, first: Duration) -> Vec<(&'static str, Build, String)> {
    vec![
        (
            "openai",
            Box::new(move |server: &TestServer| -> Box<dyn Model> {
                Box::new(
                    openai(server)
                        .stream_idle_timeout(idle)
                        .first_event_timeout(first),
                )
            }),
            fixture("openai/stream_text.sse"),
        ),
        (
            "anthropic",
            Box::new(move |server: &TestServer| -> Box<dyn Model> {
                Box::new(
                    anthropic(server)
                        .stream_idle_timeout(idle)
                        .first_event_timeout(first),
                )
            }),
            fixture("anthropic/stream_text.sse"),
        ),
        (
            "openai-responses",
            Box::new(move |server: &TestServer| -> Box<dyn Model> {
                Box::new(
                    openai_responses::build(server, Settings::default())
                        .stream_idle_timeout(idle)
                        .first_event_timeout(first),
                )
            }),
            (openai_responses::spec().stream)(&text()),
        ),
        (
            "gemini",
            Box::new(move |server: &TestServer| -> Box<dyn Model> {
                Box::new(
                    gemini::build(server, Settings::default())
                        .stream_idle_timeout(idle)
                        .first_event_timeout(first),
                )
            }),
            // one event per `\n\n`, as `Reply::per_event` splits them
            (gemini::spec().stream)(&text()).replace("\r\n", "\n"),
        ),
    ]
}

/// The text of the two new providers' streams, in six deltas.
fn text() -> [Piece<'static>; 6] {
    [
        Piece::Text("Order"),
        Piece::Text(" ORD"),
        Piece::Text("-1042 has"),
        Piece::Text(" shipped."),
        Piece::Text(" The charge did not go through"),
        Piece::Text(", so nothing was billed."),
    ]
}

#[tokio::test]
async fn a_stream_quiet_past_the_idle_limit_after_its_answer_began_is_cut_within_it() {
    let idle = Duration::from_millis(200);
    // the server waits far longer than the limit between two events
    let pause = Duration::from_secs(1);
    for (name, model, body) in providers(idle, Duration::from_secs(10)) {
        let server = TestServer::start(vec![
            // every event `pause` after the one before
            Reply::events(body).per_event(pause),
        ])
        .await;
        let model = model(&server);
        let request = request();
        let mut stream = model.stream(&request);
        let mut last_event = Instant::now();
        let mut deltas = 0;
        let error = loop {
            match stream.next().await.expect("the stream ends with an item") {
                Ok(ModelEvent::Completed(response)) => {
                    panic!("{name}: the stream completed: {response:?}")
                }
                Ok(ModelEvent::TextDelta(_)) => {
                    deltas += 1;
                    last_event = Instant::now();
                }
                Ok(_) => last_event = Instant::now(),
                Err(error) => break error,
            }
        };
        let quiet = last_event.elapsed();
        assert!(deltas >= 1, "{name}: the answer began");
        assert!(
            quiet >= idle && quiet < pause,
            "{name}: cut after {quiet:?}, the limit is {idle:?}"
        );
        assert!(
            error
                .message()
                .ends_with("the stream sent no event for 200ms (`stream_idle_timeout`)"),
            "{name}: {error}"
        );
        assert!(error.message().contains("broke off"), "{name}: {error}");
        assert!(error.is_retryable(), "{name}");
        assert_eq!(
            server.received().len(),
            1,
            "{name}: the stream does not retry"
        );
        drop(stream);
        let ended = server.streams_ended(1).await;
        assert!(
            matches!(ended[..], [StreamEnd::ClientClosed { .. }]),
            "{name}: {ended:?}"
        );
    }
}

#[tokio::test]
async fn an_answer_that_does_not_begin_in_time_is_a_timeout_the_provider_retries() {
    let first = Duration::from_millis(300);
    for (name, build, body) in providers(Duration::from_secs(10), first) {
        let server = TestServer::start(vec![Reply::Hang, Reply::events(body)]).await;
        let model = build(&server);
        let request = request();
        let started = Instant::now();
        let events: Vec<_> = model.stream(&request).collect().await;
        assert!(
            matches!(events.last(), Some(Ok(ModelEvent::Completed(_)))),
            "{name}: {events:?}"
        );
        assert_eq!(server.received().len(), 2, "{name}: retried once");
        assert!(started.elapsed() >= first, "{name}");

        // Every attempt hangs: the error names the limit.
        let server = TestServer::start(vec![Reply::Hang, Reply::Hang, Reply::Hang]).await;
        let model = build(&server);
        let events: Vec<_> = model.stream(&request).collect().await;
        let Some(Err(error)) = events.last() else {
            panic!("{name}: {events:?}")
        };
        assert!(
            error
                .message()
                .starts_with("the answer did not begin within 300ms (`first_event_timeout`)"),
            "{name}: {error}"
        );
        assert!(error.is_retryable(), "{name}");
        assert_eq!(events.len(), 1, "{name}: nothing passed on");
    }
}
