//! Bytes as a streamed model API response (server-sent events), read by each provider's
//! stream reader in pieces whose size the first byte chooses: reading never panics; it yields
//! the same events and the same ending however the bytes are cut; a stream that completes
//! keeps the promises of `Model::stream`, and an agent answers the tool calls it yields; an
//! error is short.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reticent::providers::__fuzz::{
    read_anthropic_stream, read_gemini_stream, read_openai_responses_stream, read_openai_stream,
};
use reticent_fuzz::check_stream;

/// Small limits, so that inputs reach them.
const MAX_EVENT_BYTES: usize = 4096;
const MAX_STREAM_BYTES: usize = 32 << 10;
const MAX_TOOL_CALLS: usize = 8;

fuzz_target!(|data: &[u8]| {
    let Some((&piece, body)) = data.split_first() else {
        return;
    };
    for read in [
        read_openai_stream,
        read_openai_responses_stream,
        read_anthropic_stream,
        read_gemini_stream,
    ] {
        let limits = (MAX_EVENT_BYTES, MAX_STREAM_BYTES, MAX_TOOL_CALLS);
        let whole = read(body, body.len(), limits.0, limits.1, limits.2);
        let pieces = read(body, usize::from(piece) + 1, limits.0, limits.1, limits.2);
        let text = |items: &[_]| format!("{items:?}");
        assert_eq!(text(&whole), text(&pieces), "pieces of {} bytes", piece + 1);
        check_stream(whole);
    }
});
