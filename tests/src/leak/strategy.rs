//! The proptest strategies that generate failures, and how many cases to run.

use proptest::prelude::*;
use reticent::ToolError;
use reticent::failures::RetryHint;

use super::canary::CANARY_LEN;
use super::errors::IO_KINDS;
use super::fault::{Depth, Fault, ReportFault, StoreFault};
use super::registry::Spec;

const MAX_MESSAGE_LEN: usize = ToolError::MAX_MESSAGE_LEN;

fn hint() -> impl Strategy<Value = Option<RetryHint>> {
    prop_oneof![
        2 => Just(None),
        1 => Just(Some(RetryHint::Transient)),
        1 => Just(Some(RetryHint::Permanent)),
    ]
}

/// Every way to fail; `timeouts` weighs stopped calls (each costs real time where the clock
/// is not paused).
pub fn fault(timeouts: u32) -> impl Strategy<Value = Fault> {
    use StoreFault::*;
    prop_oneof![
        16 => Just(Fault::Plain),
        8 => Just(Fault::Store(Unavailable)),
        4 => Just(Fault::Store(Throttled)),
        4 => Just(Fault::Store(Flaky)),
        4 => Just(Fault::Store(Gone)),
        4 => Just(Fault::Store(Backend)),
        8 => (any::<bool>(), any::<bool>())
            .prop_map(|(canary, hinted)| Fault::StoreArgument { canary, hinted }),
        12 => (0..IO_KINDS.len()).prop_map(Fault::Io),
        8 => any::<bool>().prop_map(|sourced| Fault::Boxed { sourced }),
        8 => (hint(), prop::bool::weighted(0.05))
            .prop_map(|(hint, fatal)| Fault::HandFailure { hint, fatal }),
        4 => Just(Fault::FailureFromError),
        20 => (any::<bool>(), hint()).prop_map(|(canary, hint)| Fault::Argument { canary, hint }),
        8 => Just(Fault::ArgumentSourced),
        8 => Just(Fault::Sourced),
        8 => any::<bool>().prop_map(|asynchronous| Fault::Panic { asynchronous }),
        timeouts => Just(Fault::Timeout),
        // fatal: each ends its run after its turn, so rarer
        1 => Just(Fault::Store(Corrupt)),
        1 => Just(Fault::Output),
        8 => any::<bool>().prop_map(|renamed| Fault::Aliased { renamed }),
        1 => prop_oneof![Just(Depth::Vec), Just(Depth::Field), Just(Depth::OptionOfAlias)]
            .prop_map(Fault::ResultInOutput),
        12 => (
            any::<bool>(),
            prop_oneof![
                Just(ReportFault::Argument),
                Just(ReportFault::Store),
                Just(ReportFault::Plain),
                Just(ReportFault::FailureOverArgument),
                Just(ReportFault::TooDeep),
            ]
        )
            .prop_map(|(eyre, inner)| Fault::Report { eyre, inner }),
    ]
}

/// Characters to build long text from: one to four bytes each.
const UNITS: [&str; 6] = ["a", "é", "€", "𝄞", "postgres://u:p@h/db ", "🦀ß"];

/// `bytes` bytes (exactly) of `unit` repeated, padded with ASCII at the start, so the text
/// ends with the unit.
fn fill_before(unit: &str, bytes: usize) -> String {
    "x".repeat(bytes % unit.len()) + &unit.repeat(bytes / unit.len())
}

/// `bytes` bytes (exactly) of `unit` repeated, padded with ASCII at the end, so the text
/// starts with the unit.
fn fill_after(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes / unit.len()) + &"x".repeat(bytes % unit.len())
}

/// Where the canary starts in a message of about `MAX_MESSAGE_LEN` bytes.
#[derive(Clone, Debug)]
enum Position {
    Anywhere(prop::sample::Index),
    /// This many bytes from the start: 260..360 puts it across the end of the head a cut
    /// message keeps (about two thirds of what is kept).
    FromStart(usize),
    /// This many bytes after it: 100..220 puts it across the start of the tail a cut message
    /// keeps (about a third of what is kept).
    FromEnd(usize),
}

/// The text around the canary: short text of any characters, long text, or text that puts the
/// canary near where a message is cut (its length is about `MAX_MESSAGE_LEN`, and the canary
/// anywhere in it, or across the end of the part kept at the start, or across the start of
/// the part kept at the end).
pub fn around() -> impl Strategy<Value = (String, String)> {
    let short_any = (".{0,24}", ".{0,24}");
    let short_ascii = ("[ -~]{0,60}", "[ -~]{0,60}");
    let long = (
        prop::sample::select(&UNITS[..]),
        0usize..4000,
        prop::sample::select(&UNITS[..]),
        0usize..4000,
    )
        .prop_map(|(a, n, b, m)| (fill_before(a, n), fill_after(b, m)));
    let position = prop_oneof![
        any::<prop::sample::Index>().prop_map(Position::Anywhere),
        (260usize..360).prop_map(Position::FromStart),
        (100usize..220).prop_map(Position::FromEnd),
    ];
    let near_cut = (
        prop::sample::select(&UNITS[..]),
        (MAX_MESSAGE_LEN - 60)..(MAX_MESSAGE_LEN + 160),
        position,
    )
        .prop_map(|(unit, total, position)| {
            // the canary starts at 0..=room
            let room = total - CANARY_LEN;
            let at = match position {
                Position::Anywhere(index) => index.index(room + 1),
                Position::FromStart(at) => at.min(room),
                Position::FromEnd(after) => room.saturating_sub(after),
            };
            (fill_before(unit, at), fill_after(unit, room - at))
        });
    prop_oneof![
        3 => short_any,
        3 => short_ascii,
        1 => long,
        4 => near_cut,
    ]
}

/// One generated failure: a [`fault`] and the text [`around`] its canary.
pub fn spec(timeouts: u32) -> impl Strategy<Value = Spec> {
    (fault(timeouts), around()).prop_map(|(fault, (prefix, suffix))| Spec {
        fault,
        prefix,
        suffix,
    })
}

/// `RETICENT_LEAK_SCALE` (default 1) times `cases`: set it to run more cases.
pub fn cases(cases: u32) -> u32 {
    let scale: f64 = std::env::var("RETICENT_LEAK_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    ((f64::from(cases) * scale).ceil() as u32).max(1)
}
