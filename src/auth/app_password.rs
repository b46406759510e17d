//! App passwords (SPEC §17, §21): what a calendar app signs in with when
//! the person signs in through the company's identity, or should not give
//! the app their own password. Random secrets shown once; only a keyed
//! digest (HMAC-SHA256 with `YEYAK_SECRET_KEY`) is stored, so checking one
//! is an index lookup and microseconds of hashing, not Argon2. Every check
//! reads the row and the person as they are now, so a revoked password or a
//! disabled person is refused at once on every process; disabling a person
//! revokes their app passwords for good (`staff::set_disabled_in`).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Bool, Int8, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use hmac::{Hmac, Mac};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::cached::CacheExt;
use crate::db::schema::app_password as pw;
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};

pub static CREATE: Operation = Operation::new("app_password.create", &[Role::Staff, Role::Admin]).creates();
pub static REVOKE: Operation = Operation::new("app_password.revoke", &[Role::Staff, Role::Admin]);

/// Every secret starts so, which tells it from a person's own password.
pub const PREFIX: &str = "yp_";

/// Longest label kept.
pub const LABEL_CHARS: usize = 100;

/// Last use is written at most this often per password: a calendar app
/// polling every minute costs no write per request.
const LAST_USE_GRAIN_SECONDS: i32 = 60;

/// A fresh secret and its digest (the door makes both; the command stores
/// the digest and answers the secret once).
pub fn generate(key: &[u8]) -> (String, String) {
    let mut bytes = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut bytes);
    let secret = format!("{PREFIX}{}", hex::encode(bytes));
    let digest = digest(key, &secret);
    (secret, digest)
}

/// The stored form of a secret.
pub fn digest(key: &[u8], secret: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("any key length");
    mac.update(b"app-password\x00");
    mac.update(secret.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// A label as people type it: trimmed, 1-100 characters, one plain line.
pub fn parse_label(raw: &str) -> Result<String, ApiError> {
    let label = raw.trim();
    if label.is_empty() || label.chars().count() > LABEL_CHARS {
        return Err(ApiError::malformed("label", "must be 1-100 characters"));
    }
    crate::text::ensure_plain("label", label)?;
    Ok(label.to_owned())
}

/// The person an app password opened.
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct Holder {
    #[diesel(sql_type = Int8)]
    pub id: i64,
    #[diesel(sql_type = Text)]
    pub username: String,
    #[diesel(sql_type = Text)]
    pub display_name: String,
    #[diesel(sql_type = Bool)]
    pub is_admin: bool,
}

/// The enabled person `username` whose live app password `secret` is, in
/// one statement that also notes the use (at most once a minute).
pub async fn check(
    conn: &mut Conn,
    key: &[u8],
    username: &str,
    secret: &str,
    now: DateTime<Utc>,
) -> QueryResult<Option<Holder>> {
    diesel::sql_query(
        "WITH hit AS (
           SELECT p.id AS password_id, p.last_used_at, u.id, u.username, u.display_name, u.is_admin
             FROM app_password p JOIN staff_user u ON u.id = p.staff_id
            WHERE p.digest = $1 AND lower(u.username) = lower($2) AND p.revoked_at IS NULL AND u.disabled_at IS NULL),
         touch AS (
           UPDATE app_password p SET last_used_at = $3 FROM hit
            WHERE p.id = hit.password_id
              AND (hit.last_used_at IS NULL OR hit.last_used_at < $3 - make_interval(secs => $4))
           RETURNING 1)
         SELECT id, username, display_name, is_admin FROM hit",
    )
    .bind::<Text, _>(digest(key, secret))
    .bind::<Text, _>(username)
    .bind::<Timestamptz, _>(now)
    .bind::<diesel::sql_types::Integer, _>(LAST_USE_GRAIN_SECONDS)
    .cached()
    .get_result(conn)
    .await
    .optional()
}

/// One app password as its owner sees it (never its digest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Queryable, Selectable)]
#[diesel(table_name = pw)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub id: i64,
    pub label: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A person's app passwords, newest first.
pub async fn list(conn: &mut Conn, staff_id: i64) -> QueryResult<Vec<Entry>> {
    pw::table.filter(pw::staff_id.eq(staff_id)).order(pw::id.desc()).select(Entry::as_select()).load(conn).await
}

/// Revokes every live app password of a person (in the caller's transaction).
pub async fn revoke_all(conn: &mut Conn, staff_id: i64, now: DateTime<Utc>) -> QueryResult<usize> {
    diesel::update(pw::table.filter(pw::staff_id.eq(staff_id)).filter(pw::revoked_at.is_null()))
        .set(pw::revoked_at.eq(now))
        .execute(conn)
        .await
}

/// A new app password; its secret exists only in this answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    pub id: i64,
    pub label: String,
    pub secret: String,
}

/// `app_password.create`: for the signed-in person. Run without an
/// idempotency key: the secret must not be stored in a replayable answer.
pub struct CreateAppPassword {
    pub label: String,
    pub secret: String,
    pub digest: String,
}

fn signed_in_person(ctx: &Ctx<'_>) -> Result<i64, CommandError> {
    ctx.principal.staff_id().ok_or_else(|| {
        CommandError::Invalid(ApiError::worded(ErrorCode::Forbidden, json!({ "reason": "app_password_person" })))
    })
}

impl Command for CreateAppPassword {
    type Output = Created;

    fn operation(&self) -> &'static Operation {
        &CREATE
    }

    fn fingerprint(&self) -> Value {
        json!({ "label": self.label })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Created, CommandError> {
        let staff_id = signed_in_person(ctx)?;
        let label = parse_label(&self.label).map_err(CommandError::Invalid)?;
        let id = diesel::insert_into(pw::table)
            .values((
                pw::staff_id.eq(staff_id),
                pw::label.eq(&label),
                pw::digest.eq(&self.digest),
                pw::created_at.eq(ctx.now),
            ))
            .returning(pw::id)
            .get_result(conn)
            .await?;
        Ok(Created { id, label, secret: self.secret.clone() })
    }
}

/// `app_password.revoke`: one of the person's own; revoking again answers
/// the same. `None` when the person has no such password.
pub struct RevokeAppPassword {
    pub id: i64,
}

impl Command for RevokeAppPassword {
    type Output = Option<Entry>;

    fn operation(&self) -> &'static Operation {
        &REVOKE
    }

    fn fingerprint(&self) -> Value {
        json!({ "id": self.id })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Option<Entry>, CommandError> {
        let staff_id = signed_in_person(ctx)?;
        let own = pw::table.filter(pw::id.eq(self.id)).filter(pw::staff_id.eq(staff_id));
        let revoked: Option<Entry> = diesel::update(own.filter(pw::revoked_at.is_null()))
            .set(pw::revoked_at.eq(ctx.now))
            .returning(Entry::as_returning())
            .get_result(conn)
            .await
            .optional()?;
        match revoked {
            Some(entry) => Ok(Some(entry)),
            None => Ok(own.select(Entry::as_select()).first(conn).await.optional()?),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_random_and_digests_keyed() {
        let (a, da) = generate(b"k");
        let (b, _) = generate(b"k");
        assert!(a.starts_with(PREFIX) && a.len() == PREFIX.len() + 48 && a != b);
        assert_eq!(digest(b"k", &a), da);
        assert_ne!(digest(b"other", &a), da, "the digest is keyed");
    }

    #[test]
    fn labels() {
        assert_eq!(parse_label("  iPhone 캘린더 ").unwrap(), "iPhone 캘린더");
        assert!(parse_label("  ").is_err());
        assert!(parse_label(&"가".repeat(101)).is_err());
        assert_eq!(parse_label("a\nb").unwrap_err().details["field"], "label");
    }
}
