//! Staff accounts for the browser UI: Argon2 password hashes, sessions whose
//! tokens are stored only as SHA-256 digests, the first admin from config.

use argon2::password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::net::IpAddr;
use tokio::sync::Semaphore;

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

/// A person as the staff page lists them.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct StaffEntry {
    pub user: StaffUser,
    pub email: Option<String>,
    pub disabled: bool,
}

/// Concurrent Argon2 computations per process: the machine's cores, not the
/// pool, bound sign-in work (SPEC §13).
pub const HASHING_SLOTS: usize = 2;

/// Hashes a password in a hashing slot, off the async threads.
pub async fn hash_in_slot(gate: &Semaphore, password: &str) -> String {
    let _slot = gate.acquire().await.expect("the hashing gate is never closed");
    let password = password.to_owned();
    tokio::task::spawn_blocking(move || hash_password(&password)).await.expect("hashing task")
}

/// Verifies in a hashing slot; `None` (no such person) verifies against a
/// dummy hash, so both answers take the same time.
pub async fn verify_in_slot(gate: &Semaphore, hash: Option<String>, password: &str) -> bool {
    let _slot = gate.acquire().await.expect("the hashing gate is never closed");
    let known = hash.is_some();
    let hash = hash.unwrap_or_else(|| DUMMY_HASH.clone());
    let password = password.to_owned();
    let ok = tokio::task::spawn_blocking(move || verify_password(&hash, &password)).await.unwrap_or(false);
    known && ok
}

pub async fn create(
    conn: &mut Conn,
    username: &str,
    display_name: &str,
    email: Option<&str>,
    password_hash: &str,
    is_admin: bool,
) -> QueryResult<Option<StaffUser>> {
    diesel::insert_into(staff::table)
        .values((
            staff::username.eq(username),
            staff::display_name.eq(display_name),
            staff::email.eq(email),
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

pub async fn list(conn: &mut Conn) -> QueryResult<Vec<StaffEntry>> {
    staff::table
        .order(staff::username)
        .select((COLUMNS, staff::email, staff::disabled_at.is_not_null()))
        .load(conn)
        .await
}

/// Makes the configured admin match `YEYAK_ADMIN_PASSWORD`: created when
/// missing; when the setting differs from the one last applied, the new
/// password is set, the account enabled and made admin again, and its
/// sessions end. A password changed on `/account` since then is kept as
/// long as the setting stays the same.
pub async fn ensure_admin(conn: &mut Conn, username: &str, password: &str) -> QueryResult<()> {
    let row: Option<(i64, Option<String>)> = staff::table
        .filter(staff::username.eq(username))
        .select((staff::id, staff::configured_password_hash))
        .first(conn)
        .await
        .optional()?;
    let applied = row.as_ref().and_then(|(_, h)| h.clone());
    let configured = password.to_owned();
    let unchanged = match applied {
        Some(h) => tokio::task::spawn_blocking(move || verify_password(&h, &configured)).await.unwrap_or(false),
        None => false,
    };
    if unchanged {
        return Ok(());
    }
    let password = password.to_owned();
    let hash = tokio::task::spawn_blocking(move || hash_password(&password)).await.expect("hashing task");
    let Some((id, _)) = row else {
        diesel::insert_into(staff::table)
            .values((
                staff::username.eq(username),
                staff::display_name.eq(username),
                staff::password_hash.eq(&hash),
                staff::configured_password_hash.eq(&hash),
                staff::is_admin.eq(true),
            ))
            .on_conflict(staff::username)
            .do_nothing()
            .execute(conn)
            .await?;
        return Ok(());
    };
    crate::db::begin(conn).await?;
    let result = async {
        diesel::update(staff::table.find(id))
            .set((
                staff::password_hash.eq(&hash),
                staff::configured_password_hash.eq(&hash),
                staff::is_admin.eq(true),
                staff::disabled_at.eq(None::<DateTime<Utc>>),
            ))
            .execute(&mut *conn)
            .await?;
        diesel::delete(session::table.filter(session::user_id.eq(id))).execute(&mut *conn).await?;
        Ok(())
    }
    .await;
    crate::db::finish(conn, result).await
}

/// The enabled admins whose password is `password` (start-up refuses a
/// public bind while the development password still opens one). Argon2
/// runs off the async threads, once per enabled admin.
pub async fn admins_signing_in_with(conn: &mut Conn, password: &str) -> QueryResult<Vec<String>> {
    let admins: Vec<(String, String)> = staff::table
        .filter(staff::is_admin.eq(true))
        .filter(staff::disabled_at.is_null())
        .order(staff::username)
        .select((staff::username, staff::password_hash))
        .load(conn)
        .await?;
    let password = password.to_owned();
    let matching = tokio::task::spawn_blocking(move || {
        admins.into_iter().filter(|(_, hash)| verify_password(hash, &password)).map(|(name, _)| name).collect()
    })
    .await
    .unwrap_or_default();
    Ok(matching)
}

/// An enabled person by username, with their password hash. A disabled
/// person is not found: they cannot sign in.
pub async fn lookup(conn: &mut Conn, username: &str) -> QueryResult<Option<(StaffUser, String)>> {
    staff::table
        .filter(staff::username.eq(username))
        .filter(staff::disabled_at.is_null())
        .select((COLUMNS, staff::password_hash))
        .first(conn)
        .await
        .optional()
}

/// A person's password hash (enabled or not).
pub async fn password_hash_of(conn: &mut Conn, id: i64) -> QueryResult<Option<String>> {
    staff::table.find(id).select(staff::password_hash).first(conn).await.optional()
}

/// Sets a password and ends every session of that person except `keep` (the
/// session making the change, if it is their own), in one transaction.
pub async fn set_password(conn: &mut Conn, id: i64, hash: &str, keep: Option<&str>) -> QueryResult<bool> {
    crate::db::begin(conn).await?;
    let result = set_password_in(conn, id, hash, keep).await;
    crate::db::finish(conn, result).await
}

/// [`set_password`] inside the caller's transaction.
pub async fn set_password_in(conn: &mut Conn, id: i64, hash: &str, keep: Option<&str>) -> QueryResult<bool> {
    let keep = keep.map(token_hash).unwrap_or_default();
    let changed = diesel::update(staff::table.find(id)).set(staff::password_hash.eq(hash)).execute(&mut *conn).await?;
    diesel::delete(session::table.filter(session::user_id.eq(id)).filter(session::token_hash.ne(keep)))
        .execute(&mut *conn)
        .await?;
    Ok(changed == 1)
}

/// Disables or enables a person; disabling ends their sessions in the same
/// transaction (feeds and door displays check the flag on every request)
/// and their calendar token for good: its generation moves on, so enabling
/// them again revives no feed address (SPEC §20; a new one is shown on
/// `/account`).
pub async fn set_disabled(
    conn: &mut Conn,
    id: i64,
    disabled: bool,
    now: DateTime<Utc>,
) -> QueryResult<Option<StaffUser>> {
    crate::db::begin(conn).await?;
    let result = set_disabled_in(conn, id, disabled, now).await;
    crate::db::finish(conn, result).await
}

/// [`set_disabled`] inside the caller's transaction.
pub async fn set_disabled_in(
    conn: &mut Conn,
    id: i64,
    disabled: bool,
    now: DateTime<Utc>,
) -> QueryResult<Option<StaffUser>> {
    let user = diesel::update(staff::table.find(id))
        .set((
            staff::disabled_at.eq(disabled.then_some(now)),
            staff::calendar_generation.eq(staff::calendar_generation + i32::from(disabled)),
        ))
        .returning(COLUMNS)
        .get_result(&mut *conn)
        .await
        .optional()?;
    if disabled && user.is_some() {
        diesel::delete(session::table.filter(session::user_id.eq(id))).execute(&mut *conn).await?;
    }
    Ok(user)
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

/// The enabled person behind a live session.
pub async fn find_session(conn: &mut Conn, token: &str, now: DateTime<Utc>) -> QueryResult<Option<StaffUser>> {
    session::table
        .inner_join(staff::table)
        .filter(session::token_hash.eq(token_hash(token)))
        .filter(session::expires_at.gt(now))
        .filter(staff::disabled_at.is_null())
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
const FAILURE_WINDOW_MINUTES: i32 = 15;
/// …before sign-in from one client address is locked (1 min doubling to 15)…
const ADDRESS_FREE_FAILURES: i32 = 5;
/// …and before a username is locked for everyone. Higher than the address
/// limit, so one stranger is stopped long before they can lock someone out.
const USERNAME_FREE_FAILURES: i32 = 20;

/// Until when sign-in is locked for this username or from this address.
pub async fn locked_until(
    conn: &mut Conn,
    username: &str,
    address: Option<IpAddr>,
    now: DateTime<Utc>,
) -> QueryResult<Option<DateTime<Utc>>> {
    #[derive(QueryableByName)]
    struct Until {
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Timestamptz>)]
        until: Option<DateTime<Utc>>,
    }
    let row: Until = diesel::sql_query(
        "SELECT GREATEST(
           (SELECT locked_until FROM staff_login_throttle WHERE username = $1 AND locked_until > $3),
           (SELECT locked_until FROM address_login_throttle WHERE address = $2::inet AND locked_until > $3)) AS until",
    )
    .bind::<diesel::sql_types::Text, _>(username)
    .bind::<diesel::sql_types::Nullable<diesel::sql_types::Text>, _>(address.map(|a| a.to_string()))
    .bind::<diesel::sql_types::Timestamptz, _>(now)
    .cached()
    .get_result(conn)
    .await?;
    Ok(row.until)
}

/// Counts a failed sign-in against the username and the client address in
/// one statement, so concurrent failures all count.
pub async fn record_failure(
    conn: &mut Conn,
    username: &str,
    address: Option<IpAddr>,
    now: DateTime<Utc>,
) -> QueryResult<()> {
    // The same window-and-backoff arithmetic for both tables.
    const UPSERT: &str = "failures = CASE WHEN t.window_start < $2 - make_interval(mins => $3) THEN 1 ELSE t.failures + 1 END,
           window_start = CASE WHEN t.window_start < $2 - make_interval(mins => $3) THEN $2 ELSE t.window_start END,
           locked_until = CASE WHEN t.window_start >= $2 - make_interval(mins => $3) AND t.failures + 1 >= {free}
                               THEN $2 + LEAST(make_interval(mins => 15), make_interval(mins => 1) * power(2, t.failures + 1 - {free}))
                               ELSE t.locked_until END";
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "WITH by_name AS (
               INSERT INTO staff_login_throttle AS t (username, failures, window_start) VALUES ($1, 1, $2)
               ON CONFLICT (username) DO UPDATE SET {}
               RETURNING 1),
             by_address AS (
               INSERT INTO address_login_throttle AS t (address, failures, window_start)
               SELECT $4::inet, 1, $2 WHERE $4 IS NOT NULL
               ON CONFLICT (address) DO UPDATE SET {}
               RETURNING 1)
             SELECT (SELECT count(*) FROM by_name) + (SELECT count(*) FROM by_address) AS n",
            UPSERT.replace("{free}", &USERNAME_FREE_FAILURES.to_string()),
            UPSERT.replace("{free}", &ADDRESS_FREE_FAILURES.to_string()),
        )
    });
    diesel::sql_query(SQL.as_str())
        .bind::<diesel::sql_types::Text, _>(username)
        .bind::<diesel::sql_types::Timestamptz, _>(now)
        .bind::<diesel::sql_types::Integer, _>(FAILURE_WINDOW_MINUTES)
        .bind::<diesel::sql_types::Nullable<diesel::sql_types::Text>, _>(address.map(|a| a.to_string()))
        .cached()
        .execute(conn)
        .await?;
    Ok(())
}

/// Forgets a username's failures after it signs in (the address keeps its
/// count: a success of one's own account must not buy more guesses).
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
