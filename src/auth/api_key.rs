//! API keys: `Authorization: Bearer <secret>`, each key bound to one tenant and
//! a role. Keys from `YEYAK_API_KEYS` live in memory; keys created on the admin
//! page live in `api_key`. Only SHA-256 digests of secrets are kept anywhere.

use std::collections::HashMap;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use crate::db::cached::CacheExt;

use crate::db::{Conn, DbError};

pub use crate::identity::key::{hash_secret, Caller, ConfiguredKey, Role, Tenant, RESERVED_TENANTS};

/// Resolves bearer secrets to callers.
#[derive(Debug, Clone, Default)]
pub struct ApiKeyRegistry {
    configured: HashMap<String, Caller>,
}

impl ApiKeyRegistry {
    pub fn new(keys: &[ConfiguredKey]) -> Self {
        let configured = keys.iter().map(|k| (k.key_hash.clone(), k.caller.clone())).collect();
        Self { configured }
    }

    /// The caller of a secret: configured keys first, then stored, unrevoked
    /// keys. One statement reads the key and, at most once a minute, records
    /// its use; a revoked key is refused on the very next request.
    pub async fn resolve(&self, conn: &mut Conn, secret: &str) -> Result<Option<Caller>, DbError> {
        let hash = hash_secret(secret);
        if let Some(caller) = self.configured.get(&hash) {
            return Ok(Some(caller.clone()));
        }
        #[derive(diesel::QueryableByName)]
        struct Found {
            #[diesel(sql_type = diesel::sql_types::Text)]
            tenant: String,
            #[diesel(sql_type = diesel::sql_types::Text)]
            role: String,
        }
        let row: Option<Found> = diesel::sql_query(
            "WITH k AS (SELECT id, tenant, role, last_used_at FROM api_key WHERE key_hash = $1 AND revoked_at IS NULL),
                  touched AS (UPDATE api_key SET last_used_at = now() FROM k
                              WHERE api_key.id = k.id AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute'))
             SELECT tenant, role FROM k",
        )
        .bind::<diesel::sql_types::Text, _>(&hash)
        .cached()
        .get_result(conn)
        .await
        .optional()?;
        // A key stored under a reserved tenant before the rule existed opens nothing.
        let tenant = |f: &Found| Tenant::parse(&f.tenant).ok().filter(|t| !t.is_reserved());
        Ok(row.and_then(|f| Some(Caller { tenant: tenant(&f)?, role: f.role.parse().ok()? })))
    }

    /// The callers of `YEYAK_API_KEYS`, for the key list.
    pub fn configured_callers(&self) -> Vec<Caller> {
        let mut callers: Vec<Caller> = self.configured.values().cloned().collect();
        callers.sort_by(|a, b| a.tenant.as_str().cmp(b.tenant.as_str()));
        callers
    }

    /// Looks up a configured key without touching the database.
    pub fn resolve_configured(&self, secret: &str) -> Option<Caller> {
        self.configured.get(&hash_secret(secret)).cloned()
    }
}
