//! A bounded parser of server-sent events (the `text/event-stream` format of the HTML
//! standard), fed the bytes of a response body in whatever pieces they arrive.
//!
//! Lines end with `\n`, `\r\n` or `\r`, also when the two bytes of `\r\n` arrive in different
//! pieces; a line starting with `:` is a comment; `data:` lines of one event are joined with
//! `\n`; one space after the colon is dropped; `event:` names the event; `id:`, `retry:` and
//! unknown fields are ignored (these streams are never resumed); an empty line ends the event,
//! and an event without data is not dispatched. A byte order mark at the start is skipped.
//! Bytes are kept until the event ends, so a UTF-8 character split between pieces arrives
//! whole; bytes that are not UTF-8 are replaced with U+FFFD, as the standard says.
//!
//! It is bounded: the bytes held for one event (its fields and the line being read) may not
//! exceed `max_event_bytes`; past that the parser fails with [`EventTooLarge`] rather than
//! holding more.
//!
//! Hand-written rather than taken from `sse-stream` or `eventsource-stream`: neither bounds
//! the size of one event, and bounding that from the outside would mean counting their input
//! and guessing where their events end.

use std::fmt;

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field; empty when the event had none (a `message` event).
    pub(crate) event: String,
    /// The `data:` lines, joined with `\n`.
    pub(crate) data: String,
}

/// An event (or one line) held more than the limit before it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EventTooLarge {
    pub(crate) limit: usize,
}

impl fmt::Display for EventTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a stream event is larger than {} bytes; raise `max_event_bytes` if the provider's \
             events can be that large",
            self.limit
        )
    }
}

/// The parser; see the [module docs](self).
#[derive(Debug)]
pub(crate) struct SseParser {
    max_event_bytes: usize,
    /// The line being read, without its end.
    line: Vec<u8>,
    /// The data of the event being read: each `data:` line followed by `\n`.
    data: Vec<u8>,
    /// Whether the event has a `data:` line (an empty one counts).
    has_data: bool,
    /// The `event:` field of the event being read.
    event: Vec<u8>,
    /// The last piece ended with `\r`: a `\n` at the start of the next one belongs to it.
    after_cr: bool,
    /// Whether a line ended yet: a byte order mark is skipped at the start of the first.
    started: bool,
}

impl SseParser {
    pub(crate) fn new(max_event_bytes: usize) -> Self {
        Self {
            max_event_bytes,
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            event: Vec::new(),
            after_cr: false,
            started: false,
        }
    }

    /// Reads the next piece of the body, appending the events it completes to `out`.
    pub(crate) fn feed(
        &mut self,
        mut bytes: &[u8],
        out: &mut Vec<SseEvent>,
    ) -> Result<(), EventTooLarge> {
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.hold(&bytes[..end])?;
            let line = std::mem::take(&mut self.line);
            self.line_ended(&line, out);
            self.line = line;
            self.line.clear();
            if bytes[end] == b'\r' {
                match bytes.get(end + 1) {
                    Some(b'\n') => bytes = &bytes[end + 2..],
                    Some(_) => bytes = &bytes[end + 1..],
                    None => {
                        self.after_cr = true;
                        bytes = &[];
                    }
                }
            } else {
                bytes = &bytes[end + 1..];
            }
        }
        self.hold(bytes)
    }

    /// The end of the body: an event whose last line ended but which had no empty line after
    /// it is dispatched (servers that omit the final empty line); a line cut short is dropped.
    pub(crate) fn finish(&mut self, out: &mut Vec<SseEvent>) {
        self.line.clear();
        self.dispatch(out);
    }

    /// Appends `bytes` to the line being read, within the limit.
    fn hold(&mut self, bytes: &[u8]) -> Result<(), EventTooLarge> {
        let held = self.line.len() + self.data.len() + self.event.len();
        if bytes.len() > self.max_event_bytes.saturating_sub(held) {
            return Err(EventTooLarge {
                limit: self.max_event_bytes,
            });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn line_ended(&mut self, mut line: &[u8], out: &mut Vec<SseEvent>) {
        if !std::mem::replace(&mut self.started, true) {
            // a byte order mark may only start the stream
            line = line
                .strip_prefix(b"\xEF\xBB\xBF".as_slice())
                .unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.has_data = true;
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        let mut data = std::mem::take(&mut self.data);
        if !std::mem::take(&mut self.has_data) {
            return;
        }
        data.pop(); // the last `\n`
        out.push(SseEvent {
            event: text(event),
            data: text(data),
        });
    }
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    /// Feeds `input` in pieces of `size` bytes and finishes.
    fn parse_in(input: &[u8], size: usize, limit: usize) -> Result<Vec<SseEvent>, EventTooLarge> {
        let mut parser = SseParser::new(limit);
        let mut out = Vec::new();
        for piece in input.chunks(size.max(1)) {
            parser.feed(piece, &mut out)?;
        }
        parser.finish(&mut out);
        Ok(out)
    }

    /// Parses `input` whole and in every piece size, which must all agree.
    fn parse(input: &str) -> Vec<SseEvent> {
        let whole = parse_in(input.as_bytes(), input.len(), 1 << 20).unwrap();
        for size in 1..input.len() {
            let pieces = parse_in(input.as_bytes(), size, 1 << 20).unwrap();
            assert_eq!(pieces, whole, "pieces of {size} bytes");
        }
        whole
    }

    #[test]
    fn events_and_data() {
        let input = "event: message_start\ndata: {\"a\":1}\n\ndata: second\n\n";
        assert_eq!(
            parse(input),
            vec![event("message_start", "{\"a\":1}"), event("", "second")]
        );
    }

    #[test]
    fn every_line_ending() {
        for input in [
            "data: x\r\n\r\ndata: y\r\n\r\n",
            "data: x\r\rdata: y\r\r",
            "data: x\n\ndata: y\n\n",
            "data: x\r\n\rdata: y\n\r\n",
        ] {
            assert_eq!(
                parse(input),
                vec![event("", "x"), event("", "y")],
                "{input:?}"
            );
        }
    }

    #[test]
    fn multi_line_data_comments_and_other_fields() {
        let input =
            ": keep-alive\nid: 7\nretry: 100\ndata: one\n: between\ndata:two\ndata\nfoo: bar\n\n";
        assert_eq!(parse(input), vec![event("", "one\ntwo\n")]);
    }

    #[test]
    fn only_one_space_after_the_colon_is_dropped() {
        assert_eq!(parse("data:  x \n\n"), vec![event("", " x ")]);
    }

    #[test]
    fn an_event_without_data_is_not_dispatched() {
        assert_eq!(
            parse("event: ping\n\n: comment\n\n\n\ndata: x\n\n"),
            vec![event("", "x")]
        );
        // the event name does not carry over to the next event
        assert_eq!(parse("event: a\n\ndata: x\n\n"), vec![event("", "x")]);
        assert_eq!(parse("data:\n\n"), vec![event("", "")]);
    }

    #[test]
    fn a_byte_order_mark_at_the_start_is_skipped() {
        // later, it is part of a field name no one knows
        assert_eq!(
            parse("\u{feff}data: x\n\n\u{feff}data: y\n\n"),
            vec![event("", "x")]
        );
    }

    #[test]
    fn utf8_split_between_pieces_arrives_whole() {
        let input = "data: {\"text\":\"héllo wörld 日本語 🦀\"}\n\n";
        assert_eq!(
            parse(input),
            vec![event("", "{\"text\":\"héllo wörld 日本語 🦀\"}")]
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_are_replaced() {
        let out = parse_in(b"data: a\xffb\n\n", 3, 100).unwrap();
        assert_eq!(out, vec![event("", "a\u{fffd}b")]);
    }

    #[test]
    fn the_end_dispatches_a_finished_line_but_not_a_cut_one() {
        assert_eq!(parse("data: [DONE]\n"), vec![event("", "[DONE]")]);
        assert_eq!(parse("data: x\n\ndata: {\"cut"), vec![event("", "x")]);
    }

    #[test]
    fn an_event_over_the_limit_is_refused() {
        let limit = 64;
        let data = "x".repeat(40);
        let fits = format!("data: {data}\n\ndata: {data}\n\n");
        for size in [1, 7, fits.len()] {
            assert_eq!(parse_in(fits.as_bytes(), size, limit).unwrap().len(), 2);
        }
        // two lines of one event, each under the limit, together over it
        let over = format!("data: {data}\ndata: {data}\n\n");
        // one line with no end, over the limit
        let endless = "y".repeat(1000);
        for input in [over.as_str(), endless.as_str()] {
            for size in [1, 7, input.len()] {
                assert_eq!(
                    parse_in(input.as_bytes(), size, limit),
                    Err(EventTooLarge { limit }),
                    "{size}"
                );
            }
        }
    }

    #[test]
    fn comments_do_not_count_towards_the_next_event() {
        let limit = 32;
        let input = format!(": {}\n: {}\ndata: x\n\n", "c".repeat(30), "c".repeat(30));
        assert_eq!(
            parse_in(input.as_bytes(), 5, limit).unwrap(),
            vec![event("", "x")]
        );
    }
}
