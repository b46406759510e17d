//! The idempotency record (seed 000 §같은 요청을 다시 받았을 때, seed 001 ch. 3-8,
//! SPEC §4): a scope (tenant, operation, key), a fingerprint of what was asked,
//! and the response that was given. `store` holds the record's SQL; the
//! command pipeline (`crate::command::execute`) is the one place that opens
//! a record, so that claim, work and stored response commit together.

pub mod store;

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::identity::{OwnerDigest, Tenant};

pub use store::{acquire, finalize, release, Acquired};

/// `Idempotency-Key`: 1-255 visible ASCII characters.
#[derive(Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    pub fn parse(raw: &str) -> Result<Self, String> {
        if raw.is_empty() || raw.len() > 255 {
            return Err("must be 1-255 characters".into());
        }
        if !raw.bytes().all(|b| b.is_ascii_graphic()) {
            return Err("must be visible ASCII characters".into());
        }
        Ok(IdempotencyKey(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A fresh random key (the browser forms carry one per render).
    pub fn generate() -> Self {
        IdempotencyKey(uuid::Uuid::new_v4().to_string())
    }
}

/// Never printed: a key is a capability to read a stored response.
impl std::fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IdempotencyKey(***)")
    }
}

/// (tenant, operation, key): the primary key of a record.
#[derive(Debug, Clone)]
pub struct Scope {
    pub tenant: Tenant,
    pub operation: &'static str,
    pub key: IdempotencyKey,
}

impl Scope {
    /// Stable text of the scope; its hash names the advisory lock that makes a
    /// concurrent duplicate answer `COMMAND_IN_PROGRESS` at once.
    pub fn lock_text(&self) -> String {
        format!("{}\u{1f}{}\u{1f}{}", self.tenant, self.operation, self.key.as_str())
    }
}

/// SHA-256 over operation, canonical payload and owner digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// `payload` is the parsed command (not the raw body), so formatting, key
    /// order and fields we do not read never change the fingerprint.
    pub fn compute<P: Serialize>(operation: &str, payload: &P, owner: &OwnerDigest) -> Self {
        let value = serde_json::to_value(payload).unwrap_or(Value::Null);
        let mut hasher = Sha256::new();
        for part in [operation, &canonical_json(&value), owner.as_str()] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
        Fingerprint(hex::encode(hasher.finalize()))
    }

    pub fn from_stored(hex: String) -> Self {
        Fingerprint(hex)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// JSON with object keys sorted at every level, whatever map order serde_json uses.
pub fn canonical_json(value: &Value) -> String {
    fn write(value: &Value, out: &mut String) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    write(&map[k], out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}

/// A response as stored and replayed: status and the exact body bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub body: String,
}

impl StoredResponse {
    pub fn json<T: Serialize>(status: u16, body: &T) -> Self {
        StoredResponse { status, body: serde_json::to_string(body).expect("response serialises") }
    }

    pub fn from_error(err: &crate::error::ApiError) -> Self {
        StoredResponse { status: err.status().as_u16(), body: err.body().to_string() }
    }
}

/// Records older than `cutoff`, `batch` per statement, until a batch comes
/// back short or `max_batches` ran.
pub async fn purge_before(
    conn: &mut crate::db::Conn,
    cutoff: chrono::DateTime<chrono::Utc>,
    batch: i64,
    max_batches: usize,
) -> diesel::QueryResult<usize> {
    let mut total = 0;
    for _ in 0..max_batches {
        let n = store::purge_batch(conn, cutoff, batch).await?;
        total += n;
        if (n as i64) < batch {
            break;
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_deeply() {
        let a = json!({"b": 1, "a": {"z": [1, {"y": 2, "x": 3}], "c": null}});
        assert_eq!(canonical_json(&a), r#"{"a":{"c":null,"z":[1,{"x":3,"y":2}]},"b":1}"#);
    }

    #[test]
    fn key_rules() {
        assert!(IdempotencyKey::parse("").is_err());
        assert!(IdempotencyKey::parse(&"k".repeat(256)).is_err());
        assert!(IdempotencyKey::parse("has space").is_err());
        assert!(IdempotencyKey::parse(&"k".repeat(255)).is_ok());
    }

    #[test]
    fn fingerprint_covers_operation_payload_and_owner() {
        let t = Tenant::parse("t").unwrap();
        let alice = OwnerDigest::of_owner(b"k", &t, &crate::identity::OwnerId::parse("alice").unwrap());
        let bob = OwnerDigest::of_owner(b"k", &t, &crate::identity::OwnerId::parse("bob").unwrap());
        let p = json!({"a": 1});
        let base = Fingerprint::compute("op", &p, &alice);
        assert_eq!(base, Fingerprint::compute("op", &json!({"a": 1}), &alice));
        assert_ne!(base, Fingerprint::compute("op2", &p, &alice));
        assert_ne!(base, Fingerprint::compute("op", &json!({"a": 2}), &alice));
        assert_ne!(base, Fingerprint::compute("op", &p, &bob));
    }
}
