//! A call's idempotency key ([`ToolContext::idempotency_key`]): where it comes from, and how it
//! is written.
//!
//! A key is the same for one call wherever that call runs again — a turn the loop asks again, a
//! run resumed from its [`RunState`](crate::RunState), a Restate invocation replayed, an MCP
//! request the client sends again with its own key — and different for every other call, so
//! that an API that takes an `Idempotency-Key` header applies the call once.

use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use sha2::{Digest, Sha256};

use super::ToolContext;

/// Where a call's key comes from.
#[derive(Clone, Debug, Default)]
pub(crate) enum KeySource {
    /// Nothing stable: a random key, made when it is first asked for.
    #[default]
    Fresh,
    /// A call of an agent run: the run's id, the turn, and the call's place in the turn.
    Run {
        run: Arc<str>,
        turn: u32,
        index: u32,
    },
    /// A call an MCP client sent with its own key (`_meta.idempotencyKey`).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    Client(Arc<str>),
    /// Given as it is ([`ToolContext::with_idempotency_key`]).
    Given(Arc<str>),
}

/// A context's key: where it comes from, and the key once it is written.
#[derive(Clone, Debug, Default)]
pub(crate) struct Idempotency {
    source: KeySource,
    key: OnceLock<Box<str>>,
}

impl Idempotency {
    pub(crate) fn new(source: KeySource) -> Self {
        Self {
            source,
            key: OnceLock::new(),
        }
    }

    /// The key of a call of the tool `tool`.
    pub(crate) fn key(&self, tool: &str) -> &str {
        self.key.get_or_init(|| derive(&self.source, tool))
    }
}

/// What the derived keys hash first, so that they never equal a hash of anything else.
const DOMAIN: &[u8] = b"reticent idempotency key v1";

/// The key of a call of `tool` from `source`: a UUID (version 8, as RFC 9562 lets a name-based
/// UUID be made with SHA-256) of the source and the tool, or a random one (version 4).
fn derive(source: &KeySource, tool: &str) -> Box<str> {
    let mut hash = Sha256::new();
    hash.update(DOMAIN);
    let mut field = |bytes: &[u8]| {
        // Each field with its length: no two sources write the same bytes.
        hash.update((bytes.len() as u64).to_be_bytes());
        hash.update(bytes);
    };
    match source {
        KeySource::Given(key) => return Box::from(&**key),
        KeySource::Fresh => return uuid(random(), 4),
        KeySource::Run { run, turn, index } => {
            field(b"run");
            field(run.as_bytes());
            field(&turn.to_be_bytes());
            field(&index.to_be_bytes());
        }
        KeySource::Client(key) => {
            field(b"mcp");
            field(key.as_bytes());
        }
    }
    field(tool.as_bytes());
    let digest = hash.finalize();
    let mut bytes = [0; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid(bytes, 8)
}

/// 16 random bytes from the operating system; from the process's hasher keys and the clock if
/// it has none to give (a key must still differ from every other call's).
fn random() -> [u8; 16] {
    let mut bytes = [0; 16];
    if getrandom::fill(&mut bytes).is_err() {
        use std::hash::{BuildHasher, Hasher};
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mut a = std::collections::hash_map::RandomState::new().build_hasher();
        a.write_u128(nanos);
        let b = std::collections::hash_map::RandomState::new().build_hasher();
        bytes[..8].copy_from_slice(&a.finish().to_be_bytes());
        bytes[8..].copy_from_slice(&b.finish().to_be_bytes());
    }
    bytes
}

/// A new run's id: 32 hexadecimal digits, random.
pub(crate) fn new_run_id() -> String {
    let mut id = String::with_capacity(32);
    for byte in random() {
        let _ = write!(id, "{byte:02x}");
    }
    id
}

/// `bytes` as a UUID of `version`, written `xxxxxxxx-xxxx-Vxxx-Nxxx-xxxxxxxxxxxx`.
fn uuid(mut bytes: [u8; 16], version: u8) -> Box<str> {
    bytes[6] = (bytes[6] & 0x0f) | (version << 4);
    // The variant of RFC 9562: `10` in the top bits.
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let mut out = String::with_capacity(36);
    for (i, byte) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        let _ = write!(out, "{byte:02x}");
    }
    out.into_boxed_str()
}

/// The longest key an MCP client may send: what Stripe allows an `Idempotency-Key`.
#[cfg(feature = "mcp")]
const MAX_CLIENT_KEY: usize = 255;

/// Where the key of a `tools/call` whose request carries `meta` comes from: the client's own
/// key (`_meta.idempotencyKey`), else nothing stable. A key that is not a string of 1 to 255
/// printable ASCII characters is refused with a sentence for the client: a client that sent
/// one counts on it.
#[cfg(feature = "mcp")]
#[inline]
pub(crate) fn of_request(meta: &rmcp::model::RequestMetaObject) -> Result<KeySource, String> {
    // Most requests carry no `_meta`: they pay this test only (a lookup hashes the key).
    if meta.0.0.is_empty() {
        return Ok(KeySource::Fresh);
    }
    of_meta(meta)
}

/// [`of_request`] for a request with a `_meta`.
#[cfg(feature = "mcp")]
fn of_meta(meta: &rmcp::model::RequestMetaObject) -> Result<KeySource, String> {
    let Some(key) = meta.0.0.get(META_KEY) else {
        return Ok(KeySource::Fresh);
    };
    match key.as_str() {
        Some(key)
            if (1..=MAX_CLIENT_KEY).contains(&key.len())
                && key.bytes().all(|b| b.is_ascii_graphic()) =>
        {
            Ok(KeySource::Client(Arc::from(key)))
        }
        _ => Err(format!(
            "`_meta.{META_KEY}` must be a string of 1 to {MAX_CLIENT_KEY} printable ASCII \
             characters without spaces"
        )),
    }
}

/// The `_meta` key an MCP client sends its own idempotency key under, and `McpClient` sends
/// the calling context's.
#[cfg(any(feature = "mcp", feature = "mcp-client"))]
pub(crate) const META_KEY: &str = "idempotencyKey";

/// The idempotency key of a call.
impl ToolContext {
    /// A key that names this call, and only this call, to an API that makes calls idempotent:
    /// send it as the `Idempotency-Key` header of the request that has the call's effect, and
    /// the API applies the call once however often it runs.
    ///
    /// It is the same each time the call runs again:
    ///
    /// - in an agent run, it is made from the run's id, the turn and the call's place in the
    ///   turn's response (and the tool's name): the same in a turn the loop asks again after its
    ///   stream broke off, in a run resumed from its [`RunState`](crate::RunState) (which keeps
    ///   the run's id), and in a Restate invocation replayed from its journal
    ///   ([`Journal`](crate::restate::Journal) names the run after the invocation). A new run
    ///   has a new id ([`RunOptions::run_id`](crate::RunOptions::run_id) sets one);
    /// - over MCP, it is made from the key the client sent in the request's
    ///   `_meta.idempotencyKey` (and the tool's name), so a client that sends a request again
    ///   with the same key gets the same one; a request without a key gets a random one
    ///   (request ids are never reused within a session, so nothing else a re-sent request
    ///   carries names it). `McpClient` sends the calling context's key this way;
    /// - a context made by hand has the key given with
    ///   [`with_idempotency_key`](Self::with_idempotency_key), else a random one.
    ///
    /// A derived key is a UUID (36 characters), which every API that takes such keys accepts.
    /// It is made when it is first asked for.
    ///
    /// ```
    /// use reticent::ToolContext;
    ///
    /// /// Charge the customer's card.
    /// #[reticent::tool(open_world)]
    /// async fn charge_card(order_id: String, cents: u64, cx: &ToolContext) -> String {
    ///     // e.g. reqwest: client.post(url).header("Idempotency-Key", cx.idempotency_key())
    ///     let key = cx.idempotency_key();
    ///     format!("charged {cents} for {order_id} (key {key})")
    /// }
    ///
    /// let agent = reticent::Agent::builder(reticent::ScriptedModel::new(vec![]))
    ///     .tool(ChargeCard)
    ///     .build();
    /// # assert!(agent.is_ok());
    ///
    /// let cx = ToolContext::new("call_1", "charge_card").with_idempotency_key("order-7-charge");
    /// assert_eq!(cx.idempotency_key(), "order-7-charge");
    /// assert_eq!(ToolContext::new("c", "t").idempotency_key().len(), 36);
    /// ```
    pub fn idempotency_key(&self) -> &str {
        let tool = self.tool_name();
        self.idempotency().key(tool)
    }

    /// The same context with `key` as its [idempotency key](Self::idempotency_key), as it is:
    /// for a call run outside an agent or a server whose caller has a key of its own.
    #[must_use]
    pub fn with_idempotency_key(self, key: impl Into<Arc<str>>) -> Self {
        self.with_key_source(KeySource::Given(key.into()))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{Idempotency, KeySource};

    fn run(run: &str, turn: u32, index: u32) -> KeySource {
        KeySource::Run {
            run: Arc::from(run),
            turn,
            index,
        }
    }

    #[test]
    fn derived_keys_are_uuids_that_differ_by_every_part() {
        let key = |source: KeySource, tool: &str| Idempotency::new(source).key(tool).to_owned();
        let base = key(run("r1", 2, 0), "charge");
        assert_eq!(base.len(), 36);
        assert_eq!(&base[14..15], "8", "{base}");
        assert!(matches!(&base[19..20], "8" | "9" | "a" | "b"), "{base}");
        assert_eq!(base, key(run("r1", 2, 0), "charge"));
        for other in [
            key(run("r2", 2, 0), "charge"),
            key(run("r1", 3, 0), "charge"),
            key(run("r1", 2, 1), "charge"),
            key(run("r1", 2, 0), "refund"),
            key(KeySource::Client(Arc::from("r1")), "charge"),
        ] {
            assert_ne!(base, other);
        }
        // Length-prefixed fields: moving a byte from one field to the next changes the key.
        assert_ne!(
            key(KeySource::Client(Arc::from("ab")), "c"),
            key(KeySource::Client(Arc::from("a")), "bc")
        );
        let fresh = key(KeySource::Fresh, "charge");
        assert_eq!(&fresh[14..15], "4", "{fresh}");
        assert_ne!(fresh, key(KeySource::Fresh, "charge"));
        assert_eq!(key(KeySource::Given(Arc::from("k-1")), "charge"), "k-1");
    }

    #[test]
    fn a_fresh_key_stays_once_made() {
        let idempotency = Idempotency::new(KeySource::Fresh);
        let first = idempotency.key("t").to_owned();
        assert_eq!(idempotency.key("t"), first);
        assert_eq!(idempotency.clone().key("t"), first);
    }
}
