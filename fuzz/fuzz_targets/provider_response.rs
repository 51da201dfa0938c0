//! Bytes as the body of a model API response, read by each provider's parser: parsing never
//! panics, an error says so briefly, and whatever tool calls it yields, an agent answers every
//! one of them with a short text when they fail.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reticent::providers::__fuzz::{
    parse_anthropic, parse_gemini, parse_openai, parse_openai_responses,
};
use reticent_fuzz::{MAX_SHOWN, run_agent};

fuzz_target!(|data: &[u8]| {
    for parse in [
        parse_openai,
        parse_openai_responses,
        parse_anthropic,
        parse_gemini,
    ] {
        match parse(data) {
            Ok(response) => run_agent(response),
            Err(error) => assert!(
                error.message().len() < MAX_SHOWN,
                "the error is {} bytes long",
                error.message().len()
            ),
        }
    }
});
