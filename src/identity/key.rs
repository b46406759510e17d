//! An integration's API key as values (SPEC §7, §20): the tenant it acts
//! for, its role, and a `YEYAK_API_KEYS` entry with its secret hashed at
//! once. The registry that resolves bearer secrets is `auth::api_key`.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Integration,
    Admin,
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "integration" => Ok(Role::Integration),
            "admin" => Ok(Role::Admin),
            other => Err(format!("unknown role `{other}` (integration or admin)")),
        }
    }
}

/// A tenant name: `[A-Za-z0-9._-]{1,64}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tenant(String);

impl Tenant {
    pub fn parse(s: &str) -> Result<Self, String> {
        let ok = (1..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        ok.then(|| Tenant(s.to_owned())).ok_or_else(|| format!("tenant `{s}` must be 1-64 of [A-Za-z0-9._-]"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the name is one of yeyak's own owners (`staff`, `display`; in
    /// any case): a key of that tenant would act in their name (SPEC §20).
    pub fn is_reserved(&self) -> bool {
        RESERVED_TENANTS.iter().any(|r| r.eq_ignore_ascii_case(&self.0))
    }
}

/// The tenants of yeyak's own doors (the browser's `staff`, the door
/// display's `display`); no API key may carry them.
pub const RESERVED_TENANTS: [&str; 2] = ["staff", "display"];

impl fmt::Display for Tenant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The authenticated integration: its tenant and role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub tenant: Tenant,
    pub role: Role,
}

impl Caller {
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }
}

/// One `tenant:role:secret` entry of `YEYAK_API_KEYS`; the secret is hashed at once.
#[derive(Clone)]
pub struct ConfiguredKey {
    pub caller: Caller,
    pub key_hash: String,
    /// The secret's length in characters (a public bind wants 24 or more).
    pub secret_chars: usize,
}

impl fmt::Debug for ConfiguredKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ConfiguredKey({}:{:?}:***)", self.caller.tenant, self.caller.role)
    }
}

impl FromStr for ConfiguredKey {
    type Err = String;
    fn from_str(entry: &str) -> Result<Self, Self::Err> {
        let mut parts = entry.splitn(3, ':');
        let (Some(tenant), Some(role), Some(secret)) = (parts.next(), parts.next(), parts.next()) else {
            return Err("each API key must be `tenant:role:secret`".into());
        };
        if secret.len() < 8 {
            return Err(format!("the secret of tenant `{tenant}` must have at least 8 characters"));
        }
        let tenant = Tenant::parse(tenant)?;
        if tenant.is_reserved() {
            return Err(format!("tenant `{tenant}` is reserved for yeyak's own owners (RESERVED_TENANT)"));
        }
        Ok(ConfiguredKey {
            caller: Caller { tenant, role: role.parse()? },
            key_hash: hash_secret(secret),
            secret_chars: secret.chars().count(),
        })
    }
}

/// SHA-256 hex of an API key secret. Keys are long random strings, so a fast
/// hash is the right tool (a password hash would only add latency per request).
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}
