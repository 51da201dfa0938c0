//! The `pattern` keyword as an [`ArgumentValidator`](super::ArgumentValidator) checks it, in
//! place of `jsonschema`'s own, so that the work of one check is bounded.
//!
//! A pattern is translated from ECMA-262 as `jsonschema` translates it, then compiled for the
//! linear-time `regex` engine when it can be: one without lookaround or backreferences, or
//! whose only lookarounds are lookaheads at its start (`^(?=.*\d)(?=.*[a-z]).{8,}$`), each
//! then matched as a pattern of its own. Its work grows linearly with the string, and is not
//! limited. Any other pattern runs on `fancy-regex`'s backtracking engine, whose work can grow
//! exponentially with the string (`^((?!\d)\w+\s?)+$` against 40 letters and a `!`); there:
//!
//! - a match gives up after [`BACKTRACK_LIMIT`] backtracking steps;
//! - a string longer than [`MAX_SUBJECT_LEN`] bytes is not matched (a lookaround inside a
//!   repetition rescans the string at every step: quadratic work, whatever the limit);
//! - the matches of one check cost at most [`CHECK_BUDGET`] (each the length of its string, at
//!   least [`MIN_COST`]) and [`CHECK_TIME`] of matching: the bytes keep what a call may hold
//!   the same on every machine; the time bounds a pattern whose every step is costly (twenty
//!   lookaheads in a repetition take 7 ms to give up on a short string). A string is matched
//!   against a pattern once per check, however often the schema asks.
//!
//! A match these bounds stop is *unchecked*, and so is one an engine fails on (a panic,
//! caught): the check refuses the call, saying which value could not be checked against which
//! pattern and why. A check that cannot finish is never a pass, also where the schema would
//! accept either outcome (under `not`, in one member of an `anyOf`). Within these bounds, the
//! matches of one check take [`CHECK_TIME`] and the one match then running at most.
//!
//! `jsonschema`'s own keyword gives up at a backtrack limit too, but then validates the whole
//! value again under each outcome of each match it gave up on, up to 64 times: work a budget
//! outside it could not count, which took 98 s for 2,000 such strings. `patternProperties`,
//! which stays `jsonschema`'s, is compiled for the linear-time engine only: a schema whose
//! `patternProperties` needs lookaround or backreferences does not compile.
//!
//! A check is one call of [`within_check`]: the budget and the outcomes are kept per thread,
//! as a check runs on one thread from start to end.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use jsonschema::{Keyword, PatternOptions, ValidationError, ValidationOptions};
use serde_json::Value;

use crate::render;

/// The keyword this module's validator replaces.
pub(super) const KEYWORD: &str = "pattern";

/// The most backtracking steps one match may take: four per byte of the longest string
/// matched, where a pattern that does not blow up takes one or two.
pub(super) const BACKTRACK_LIMIT: usize = 16_384;

/// The longest string, in bytes, matched against a pattern that needs backtracking.
pub(super) const MAX_SUBJECT_LEN: usize = 4_096;

/// What the matches of one check against patterns that need backtracking may cost: the
/// length of each string, at least [`MIN_COST`]. Up to 512 short strings, or 8 of the
/// longest.
pub(super) const CHECK_BUDGET: usize = 32_768;

/// What one match against a pattern that needs backtracking costs at least: a short string
/// can still take every step [`BACKTRACK_LIMIT`] allows.
pub(super) const MIN_COST: usize = 64;

/// How long the matches of one check against patterns that need backtracking may take in all,
/// checked before each match (the last may run past it). [`CHECK_BUDGET`] alone keeps what a
/// call may hold the same on every machine, but not its time where every step of a pattern is
/// costly: twenty lookaheads in a repetition take 7 ms to give up on a short string, where one
/// takes half a millisecond.
pub(super) const CHECK_TIME: Duration = Duration::from_millis(100);

/// The most a check may be estimated to cost and run where its caller polls: a few short
/// strings, a millisecond or two at worst.
const INLINE_COST: usize = 4 * MIN_COST;

/// Why a string could not be checked against a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unchecked {
    /// The backtracking engine gave up at its limit.
    GaveUp,
    /// An engine failed on it (panicked, or a runtime error other than the limit).
    EngineFailed,
    /// Longer than [`MAX_SUBJECT_LEN`].
    TooLong,
    /// Past the check's [`CHECK_BUDGET`] or [`CHECK_TIME`].
    OverBudget,
}

impl Unchecked {
    /// Why, as the model is told.
    pub(super) fn reason(self) -> String {
        match self {
            Self::GaveUp => render::gave_up(Some(BACKTRACK_LIMIT)),
            Self::EngineFailed => render::ENGINE_FAILED.to_owned(),
            Self::TooLong => render::too_long(MAX_SUBJECT_LEN),
            Self::OverBudget => render::over_budget(CHECK_BUDGET, CHECK_TIME),
        }
    }
}

/// `options` with this module's `pattern` keyword, and `patternProperties` on the linear-time
/// engine only. `backtracking` counts the `pattern`s compiled for the backtracking engine.
pub(crate) fn bounded(
    options: ValidationOptions<'_>,
    backtracking: Arc<AtomicUsize>,
) -> ValidationOptions<'_> {
    options
        .with_pattern_options(PatternOptions::regex())
        .with_keyword(KEYWORD, move |_, value, _| {
            let Value::String(source) = value else {
                return Err(ValidationError::schema(format!(
                    "{value} is not of type \"string\""
                )));
            };
            let pattern = Pattern::compile(source)
                .ok_or_else(|| ValidationError::schema(format!("{value} is not a \"regex\"")))?;
            if matches!(pattern.engine, Engine::Backtracking(_)) {
                backtracking.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Box::new(pattern))
        })
}

/// A compiled `pattern`.
struct Pattern {
    /// As the schema writes it: what the model is told, and what the check's outcomes are
    /// kept by.
    source: Arc<str>,
    engine: Engine,
}

enum Engine {
    Linear(regex::Regex),
    /// The lookaheads at the start and the rest, each matched on its own: all must match.
    Lookaheads(Box<[regex::Regex]>),
    Backtracking(fancy_regex::Regex),
}

impl Pattern {
    /// `None` when `source` is not a regular expression either engine compiles.
    fn compile(source: &str) -> Option<Self> {
        let translated = jsonschema_regex::to_rust_regex(source).ok()?;
        let engine = match regex::Regex::new(&translated) {
            Ok(regex) => Engine::Linear(regex),
            Err(_) => match lookaheads(source) {
                Some(parts) => Engine::Lookaheads(parts),
                None => Engine::Backtracking(
                    fancy_regex::RegexBuilder::new(&translated)
                        .backtrack_limit(BACKTRACK_LIMIT)
                        .build()
                        .ok()?,
                ),
            },
        };
        Some(Self {
            source: Arc::from(source),
            engine,
        })
    }

    /// Whether `subject` matches. A match that cannot be made is recorded in the check as
    /// unchecked, and is `false`.
    fn matches(&self, subject: &str) -> bool {
        let outcome = match &self.engine {
            Engine::Linear(regex) => linear(|| regex.is_match(subject)),
            Engine::Lookaheads(parts) => linear(|| parts.iter().all(|part| part.is_match(subject))),
            Engine::Backtracking(regex) => return self.backtrack(regex, subject).unwrap_or(false),
        };
        if let Err(unchecked) = outcome {
            with_check(|check| {
                if let Some(check) = check {
                    check.keep(&self.source, subject, outcome);
                    check.first(&self.source, unchecked);
                }
            });
        }
        outcome.unwrap_or(false)
    }

    /// A match on the backtracking engine, within the check's bounds.
    fn backtrack(&self, regex: &fancy_regex::Regex, subject: &str) -> Outcome {
        let known = with_check(|check| match check {
            Some(check) => check.charge(&self.source, subject),
            None => (subject.len() > MAX_SUBJECT_LEN).then_some(Err(Unchecked::TooLong)),
        });
        if let Some(outcome) = known {
            return outcome;
        }
        let started = Instant::now();
        let outcome = match catch_unwind(AssertUnwindSafe(|| regex.is_match(subject))) {
            Ok(Ok(matched)) => Ok(matched),
            Ok(Err(fancy_regex::Error::RuntimeError(
                fancy_regex::RuntimeError::BacktrackLimitExceeded,
            ))) => Err(Unchecked::GaveUp),
            Ok(Err(_)) | Err(_) => Err(Unchecked::EngineFailed),
        };
        let took = started.elapsed();
        with_check(|check| {
            if let Some(check) = check {
                check.ran(&self.source, subject, outcome, took);
            }
        });
        outcome
    }
}

/// A match on the linear-time engine: it always finishes, but may panic
/// (rust-lang/regex#1344).
fn linear(is_match: impl FnOnce() -> bool) -> Outcome {
    catch_unwind(AssertUnwindSafe(is_match)).map_err(|_| Unchecked::EngineFailed)
}

/// `source` as the lookaheads at its start and the rest, each compiled for the linear-time
/// engine, when it is of that shape and each compiles.
fn lookaheads(source: &str) -> Option<Box<[regex::Regex]>> {
    jsonschema_regex::split_leading_lookaheads(source)?
        .iter()
        .map(|part| {
            let translated = jsonschema_regex::to_rust_regex(part).ok()?;
            regex::Regex::new(&translated).ok()
        })
        .collect()
}

impl<'i> Keyword<'i> for Pattern {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        if Keyword::is_valid(self, instance) {
            Ok(())
        } else {
            // the source: `validate.rs` renders the violation, or asks the check whether it
            // is one of a string that could not be checked
            Err(ValidationError::custom(&*self.source))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        match instance {
            Value::String(subject) => self.matches(subject),
            _ => true,
        }
    }
}

/// How a match ended: matched or not, or unchecked.
type Outcome = Result<bool, Unchecked>;

/// One check's matches against patterns: what they cost, their outcomes.
#[derive(Default)]
struct Check {
    /// Bytes charged to the budget.
    spent: usize,
    /// Time the backtracking matches took.
    matching: Duration,
    /// By pattern and string: the outcome of each match on the backtracking engine, and of
    /// each match that could not be made, but for a string longer than [`MAX_SUBJECT_LEN`]
    /// (known by its length).
    outcomes: HashMap<Arc<str>, HashMap<Box<str>, Outcome>>,
    /// The patterns a backtracking match was asked of.
    backtracking: HashSet<Arc<str>>,
    /// The first match that could not be made: its pattern and why.
    first_unchecked: Option<(Arc<str>, Unchecked)>,
}

impl Check {
    /// Before a backtracking match: its outcome when it is known (made before, too long, or
    /// past the budget), or `None` once its cost is charged.
    fn charge(&mut self, source: &Arc<str>, subject: &str) -> Option<Outcome> {
        if !self.backtracking.contains(&**source) {
            self.backtracking.insert(Arc::clone(source));
        }
        if let Some(outcome) = self.known(source, subject) {
            if let Err(unchecked) = outcome {
                self.first(source, unchecked);
            }
            return Some(outcome);
        }
        let cost = subject.len().max(MIN_COST);
        if self.spent + cost > CHECK_BUDGET || self.matching >= CHECK_TIME {
            self.keep(source, subject, Err(Unchecked::OverBudget));
            self.first(source, Unchecked::OverBudget);
            return Some(Err(Unchecked::OverBudget));
        }
        self.spent += cost;
        None
    }

    /// After a backtracking match: how it ended, and how long it took.
    fn ran(&mut self, source: &Arc<str>, subject: &str, outcome: Outcome, took: Duration) {
        self.matching += took;
        self.keep(source, subject, outcome);
        if let Err(unchecked) = outcome {
            self.first(source, unchecked);
        }
    }

    fn keep(&mut self, source: &Arc<str>, subject: &str, outcome: Outcome) {
        self.outcomes
            .entry(Arc::clone(source))
            .or_default()
            .insert(subject.into(), outcome);
    }

    fn first(&mut self, source: &Arc<str>, unchecked: Unchecked) {
        self.first_unchecked
            .get_or_insert_with(|| (Arc::clone(source), unchecked));
    }

    /// The outcome of a match this check made or could not make, when it knows it.
    fn known(&self, source: &str, subject: &str) -> Option<Outcome> {
        if let Some(outcome) = self.outcomes.get(source).and_then(|s| s.get(subject)) {
            return Some(*outcome);
        }
        (self.backtracking.contains(source) && subject.len() > MAX_SUBJECT_LEN)
            .then_some(Err(Unchecked::TooLong))
    }
}

thread_local! {
    /// The check running on this thread, if one is.
    static CHECK: RefCell<Option<Check>> = const { RefCell::new(None) };
}

fn with_check<T>(f: impl FnOnce(Option<&mut Check>) -> T) -> T {
    CHECK.with(|check| f(check.borrow_mut().as_mut()))
}

/// Runs `check` as one check: its matches share one budget, and [`first_unchecked`] and
/// [`unchecked`] tell what it could not match. Inside another check, it is part of that one.
pub(crate) fn within_check<T>(check: impl FnOnce() -> T) -> T {
    /// Ends the check it opened, also when the check panics.
    struct Close(bool);
    impl Drop for Close {
        fn drop(&mut self) {
            if self.0 {
                CHECK.with(|check| check.borrow_mut().take());
            }
        }
    }
    let opened = CHECK.with(|current| {
        let mut current = current.borrow_mut();
        if current.is_some() {
            return false;
        }
        *current = Some(Check::default());
        true
    });
    let _close = Close(opened);
    check()
}

/// The first match the current check could not make: its pattern and why.
pub(super) fn first_unchecked() -> Option<(Arc<str>, Unchecked)> {
    with_check(|check| check?.first_unchecked.clone())
}

/// Why the current check could not match `value` against `source`, if it could not.
pub(super) fn unchecked(source: &str, value: &Value) -> Option<Unchecked> {
    let Value::String(subject) = value else {
        return None;
    };
    with_check(|check| check?.known(source, subject)?.err())
}

/// Whether checking `arguments` against `backtracking` patterns that need backtracking may
/// cost more than a check made where its caller polls: each string and property name, as the
/// budget counts it, against each such pattern.
pub(super) fn is_costly(arguments: &Value, backtracking: usize) -> bool {
    if backtracking == 0 {
        return false;
    }
    let cost = |s: &str| {
        if s.len() > MAX_SUBJECT_LEN {
            0
        } else {
            s.len().max(MIN_COST) * backtracking
        }
    };
    let mut total = 0usize;
    let mut values = vec![arguments];
    while let Some(value) = values.pop() {
        match value {
            Value::String(s) => total += cost(s),
            Value::Array(items) => values.extend(items),
            Value::Object(map) => {
                for (key, value) in map {
                    total += cost(key);
                    values.push(value);
                }
            }
            _ => {}
        }
        if total > INLINE_COST {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(source: &str) -> Pattern {
        Pattern::compile(source).expect("compiles")
    }

    #[test]
    fn each_pattern_runs_on_the_engine_it_needs() {
        assert!(matches!(compiled("^[a-z]+$").engine, Engine::Linear(_)));
        // catastrophic for a backtracking engine, linear on this one
        assert!(matches!(compiled("^(a+)+$").engine, Engine::Linear(_)));
        assert!(matches!(
            compiled("^(?=.*\\d)(?=.*[a-z]).{8,}$").engine,
            Engine::Lookaheads(_)
        ));
        assert!(matches!(
            compiled("^((?!\\d)\\w+\\s?)+$").engine,
            Engine::Backtracking(_)
        ));
        assert!(matches!(
            compiled("^(\\w+) \\1$").engine,
            Engine::Backtracking(_)
        ));
        assert!(Pattern::compile("(unclosed").is_none());
    }

    #[test]
    fn lookaheads_at_the_start_match_as_the_whole_pattern_does() {
        let password = compiled("^(?=.*\\d)(?=.*[a-z]).{8,}$");
        let whole = fancy_regex::Regex::new("^(?=.*\\d)(?=.*[a-z]).{8,}$").unwrap();
        for subject in ["abcdefg1", "abcdefgh", "12345678", "a1", "xxxxxxx9yyyy"] {
            assert_eq!(
                within_check(|| password.matches(subject)),
                whole.is_match(subject).unwrap(),
                "{subject}"
            );
        }
    }

    #[test]
    fn a_match_that_gives_up_is_unchecked_not_a_pass() {
        let evil = compiled("^((?!\\d)\\w+\\s?)+$");
        let subject = format!("{}!", "a".repeat(40));
        let (matched, first, why) = within_check(|| {
            let matched = evil.matches(&subject);
            (
                matched,
                first_unchecked(),
                unchecked(&evil.source, &Value::from(subject.as_str())),
            )
        });
        assert!(!matched);
        assert_eq!(first, Some((Arc::clone(&evil.source), Unchecked::GaveUp)));
        assert_eq!(why, Some(Unchecked::GaveUp));
        // a string it can match is matched
        assert!(within_check(|| evil.matches("two words")));
        assert_eq!(within_check(first_unchecked), None);
    }

    #[test]
    fn a_long_string_and_the_strings_past_the_budget_are_unchecked() {
        let words = compiled("^((?!\\d)\\w+\\s?)+$");
        let long = "a ".repeat(MAX_SUBJECT_LEN / 2 + 1);
        within_check(|| {
            assert!(!words.matches(&long));
            assert_eq!(
                unchecked(&words.source, &Value::from(long.as_str())),
                Some(Unchecked::TooLong)
            );
        });
        // each short string costs `MIN_COST`: the budget holds this many
        let fits = CHECK_BUDGET / MIN_COST;
        within_check(|| {
            // distinct words of letters only: `g`..`v` for the hex digits of `i`
            let word = |i: usize| -> String {
                format!("{i:x}")
                    .chars()
                    .map(|c| char::from(b'g' + c.to_digit(16).unwrap() as u8))
                    .collect()
            };
            for i in 0..fits {
                assert!(words.matches(&word(i)), "{i}");
            }
            assert_eq!(first_unchecked(), None);
            // matched again: already known, free
            assert!(words.matches(&word(0)));
            assert!(!words.matches("one more"));
            assert_eq!(
                first_unchecked().map(|(_, why)| why),
                Some(Unchecked::OverBudget)
            );
            assert_eq!(
                unchecked(&words.source, &Value::from("one more")),
                Some(Unchecked::OverBudget)
            );
            assert_eq!(unchecked(&words.source, &Value::from(word(1))), None);
        });
        // a new check has its own budget
        assert!(within_check(|| words.matches("one more")));
    }

    #[test]
    fn a_check_inside_another_is_part_of_it() {
        let evil = compiled("^((?!\\d)\\w+\\s?)+$");
        let subject = format!("{}!", "a".repeat(40));
        let first = within_check(|| {
            within_check(|| evil.matches(&subject));
            first_unchecked()
        });
        assert_eq!(first.map(|(_, why)| why), Some(Unchecked::GaveUp));
        // and it ends with the outer one
        assert_eq!(first_unchecked(), None);
    }

    #[test]
    fn the_cost_is_estimated_from_the_strings_and_names() {
        assert!(!is_costly(&serde_json::json!({"name": "ada"}), 1));
        let names = serde_json::json!({"names": vec!["a"; 100]});
        assert!(!is_costly(&names, 0));
        assert!(is_costly(&names, 1));
        assert!(is_costly(&serde_json::json!({"name": "a".repeat(300)}), 1));
        // too long to be matched: refused at no cost
        assert!(!is_costly(
            &serde_json::json!({"name": "a".repeat(MAX_SUBJECT_LEN + 1)}),
            1
        ));
    }
}
