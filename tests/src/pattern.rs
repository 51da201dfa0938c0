//! A `pattern` whose match a backtracking engine cannot finish, for the tests that it refuses
//! the call rather than pass the value, and that a check of many strings is cut: the pattern,
//! the strings, tools whose schemas carry it, and a guard for a test that may stall its
//! thread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Words without digits: `^((?!\d)\w+\s?)+$`. Against 40 letters and a `!` its match blows
/// up, and a backtracking engine gives up.
pub const EVIL: &str = r"^((?!\d)\w+\s?)+$";

/// What the model is told when the value of `name` could not be checked against [`EVIL`].
pub const GAVE_UP: &str = "the value could not be checked against the pattern \
                           \"^((?!\\\\d)\\\\w+\\\\s?)+$\": matching gave up after 16384 \
                           backtracking steps";

/// 40 letters and a `!`: [`EVIL`]'s match against it gives up.
pub fn evil_string() -> String {
    format!("{}!", "a".repeat(40))
}

/// `n` distinct strings of 42 to 45 bytes, each as costly as [`evil_string`]: 2,000 of them
/// took 98 s to check in a release build before the check had a budget.
pub fn evil_strings(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            // `i` in letters: `g`..`v` for its hex digits
            let word: String = format!("{i:x}")
                .chars()
                .map(|c| char::from(b'g' + c.to_digit(16).map_or(0, |d| d as u8)))
                .collect();
            format!("{}{word}!", "a".repeat(40))
        })
        .collect()
}

/// Tools whose parameters carry [`EVIL`], and how often they ran.
#[derive(Debug, Default)]
pub struct Names {
    /// Calls that reached a tool.
    pub runs: AtomicUsize,
}

#[reticent::tools]
impl Names {
    /// Greet someone by name.
    #[tool]
    fn greet(
        &self,
        /// A name: words without digits.
        #[schemars(regex(pattern = r"^((?!\d)\w+\s?)+$"))]
        name: String,
    ) -> String {
        self.runs.fetch_add(1, Ordering::SeqCst);
        format!("hello {name}")
    }

    /// Greet everyone. Async: nothing but the call's own future runs it, so a check made as
    /// the tool is called is made where the caller polls, unless it is moved.
    #[tool]
    async fn greet_all(
        &self,
        /// Names: words without digits.
        #[schemars(inner(regex(pattern = r"^((?!\d)\w+\s?)+$")))]
        names: Vec<String>,
    ) -> usize {
        self.runs.fetch_add(1, Ordering::SeqCst);
        names.len()
    }
}

impl Names {
    /// Calls that reached a tool.
    pub fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

/// Runs `test` on a thread of its own, with a runtime of its own, for at most `limit`: a check
/// that stalls the thread it runs on (as one made where the call is polled did) fails the test
/// at the limit instead of hanging it, which a `tokio::time::timeout` on the stalled runtime
/// could not do.
pub fn guarded<T: Send + 'static>(
    limit: Duration,
    test: impl Future<Output = T> + Send + 'static,
) -> T {
    let (done, outcome) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let _ = done.send(runtime.block_on(test));
        runtime.shutdown_background();
    });
    match outcome.recv_timeout(limit) {
        Ok(outcome) => outcome,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("the test did not finish within {limit:?}: the check stalled")
        }
        // the test panicked: its panic, here
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match thread.join() {
            Err(payload) => std::panic::resume_unwind(payload),
            Ok(()) => unreachable!("a test that returns sends its outcome"),
        },
    }
}
