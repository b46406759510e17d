//! A sign-in at the OpenID provider, between `/auth/oidc/start` and the
//! callback (SPEC §16): `state`, `nonce`, the PKCE verifier and where to go
//! afterwards, kept in a short-lived cookie of this browser. The cookie is
//! signed with `YEYAK_SECRET_KEY` (HMAC-SHA256) and carries its expiry, so
//! a callback without this browser's own start, a changed value or an old
//! one is refused before the provider is asked anything.

use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How long a person may take at the provider's pages.
pub const PENDING_MINUTES: i64 = 10;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    pub state: String,
    pub nonce: String,
    pub verifier: String,
    /// A same-origin path (checked by the door before it is stored).
    pub next: String,
    /// Unix seconds.
    pub expires: i64,
}

fn mac(secret: &[u8], payload: &[u8]) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("any key length");
    mac.update(b"oidc-pending\x00");
    mac.update(payload);
    mac
}

impl Pending {
    pub fn new(state: String, nonce: String, verifier: String, next: String, now: DateTime<Utc>) -> Pending {
        let expires = (now + Duration::minutes(PENDING_MINUTES)).timestamp();
        Pending { state, nonce, verifier, next, expires }
    }

    /// The cookie value: `{hex json}.{hex HMAC}`.
    pub fn seal(&self, secret: &[u8]) -> String {
        let json = serde_json::to_vec(self).expect("plain strings serialise");
        let tag = mac(secret, &json).finalize().into_bytes();
        format!("{}.{}", hex::encode(json), hex::encode(tag))
    }

    /// The pending sign-in a cookie holds, if it is ours, unchanged and live.
    pub fn open(secret: &[u8], sealed: &str, now: DateTime<Utc>) -> Option<Pending> {
        let (json, tag) = sealed.split_once('.')?;
        let (json, tag) = (hex::decode(json).ok()?, hex::decode(tag).ok()?);
        mac(secret, &json).verify_slice(&tag).ok()?;
        let pending: Pending = serde_json::from_slice(&json).ok()?;
        (pending.expires > now.timestamp()).then_some(pending)
    }

    /// Whether the provider sent back this sign-in's `state` (compared as
    /// digests, so the comparison takes the same time wherever they differ).
    pub fn state_matches(&self, sent: &str) -> bool {
        Sha256::digest(self.state.as_bytes()) == Sha256::digest(sent.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(now: DateTime<Utc>) -> Pending {
        Pending::new("st".into(), "no".into(), "ve".into(), "/rooms".into(), now)
    }

    #[test]
    fn a_sealed_sign_in_opens_only_unchanged_with_our_key_and_in_time() {
        let now = DateTime::from_timestamp(1_900_000_000, 0).unwrap();
        let sealed = pending(now).seal(b"key");
        assert_eq!(Pending::open(b"key", &sealed, now), Some(pending(now)));
        assert_eq!(Pending::open(b"other", &sealed, now), None, "another installation's key");
        assert_eq!(Pending::open(b"key", &sealed, now + Duration::minutes(11)), None, "expired");
        let (json, tag) = sealed.split_once('.').unwrap();
        let mut forged = serde_json::from_slice::<Pending>(&hex::decode(json).unwrap()).unwrap();
        forged.expires += 86_400;
        let forged = format!("{}.{tag}", hex::encode(serde_json::to_vec(&forged).unwrap()));
        assert_eq!(Pending::open(b"key", &forged, now), None, "a changed value");
        assert_eq!(Pending::open(b"key", "garbage", now), None);
    }

    #[test]
    fn the_state_must_be_the_one_sent() {
        let p = pending(DateTime::from_timestamp(1_900_000_000, 0).unwrap());
        assert!(p.state_matches("st"));
        assert!(!p.state_matches("st2"));
        assert!(!p.state_matches(""));
    }
}
