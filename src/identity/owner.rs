//! The end user an integration acts for (`X-Reservation-Owner`) and the keyed
//! digest that is all the server ever stores of them. An owner is
//! (tenant, owner): tenant A's "alice" is not tenant B's.

use std::fmt;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::key::Tenant;

/// A validated `X-Reservation-Owner`: 1-200 characters, no control characters.
#[derive(Clone, PartialEq, Eq)]
pub struct OwnerId(String);

impl OwnerId {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let len = raw.chars().count();
        if !(1..=200).contains(&len) {
            return Err("must be 1-200 characters".into());
        }
        if raw.chars().any(char::is_control) {
            return Err("must not contain control characters".into());
        }
        Ok(OwnerId(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Never printed: logs must not carry raw owners.
impl fmt::Debug for OwnerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OwnerId(***)")
    }
}

/// HMAC-SHA256(secret, "owner" ‖ tenant ‖ owner), hex. Decides who may act on a
/// hold, offer or booking; equal digests mean the same (tenant, owner).
#[derive(Clone, PartialEq, Eq)]
pub struct OwnerDigest(String);

impl OwnerDigest {
    pub fn of_owner(secret: &[u8], tenant: &Tenant, owner: &OwnerId) -> Self {
        Self::keyed(secret, &["owner", tenant.as_str(), owner.as_str()])
    }

    /// The digest of an API key's tenant acting for itself (admin routes
    /// that name no `X-Reservation-Owner`).
    pub fn of_tenant(secret: &[u8], tenant: &Tenant) -> Self {
        Self::keyed(secret, &["tenant", tenant.as_str()])
    }

    /// The digest of a signed-in staff member (browser UI).
    pub fn of_staff(secret: &[u8], username: &str) -> Self {
        Self::keyed(secret, &["staff", username])
    }

    fn keyed(secret: &[u8], parts: &[&str]) -> Self {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
        for part in parts {
            // Length-prefixed so that ("ab","c") and ("a","bc") differ.
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part.as_bytes());
        }
        OwnerDigest(hex::encode(mac.finalize().into_bytes()))
    }

    /// Wraps a digest read back from the database.
    pub fn from_stored(hex: String) -> Self {
        OwnerDigest(hex)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for OwnerDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OwnerDigest(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_depends_on_tenant_and_owner() {
        let t1 = Tenant::parse("t1").unwrap();
        let t2 = Tenant::parse("t2").unwrap();
        let alice = OwnerId::parse("alice").unwrap();
        let a1 = OwnerDigest::of_owner(b"k", &t1, &alice);
        assert_eq!(a1, OwnerDigest::of_owner(b"k", &t1, &alice));
        assert_ne!(a1, OwnerDigest::of_owner(b"k", &t2, &alice));
        assert_ne!(a1, OwnerDigest::of_owner(b"other", &t1, &alice));
    }

    #[test]
    fn owner_rules() {
        assert!(OwnerId::parse("").is_err());
        assert!(OwnerId::parse(&"x".repeat(201)).is_err());
        assert!(OwnerId::parse("a\nb").is_err());
        assert!(OwnerId::parse("김철수").is_ok());
    }
}
