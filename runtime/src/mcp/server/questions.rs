//! The approval questions a server asked clients of protocol 2026-07-28 and later, which allow
//! the server no requests of its own: the call is answered with an input-required result (the
//! question, and a `requestState`), and the client sends it again with the user's answer and
//! that state. The state is a random handle to what the server keeps here — the digest of the
//! call the user was shown — so it cannot be forged, names only the call it was made for, is
//! used at most once, and expires with the server's wait for an answer. The server keeps at
//! most [`MAX_QUESTIONS`] at once.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::agent::CallDigest;

/// How many questions a server keeps waiting for their answer at once.
pub(super) const MAX_QUESTIONS: usize = 1024;

/// The questions waiting for their answer, by the state their call was answered with.
#[derive(Debug)]
pub(crate) struct Questions {
    waiting: Mutex<HashMap<String, Question>>,
    /// How long a question waits for its answer.
    ttl: Duration,
}

#[derive(Debug)]
struct Question {
    /// The digest of the call the user is shown.
    digest: CallDigest,
    asked: Instant,
}

/// The server already keeps [`MAX_QUESTIONS`] questions that may still be answered.
#[derive(Debug)]
pub(super) struct Full;

impl Questions {
    /// No questions; each asked waits `ttl` for its answer.
    pub(super) fn new(ttl: Duration) -> Self {
        Self {
            waiting: Mutex::new(HashMap::new()),
            ttl,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Question>> {
        // A panic while the lock was held left the map whole: entries are inserted and
        // removed in one statement.
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps a question about the call whose digest is `digest`; the state the client sends
    /// back with its answer.
    pub(super) fn ask(&self, digest: CallDigest) -> Result<String, Full> {
        let now = Instant::now();
        let mut waiting = self.lock();
        if waiting.len() >= MAX_QUESTIONS {
            waiting.retain(|_, question| now.duration_since(question.asked) < self.ttl);
            if waiting.len() >= MAX_QUESTIONS {
                return Err(Full);
            }
        }
        // 122 random bits: a state nobody was sent is never guessed.
        let state = uuid::Uuid::new_v4().simple().to_string();
        waiting.insert(state.clone(), Question { digest, asked: now });
        Ok(state)
    }

    /// The digest of the call the question whose state is `state` was about, if the server
    /// asked it and it is still waiting; it is answered then, and the state is good no more.
    pub(super) fn answer(&self, state: &str) -> Option<CallDigest> {
        let question = self.lock().remove(state)?;
        (question.asked.elapsed() < self.ttl).then_some(question.digest)
    }

    /// How many questions are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn digest(account: &str) -> CallDigest {
        CallDigest::of("close_account", &json!({ "account": account }))
    }

    #[tokio::test(start_paused = true)]
    async fn a_state_answers_its_question_once_and_only_within_the_wait() {
        let questions = Questions::new(Duration::from_secs(60));
        let first = questions.ask(digest("ACC-1")).unwrap();
        let second = questions.ask(digest("ACC-2")).unwrap();
        assert_ne!(first, second);
        assert_eq!(questions.answer("forged"), None);
        assert_eq!(questions.answer(&first), Some(digest("ACC-1")));
        assert_eq!(questions.answer(&first), None, "used once");

        tokio::time::advance(Duration::from_secs(61)).await;
        assert_eq!(questions.answer(&second), None, "expired");
        assert_eq!(questions.len(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_keeps_a_bounded_number_of_questions() {
        let questions = Questions::new(Duration::from_secs(60));
        for _ in 0..MAX_QUESTIONS {
            questions.ask(digest("ACC-1")).unwrap();
        }
        assert!(questions.ask(digest("ACC-1")).is_err(), "full");
        assert_eq!(questions.len(), MAX_QUESTIONS);

        // Expired questions make room.
        tokio::time::advance(Duration::from_secs(60)).await;
        let state = questions.ask(digest("ACC-2")).unwrap();
        assert_eq!(questions.len(), 1);
        assert_eq!(questions.answer(&state), Some(digest("ACC-2")));
    }
}
