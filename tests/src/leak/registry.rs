//! The process-wide table the failing tools read their failure from.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use super::fault::Fault;

/// One generated failure: how the tool fails, and the text around the canary in its message.
#[derive(Clone, Debug)]
pub struct Spec {
    /// How the tool fails.
    pub fault: Fault,
    /// The text before the canary.
    pub prefix: String,
    /// The text after the canary.
    pub suffix: String,
}

/// A failure a tool can be asked for: its spec made concrete with its canary.
#[derive(Debug)]
pub struct Registered {
    /// What the tool is called with to fail this way: its `key` argument.
    pub key: u64,
    /// How the tool fails.
    pub fault: Fault,
    /// The secret in the message.
    pub canary: String,
    /// The message the tool puts in its error (in the source, for the sourced faults).
    pub message: String,
}

impl Registered {
    /// The tool that fails this way.
    pub fn tool(&self) -> &'static str {
        self.fault.tool()
    }
}

static TABLE: LazyLock<Mutex<HashMap<u64, Arc<Registered>>>> = LazyLock::new(Default::default);
static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

/// The failures of one case; they leave the table when it is dropped.
#[derive(Debug, Default)]
pub struct Registry {
    keys: Vec<u64>,
}

impl Registry {
    /// Makes `spec` something a tool can be asked for, with this canary.
    pub fn register(&mut self, spec: &Spec, canary: String) -> Arc<Registered> {
        let key = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
        let message = if spec.fault.holds_canary() {
            format!("{}{canary}{}", spec.prefix, spec.suffix)
        } else {
            format!("{}{}", spec.prefix, spec.suffix)
        };
        let registered = Arc::new(Registered {
            key,
            fault: spec.fault,
            canary,
            message,
        });
        TABLE.lock().unwrap().insert(key, Arc::clone(&registered));
        self.keys.push(key);
        registered
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
        for key in &self.keys {
            table.remove(key);
        }
    }
}

/// The failure registered under `key`.
pub(super) fn lookup(key: u64) -> Arc<Registered> {
    let table = TABLE.lock().unwrap();
    Arc::clone(table.get(&key).expect("the key was registered"))
}
