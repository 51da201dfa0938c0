//! [`RetryPolicy`]: how many times a failed model call is tried again, and after what wait.
//! One policy, two places: a provider retries a request that failed before any of its answer
//! was passed on, and the agent loop retries a turn whose stream broke off after; both count
//! against the same budget and wait the same backoff.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// Whether an HTTP status is worth retrying: `408`, `409`, `429` and every `5xx`. The one
/// list the providers retry a request by, and the agent loop a broken turn by.
pub(crate) fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || (500..600).contains(&status)
}

/// How many times a failed model call is tried again, and how long to wait before each try:
/// exponential backoff with jitter, or what the server asked for with `retry-after`.
///
/// The HTTP [providers](crate::providers) retry a request with their policy (set with their
/// `max_retries`, `retry_delay` and `max_retry_delay`), and report it through
/// [`Model::retry_policy`](crate::Model::retry_policy). The agent loop retries a turn whose
/// stream broke off with the same policy and the same budget: the attempts the provider
/// already made for the turn count against it.
///
/// ```
/// use std::time::Duration;
/// use reticent::model::RetryPolicy;
///
/// let policy = RetryPolicy::new(3, Duration::from_millis(200), Duration::from_secs(10));
/// // the first retry waits between half and all of `retry_delay`
/// let wait = policy.delay(0, None).unwrap();
/// assert!(wait >= Duration::from_millis(100) && wait <= Duration::from_millis(200));
/// // a server's `retry-after` is honoured, up to `max_retry_delay`
/// assert_eq!(policy.delay(0, Some(Duration::from_secs(2))), Some(Duration::from_secs(2)));
/// assert_eq!(policy.delay(0, Some(Duration::from_secs(60))), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Tries after the first one. `0` never retries.
    pub max_retries: u32,
    /// The first wait when the server does not say how long to wait; it doubles on every
    /// retry, with jitter.
    pub retry_delay: Duration,
    /// The longest wait. A server that asks for a longer one is not retried.
    pub max_retry_delay: Duration,
}

impl Default for RetryPolicy {
    /// 2 retries, from 500 ms, waiting at most 30 s: the providers' defaults.
    fn default() -> Self {
        Self::new(2, Duration::from_millis(500), Duration::from_secs(30))
    }
}

impl RetryPolicy {
    /// A policy of `max_retries` retries, the first after about `retry_delay`, none after
    /// more than `max_retry_delay`.
    pub const fn new(max_retries: u32, retry_delay: Duration, max_retry_delay: Duration) -> Self {
        Self {
            max_retries,
            retry_delay,
            max_retry_delay,
        }
    }

    /// A policy that never retries.
    pub const fn never() -> Self {
        Self::new(0, Duration::ZERO, Duration::ZERO)
    }

    /// The wait before the next try, after `retries` retries were made: what the server asked
    /// for (`retry_after`), or `None` when that is longer than `max_retry_delay`; else
    /// `retry_delay` doubled `retries` times, at most `max_retry_delay`, of which between half
    /// and all ("equal jitter", so that clients spread out). It does not look at the budget.
    pub fn delay(&self, retries: u32, retry_after: Option<Duration>) -> Option<Duration> {
        match retry_after {
            Some(wait) if wait > self.max_retry_delay => None,
            Some(wait) => Some(wait),
            None => {
                let factor = 2u32.saturating_pow(retries);
                let full = self
                    .retry_delay
                    .saturating_mul(factor)
                    .min(self.max_retry_delay);
                // `half.mul_f64` of a number below 1 stays below `half`, so no overflow
                let half = full / 2;
                Some(half.saturating_add(half.mul_f64(random_unit())))
            }
        }
    }
}

/// A number in `[0, 1)`, different on every call; good enough for jitter.
fn random_unit() -> f64 {
    let bits = RandomState::new().build_hasher().finish();
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_within_its_bounds_and_never_overflows() {
        let policy = RetryPolicy::new(5, Duration::from_millis(100), Duration::from_secs(1));
        for retries in 0..5 {
            let full = Duration::from_millis(100 * 2u64.pow(retries)).min(Duration::from_secs(1));
            let wait = policy.delay(retries, None).unwrap();
            assert!(wait >= full / 2 && wait <= full, "{retries}: {wait:?}");
        }
        let extreme = RetryPolicy::new(u32::MAX, Duration::MAX, Duration::MAX);
        for retries in [0, 1, 63, 64, u32::MAX] {
            assert!(extreme.delay(retries, None).unwrap() >= Duration::MAX / 2);
        }
        assert_eq!(extreme.delay(0, Some(Duration::MAX)), Some(Duration::MAX));
        assert_eq!(policy.delay(0, Some(Duration::MAX)), None);
    }
}
