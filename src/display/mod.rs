//! The door display (SPEC §11): a kiosk page per room, opened by a display
//! token that an admin creates and revokes on `/admin/rooms`. The token is a
//! capability for that room's page, its "book now" and its check-in, and for
//! nothing else: it is not an API key, it opens no other room, and a
//! revocation ends it on the next request (every request looks it up).
//! Only a SHA-256 of each token is stored. The kiosk pages live in `web::display`.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Bool, Text};
use diesel_async::RunQueryDsl;
use rand::RngCore;

use crate::auth::api_key::hash_secret;
use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::cached::CacheExt;
use crate::db::schema::room_display_token as token;
use crate::db::Conn;
use crate::error::ApiError;

/// A new token for an active room; the secret is returned once.
pub async fn issue(conn: &mut Conn, room: &str, by: Option<i64>, now: DateTime<Utc>) -> Result<String, CommandError> {
    let active = crate::catalogue::store::find(conn, room).await?.is_some_and(|r| r.active);
    if !active {
        return Err(ApiError::not_found("room").into());
    }
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let secret = format!("yd_{}", hex::encode(bytes));
    diesel::insert_into(token::table)
        .values((
            token::room.eq(room),
            token::token_hash.eq(hash_secret(&secret)),
            token::created_by.eq(by),
            token::created_at.eq(now),
        ))
        .execute(conn)
        .await?;
    Ok(secret)
}

/// Revokes every live token of a room; returns how many.
pub async fn revoke(conn: &mut Conn, room: &str, now: DateTime<Utc>) -> QueryResult<usize> {
    diesel::update(token::table.filter(token::room.eq(room)).filter(token::revoked_at.is_null()))
        .set(token::revoked_at.eq(now))
        .execute(conn)
        .await
}

pub static ISSUE: Operation = Operation::new("display_token.issue", &[Role::Admin]).creates();
pub static REVOKE: Operation = Operation::new("display_token.revoke", &[Role::Admin]);

/// An admin's new token for a room's display (never run with a key: the
/// secret exists only in its one answer).
pub struct IssueToken {
    pub room: String,
}

impl Command for IssueToken {
    type Output = String;

    fn operation(&self) -> &'static Operation {
        &ISSUE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::json!({ "room": self.room })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<String, CommandError> {
        issue(conn, &self.room, ctx.principal.staff_id(), ctx.now).await
    }
}

/// Ends every display of a room; answers how many tokens it revoked.
pub struct RevokeTokens {
    pub room: String,
}

impl Command for RevokeTokens {
    type Output = usize;

    fn operation(&self) -> &'static Operation {
        &REVOKE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::json!({ "room": self.room })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<usize, CommandError> {
        Ok(revoke(conn, &self.room, ctx.now).await?)
    }
}

/// Live tokens of a room (the admin page shows the count).
pub async fn live(conn: &mut Conn, room: &str) -> QueryResult<i64> {
    token::table.filter(token::room.eq(room)).filter(token::revoked_at.is_null()).count().get_result(conn).await
}

#[derive(QueryableByName)]
struct Allowed {
    #[diesel(sql_type = Bool)]
    allowed: bool,
}

/// Whether `secret` is a live token of this active room, set up by someone
/// who is not disabled (disabling a person ends the displays they set up).
pub async fn authorize(conn: &mut Conn, room: &str, secret: &str) -> QueryResult<bool> {
    if secret.is_empty() || secret.len() > 200 {
        return Ok(false);
    }
    let row: Allowed = diesel::sql_query(
        "SELECT EXISTS (SELECT 1 FROM room_display_token t JOIN room r ON r.code = t.room
                         LEFT JOIN staff_user s ON s.id = t.created_by
                         WHERE t.token_hash = $1 AND t.room = $2 AND t.revoked_at IS NULL AND r.active
                           AND s.disabled_at IS NULL) AS allowed",
    )
    .bind::<Text, _>(hash_secret(secret))
    .bind::<Text, _>(room)
    .cached()
    .get_result(conn)
    .await?;
    Ok(row.allowed)
}
