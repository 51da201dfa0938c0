//! [`CallDigest`]: what a [`Decision`](crate::Decision) is bound to — the SHA-256 of a call's
//! tool and arguments in canonical JSON — so that a decision made for one call cannot be
//! carried over to another that took its id.

use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer, de};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The digest of one tool call: SHA-256 of its tool's name and its arguments, written as the
/// JSON array `[tool, arguments]` in canonical form — no whitespace, object keys in byte order
/// at every depth, strings and numbers as `serde_json` writes them. The same call in another
/// key order has the same digest; another tool, or any other argument value, has another.
///
/// A [`Decision`](crate::Decision) made from a [`PendingCall`](crate::agent::PendingCall) carries the
/// call's digest, and [`Agent::resume`](crate::Agent::resume) refuses it for a call whose digest
/// differs: an approval holds for the call the person saw, not for whatever a stored state
/// later says waits under its id.
///
/// It reads and writes as 64 lowercase hexadecimal digits (uppercase is read too).
///
/// ```
/// use reticent::agent::CallDigest;
/// use serde_json::json;
///
/// let digest = CallDigest::of("issue_refund", &json!({"order_id": "ORD-7", "amount_cents": 4500}));
/// let same = CallDigest::of("issue_refund", &json!({"amount_cents": 4500, "order_id": "ORD-7"}));
/// assert_eq!(digest, same);
/// assert_ne!(digest, CallDigest::of("close_account", &json!({"order_id": "ORD-7", "amount_cents": 4500})));
/// assert_eq!(digest.to_string().parse::<CallDigest>(), Ok(digest));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallDigest([u8; 32]);

impl CallDigest {
    /// The digest of a call of `tool` with `arguments`.
    pub fn of(tool: &str, arguments: &Value) -> Self {
        let mut hasher = Hasher(Sha256::new());
        // Writing to a hasher cannot fail.
        let _ = write_call(&mut hasher, tool, arguments);
        Self(hasher.0.finalize().into())
    }
}

/// `[tool, arguments]` in canonical JSON.
fn write_call(out: &mut Hasher, tool: &str, arguments: &Value) -> io::Result<()> {
    out.write_all(b"[")?;
    serde_json::to_writer(&mut *out, tool)?;
    out.write_all(b",")?;
    write_canonical(out, arguments)?;
    out.write_all(b"]")
}

/// `value` in canonical JSON: object keys in byte order, scalars as `serde_json` writes them.
/// Arguments are at most as deep as the JSON parser and the loop's depth cut allow (128), so
/// the recursion is bounded.
fn write_canonical(out: &mut Hasher, value: &Value) -> io::Result<()> {
    match value {
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_canonical(out, item)?;
            }
            out.write_all(b"]")
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.write_all(b"{")?;
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, key)?;
                out.write_all(b":")?;
                write_canonical(out, item)?;
            }
            out.write_all(b"}")
        }
        scalar => serde_json::to_writer(&mut *out, scalar).map_err(io::Error::from),
    }
}

/// SHA-256 as an `io::Write`, for `serde_json::to_writer`.
struct Hasher(Sha256);

impl Write for Hasher {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl fmt::Display for CallDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for CallDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CallDigest({self})")
    }
}

/// Text that is not a [`CallDigest`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a call digest is 64 hexadecimal digits (SHA-256), as a pending call's `digest` gives it")]
pub struct NotADigest;

impl FromStr for CallDigest {
    type Err = NotADigest;

    fn from_str(text: &str) -> Result<Self, NotADigest> {
        let text = text.as_bytes();
        if text.len() != 64 {
            return Err(NotADigest);
        }
        let mut bytes = [0; 32];
        for (byte, pair) in bytes.iter_mut().zip(text.chunks_exact(2)) {
            *byte = (hex(pair[0])? << 4) | hex(pair[1])?;
        }
        Ok(Self(bytes))
    }
}

fn hex(digit: u8) -> Result<u8, NotADigest> {
    match digit {
        b'0'..=b'9' => Ok(digit - b'0'),
        b'a'..=b'f' => Ok(digit - b'a' + 10),
        b'A'..=b'F' => Ok(digit - b'A' + 10),
        _ => Err(NotADigest),
    }
}

impl Serialize for CallDigest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CallDigest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = CallDigest;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a call digest: 64 hexadecimal digits")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<CallDigest, E> {
                text.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use sha2::{Digest, Sha256};

    use super::CallDigest;

    #[test]
    fn the_digest_is_sha256_of_the_call_in_canonical_json() {
        let arguments: serde_json::Value =
            serde_json::from_str(r#"{"z": [1, 2.5, {"b": null, "a": "é\n"}], "a": true}"#).unwrap();
        let canonical = r#"["refund",{"a":true,"z":[1,2.5,{"a":"é\n","b":null}]}]"#;
        let expected: [u8; 32] = Sha256::digest(canonical.as_bytes()).into();
        assert_eq!(CallDigest::of("refund", &arguments), CallDigest(expected));
    }

    #[test]
    fn another_tool_or_any_other_value_is_another_digest() {
        let base = CallDigest::of("refund", &json!({"order": "ORD-7", "cents": 100}));
        for (tool, arguments) in [
            ("close_account", json!({"order": "ORD-7", "cents": 100})),
            ("refund", json!({"order": "ORD-8", "cents": 100})),
            ("refund", json!({"order": "ORD-7", "cents": 100.0})),
            ("refund", json!({"order": "ORD-7", "cents": "100"})),
            (
                "refund",
                json!({"order": "ORD-7", "cents": 100, "all": true}),
            ),
            ("refund", json!({"order": ["ORD-7"], "cents": 100})),
            // The tool's name and the first key cannot trade characters.
            ("refun", json!({"dorder": "ORD-7", "cents": 100})),
        ] {
            assert_ne!(CallDigest::of(tool, &arguments), base, "{tool} {arguments}");
        }
    }

    #[test]
    fn a_digest_reads_back_from_its_text_and_nothing_else_reads() {
        let digest = CallDigest::of("refund", &json!({}));
        let text = digest.to_string();
        assert_eq!(text.len(), 64);
        assert_eq!(text.parse(), Ok(digest));
        assert_eq!(text.to_uppercase().parse(), Ok(digest));
        assert_eq!(
            serde_json::from_value::<CallDigest>(serde_json::to_value(digest).unwrap()).unwrap(),
            digest
        );
        for bad in [
            "",
            &text[1..],
            &format!("{text}0"),
            &format!("g{}", &text[1..]),
        ] {
            assert!(bad.parse::<CallDigest>().is_err(), "{bad}");
        }
        let error = serde_json::from_value::<CallDigest>(json!("abc")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "a call digest is 64 hexadecimal digits (SHA-256), as a pending call's `digest` \
             gives it"
        );
    }
}
