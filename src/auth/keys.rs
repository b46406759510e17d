//! API key lifecycle (SPEC §13): created with a secret shown once, listed
//! with their last use, revoked. Shared by the admin page and the admin JSON
//! routes; only SHA-256 digests of secrets are stored.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use rand::RngCore;

use super::api_key::{hash_secret, ApiKeyRegistry, Role, Tenant};
use crate::db::schema::api_key;
use crate::db::Conn;

/// One key as admins see it. Keys from `YEYAK_API_KEYS` have no id and
/// cannot be revoked here (`managedBy: configuration`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyEntry {
    pub id: Option<i64>,
    pub tenant: String,
    pub role: String,
    pub label: String,
    pub managed_by: ManagedBy,
    pub created_at: Option<DateTime<Utc>>,
    /// Written at most once a minute per key.
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ManagedBy {
    Configuration,
    Admin,
}

/// A new key's secret; it exists only in this answer.
#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewKey {
    pub id: i64,
    pub secret: String,
    pub tenant: String,
    pub role: String,
    pub label: String,
}

pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Admin => "admin",
        Role::Integration => "integration",
    }
}

/// Longest label kept.
pub const LABEL_CHARS: usize = 100;

pub async fn create(conn: &mut Conn, tenant: &Tenant, role: Role, label: &str) -> QueryResult<NewKey> {
    let mut bytes = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut bytes);
    let secret = format!("yk_{}", hex::encode(bytes));
    let label: String = label.chars().take(LABEL_CHARS).collect();
    let id = diesel::insert_into(api_key::table)
        .values((
            api_key::tenant.eq(tenant.as_str()),
            api_key::role.eq(role_name(role)),
            api_key::key_hash.eq(hash_secret(&secret)),
            api_key::label.eq(&label),
        ))
        .returning(api_key::id)
        .get_result(conn)
        .await?;
    Ok(NewKey { id, secret, tenant: tenant.to_string(), role: role_name(role).to_owned(), label })
}

/// A stored key's row, as the list shows it (never its digest).
#[derive(Queryable, Selectable)]
#[diesel(table_name = api_key)]
struct Stored {
    id: i64,
    tenant: String,
    role: String,
    label: String,
    created_at: DateTime<Utc>,
    last_used_at: Option<DateTime<Utc>>,
    revoked_at: Option<DateTime<Utc>>,
}

impl From<Stored> for KeyEntry {
    fn from(k: Stored) -> Self {
        KeyEntry {
            id: Some(k.id),
            tenant: k.tenant,
            role: k.role,
            label: k.label,
            managed_by: ManagedBy::Admin,
            created_at: Some(k.created_at),
            last_used_at: k.last_used_at,
            revoked_at: k.revoked_at,
        }
    }
}

/// Configured keys first, then stored keys, newest first.
pub async fn list(conn: &mut Conn, registry: &ApiKeyRegistry) -> QueryResult<Vec<KeyEntry>> {
    let stored: Vec<Stored> = api_key::table.order(api_key::id.desc()).select(Stored::as_select()).load(conn).await?;
    let configured = registry.configured_callers().into_iter().map(|c| KeyEntry {
        id: None,
        tenant: c.tenant.to_string(),
        role: role_name(c.role).to_owned(),
        label: String::new(),
        managed_by: ManagedBy::Configuration,
        created_at: None,
        last_used_at: None,
        revoked_at: None,
    });
    Ok(configured.chain(stored.into_iter().map(KeyEntry::from)).collect())
}

/// Revokes a stored key; revoking again changes nothing and answers the
/// same. `None` when no such key.
pub async fn revoke(conn: &mut Conn, id: i64, now: DateTime<Utc>) -> QueryResult<Option<KeyEntry>> {
    let revoked: Option<Stored> = diesel::update(api_key::table.find(id).filter(api_key::revoked_at.is_null()))
        .set(api_key::revoked_at.eq(now))
        .returning(Stored::as_returning())
        .get_result(&mut *conn)
        .await
        .optional()?;
    let row = match revoked {
        Some(row) => Some(row),
        None => api_key::table.find(id).select(Stored::as_select()).first(conn).await.optional()?,
    };
    Ok(row.map(KeyEntry::from))
}
