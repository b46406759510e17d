//! Staff accounts for the browser UI: Argon2 password hashes, sessions whose
//! tokens are stored only as SHA-256 digests, the first admin from config.

use argon2::password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::db::cached::CacheExt;
use crate::db::schema::{staff_session as session, staff_user as staff};
use crate::db::Conn;

/// How long a sign-in lasts.
pub const SESSION_TTL_HOURS: i64 = 12;

#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct StaffUser {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    pub is_admin: bool,
}

const COLUMNS: (staff::id, staff::username, staff::display_name, staff::is_admin) =
    (staff::id, staff::username, staff::display_name, staff::is_admin);

/// Argon2id with a random salt, as a PHC string. CPU-heavy: call it off the
/// async threads (`tokio::task::spawn_blocking`).
pub fn hash_password(password: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default().hash_password(password.as_bytes(), &salt).expect("argon2 hashes any input").to_string()
}

pub fn verify_password(hash: &str, password: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
}

/// A hash of nothing in particular, verified against when the user does not
/// exist so that "unknown user" and "wrong password" take the same time.
static DUMMY_HASH: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| hash_password("not-a-password"));

/// Username rules: `[A-Za-z0-9._-]{1,64}`.
pub fn valid_username(username: &str) -> bool {
    (1..=64).contains(&username.len()) && username.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

pub async fn create(
    conn: &mut Conn,
    username: &str,
    display_name: &str,
    password_hash: &str,
    is_admin: bool,
) -> QueryResult<Option<StaffUser>> {
    diesel::insert_into(staff::table)
        .values((
            staff::username.eq(username),
            staff::display_name.eq(display_name),
            staff::password_hash.eq(password_hash),
            staff::is_admin.eq(is_admin),
        ))
        .on_conflict(staff::username)
        .do_nothing()
        .returning(COLUMNS)
        .get_result(conn)
        .await
        .optional()
}

pub async fn list(conn: &mut Conn) -> QueryResult<Vec<StaffUser>> {
    staff::table.order(staff::username).select(COLUMNS).load(conn).await
}

/// Creates the first admin from configuration when that username is free.
pub async fn ensure_admin(conn: &mut Conn, username: &str, password: &str) -> QueryResult<()> {
    let exists: i64 = staff::table.filter(staff::username.eq(username)).count().get_result(conn).await?;
    if exists == 0 {
        let password = password.to_owned();
        let hash = tokio::task::spawn_blocking(move || hash_password(&password)).await.expect("hashing task");
        create(conn, username, username, &hash, true).await?;
    }
    Ok(())
}

/// The user with this name and password, or `None`. Takes as long for an
/// unknown name as for a wrong password.
pub async fn authenticate(conn: &mut Conn, username: &str, password: &str) -> QueryResult<Option<StaffUser>> {
    let found: Option<(i64, String, String, bool, String)> = staff::table
        .filter(staff::username.eq(username))
        .select((staff::id, staff::username, staff::display_name, staff::is_admin, staff::password_hash))
        .first(conn)
        .await
        .optional()?;
    let hash = found.as_ref().map_or_else(|| DUMMY_HASH.clone(), |f| f.4.clone());
    let password = password.to_owned();
    let ok = tokio::task::spawn_blocking(move || verify_password(&hash, &password)).await.unwrap_or(false);
    Ok(found.filter(|_| ok).map(|(id, username, display_name, is_admin, _)| StaffUser {
        id,
        username,
        display_name,
        is_admin,
    }))
}

fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A new session; the returned token goes into the cookie and nowhere else.
pub async fn start_session(conn: &mut Conn, user_id: i64, now: DateTime<Utc>) -> QueryResult<String> {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let token = hex::encode(bytes);
    diesel::insert_into(session::table)
        .values((
            session::token_hash.eq(token_hash(&token)),
            session::user_id.eq(user_id),
            session::created_at.eq(now),
            session::expires_at.eq(now + Duration::hours(SESSION_TTL_HOURS)),
        ))
        .execute(conn)
        .await?;
    Ok(token)
}

pub async fn find_session(conn: &mut Conn, token: &str, now: DateTime<Utc>) -> QueryResult<Option<StaffUser>> {
    session::table
        .inner_join(staff::table)
        .filter(session::token_hash.eq(token_hash(token)))
        .filter(session::expires_at.gt(now))
        .select(COLUMNS)
        .first(conn)
        .await
        .optional()
}

pub async fn end_session(conn: &mut Conn, token: &str) -> QueryResult<()> {
    diesel::delete(session::table.filter(session::token_hash.eq(token_hash(token)))).execute(conn).await?;
    Ok(())
}

/// Failures counted within this window…
const FAILURE_WINDOW_MINUTES: i64 = 15;
/// …before sign-in for that name is locked, for 1 min doubling to 15 min.
const FREE_FAILURES: i32 = 5;

/// Until when sign-in for `username` is locked, if it is.
pub async fn locked_until(conn: &mut Conn, username: &str, now: DateTime<Utc>) -> QueryResult<Option<DateTime<Utc>>> {
    use crate::db::schema::staff_login_throttle as t;
    let until: Option<Option<DateTime<Utc>>> =
        t::table.find(username).select(t::locked_until).first(conn).await.optional()?;
    Ok(until.flatten().filter(|u| *u > now))
}

/// Counts a failed sign-in (one statement, so concurrent failures all count).
pub async fn record_failure(conn: &mut Conn, username: &str, now: DateTime<Utc>) -> QueryResult<()> {
    diesel::sql_query(
        "INSERT INTO staff_login_throttle AS t (username, failures, window_start) VALUES ($1, 1, $2)
         ON CONFLICT (username) DO UPDATE SET
           failures = CASE WHEN t.window_start < $2 - make_interval(mins => $3) THEN 1 ELSE t.failures + 1 END,
           window_start = CASE WHEN t.window_start < $2 - make_interval(mins => $3) THEN $2 ELSE t.window_start END,
           locked_until = CASE WHEN t.window_start >= $2 - make_interval(mins => $3) AND t.failures + 1 >= $4
                               THEN $2 + LEAST(make_interval(mins => 15), make_interval(mins => 1) * power(2, t.failures + 1 - $4))
                               ELSE t.locked_until END",
    )
    .bind::<diesel::sql_types::Text, _>(username)
    .bind::<diesel::sql_types::Timestamptz, _>(now)
    .bind::<diesel::sql_types::Integer, _>(FAILURE_WINDOW_MINUTES as i32)
    .bind::<diesel::sql_types::Integer, _>(FREE_FAILURES)
    .cached().execute(conn)
    .await?;
    Ok(())
}

pub async fn clear_failures(conn: &mut Conn, username: &str) -> QueryResult<()> {
    use crate::db::schema::staff_login_throttle as t;
    diesel::delete(t::table.find(username)).execute(conn).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_round_trip() {
        let h = hash_password("비밀번호-123");
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password(&h, "비밀번호-123"));
        assert!(!verify_password(&h, "wrong"));
        assert!(!verify_password("garbage", "x"));
    }
}
