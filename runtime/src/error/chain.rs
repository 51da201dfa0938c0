//! Reading an error that came from outside: its `Display` and its chain of sources, bounded
//! and contained. The one place the crate walks an error chain — for the caller's record, the
//! spans, the MCP operator's hooks and the providers' errors.
//!
//! An error value is the developer's or a library's code, and it may misbehave: a `Display`
//! that panics or writes without end, a `source()` that panics, returns the error itself or
//! cycles through several. Each message is cut to [`MAX_MESSAGE_BYTES`], the walk stops after
//! [`MAX_SOURCES`] errors or at the first error seen before, and every call into the error runs
//! under `catch_unwind`, so none of that can crash or hang the caller.

use std::error::Error as StdError;
use std::fmt::{self, Write as _};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The most errors of one chain that are read (the error and its sources): a bound on a walk
/// over values a tool made, not the nesting limit of the model's arguments
/// (`tool::nesting::MAX_NESTING`).
pub(crate) const MAX_SOURCES: usize = 32;

/// The most bytes of one error's message that are read.
pub(crate) const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// `error`'s `Display`, cut to [`MAX_MESSAGE_BYTES`], or a note when it panics or fails.
pub(crate) fn display(error: &(dyn StdError + 'static)) -> String {
    let mut out = Bounded {
        text: String::new(),
        cut: false,
    };
    let written = catch_unwind(AssertUnwindSafe(|| write!(out, "{error}")));
    let Bounded { mut text, cut } = out;
    match written {
        Ok(Ok(())) => text,
        // the writer refused more: the message was longer than the limit
        Ok(Err(_)) if cut => {
            text.push_str("… (cut)");
            text
        }
        Ok(Err(_)) => "(the error's Display implementation returned an error)".to_owned(),
        Err(_) => "(the error's Display implementation panicked)".to_owned(),
    }
}

/// `error`'s message followed by its sources' (`: `-separated; a source whose message the text
/// already ends with is skipped), walked as the module says.
pub(crate) fn chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = String::new();
    let end = walk(error, |error| {
        let message = display(error);
        if text.is_empty() {
            text = message;
        } else if !text.ends_with(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    match end {
        Walked::Done | Walked::Stopped(()) => {}
        Walked::Cycle => text.push_str(" (the chain of sources loops back on itself)"),
        Walked::TooDeep => text.push_str(&format!(" (… more than {MAX_SOURCES} sources)")),
        Walked::SourcePanicked => text.push_str(" (the error's source() panicked)"),
    }
    text
}

/// The first error of `source`'s chain whose message `text` does not already hold: what an
/// error whose own message is `text` reports as its `source()`, so that a chain says each
/// message once. `None` when `text` holds them all, or the chain misbehaves (loops, panics,
/// runs too deep).
pub(crate) fn first_new_source<'e>(
    text: &str,
    source: &'e (dyn StdError + 'static),
) -> Option<&'e (dyn StdError + 'static)> {
    match walk(source, |error| {
        if text.contains(display(error).as_str()) {
            std::ops::ControlFlow::Continue(())
        } else {
            std::ops::ControlFlow::Break(error)
        }
    }) {
        Walked::Stopped(error) => Some(error),
        _ => None,
    }
}

/// How a walk of a chain ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Walked<B> {
    /// The last error has no source.
    Done,
    /// The visitor stopped the walk.
    Stopped(B),
    /// A source was an error already seen.
    Cycle,
    /// The chain is longer than [`MAX_SOURCES`].
    TooDeep,
    /// A `source()` panicked.
    SourcePanicked,
}

/// Calls `visit` with `error` and each of its sources in turn, as the module says.
pub(crate) fn walk<'e, B>(
    error: &'e (dyn StdError + 'static),
    mut visit: impl FnMut(&'e (dyn StdError + 'static)) -> std::ops::ControlFlow<B>,
) -> Walked<B> {
    // Errors are told apart by address and type (the vtable), so that two zero-sized errors
    // of different types at the same address are not mistaken for one.
    let mut seen: [Option<*const dyn StdError>; MAX_SOURCES] = [None; MAX_SOURCES];
    let mut current = error;
    for depth in 0..MAX_SOURCES {
        let address: *const dyn StdError = current;
        if seen[..depth]
            .iter()
            .flatten()
            .any(|seen| std::ptr::eq(*seen, address))
        {
            return Walked::Cycle;
        }
        seen[depth] = Some(address);
        if let std::ops::ControlFlow::Break(value) = visit(current) {
            return Walked::Stopped(value);
        }
        match catch_unwind(AssertUnwindSafe(|| current.source())) {
            Ok(Some(next)) => current = next,
            Ok(None) => return Walked::Done,
            Err(_) => return Walked::SourcePanicked,
        }
    }
    Walked::TooDeep
}

/// A writer that refuses more than [`MAX_MESSAGE_BYTES`], keeping what fits (cut at a
/// character boundary).
struct Bounded {
    text: String,
    cut: bool,
}

impl fmt::Write for Bounded {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = MAX_MESSAGE_BYTES - self.text.len();
        if s.len() <= room {
            self.text.push_str(s);
            return Ok(());
        }
        self.text.push_str(&s[..s.floor_char_boundary(room)]);
        self.cut = true;
        Err(fmt::Error)
    }
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::*;

    #[derive(Debug)]
    struct Selfish;
    impl fmt::Display for Selfish {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("selfish")
        }
    }
    impl StdError for Selfish {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            Some(self)
        }
    }

    #[derive(Debug)]
    struct PanickingSource;
    impl fmt::Display for PanickingSource {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("outer")
        }
    }
    impl StdError for PanickingSource {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            panic!("source panicked")
        }
    }

    #[derive(Debug)]
    struct Endless;
    impl fmt::Display for Endless {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            loop {
                f.write_str("all work and no play ")?;
            }
        }
    }
    impl StdError for Endless {}

    #[test]
    fn a_source_that_is_the_error_itself_ends_the_walk() {
        assert_eq!(
            chain(&Selfish),
            "selfish (the chain of sources loops back on itself)"
        );
    }

    #[test]
    fn a_panicking_source_ends_the_walk() {
        assert_eq!(
            chain(&PanickingSource),
            "outer (the error's source() panicked)"
        );
    }

    #[test]
    fn a_display_without_end_is_cut() {
        let text = display(&Endless);
        assert!(text.len() <= MAX_MESSAGE_BYTES + 10, "{}", text.len());
        assert!(text.ends_with("… (cut)"));
    }

    #[test]
    fn sources_are_joined_once() {
        let io = std::io::Error::other("disk full");
        let wrapped = std::io::Error::other(io);
        assert_eq!(chain(&wrapped), "disk full");
    }
}
