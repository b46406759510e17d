//! Staff accounts for the browser UI: Argon2 password hashes (computed in
//! `hashing`), sessions whose tokens are stored only as SHA-256 digests, the
//! first admin from config. Sign-in throttling lives in `throttle`.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use rand::RngCore;
use sha2::{Digest, Sha256};

pub use super::hashing::{hash_password, verify_password};
use crate::db::schema::{staff_session as session, staff_user as staff};
use crate::db::{lower, Conn};
use crate::i18n::Lang;

/// How long a sign-in lasts.
pub const SESSION_TTL_HOURS: i64 = 12;

#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct StaffUser {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    pub is_admin: bool,
    /// `ko` or `en` (the column's CHECK), or not chosen.
    language: Option<String>,
    /// The IANA zone chosen on `/account` (SPEC §24), or not chosen.
    time_zone: Option<String>,
}

impl StaffUser {
    /// The language the person chose on `/account` (SPEC §19), if any.
    pub fn language(&self) -> Option<Lang> {
        self.language.as_deref().and_then(Lang::parse_exact)
    }

    /// The zone the person reads times in: their own, else `home`.
    pub fn zone(&self, home: chrono_tz::Tz) -> chrono_tz::Tz {
        self.time_zone.as_deref().and_then(|z| z.parse().ok()).unwrap_or(home)
    }

    /// The same person with another zone (a page drawn right after the change).
    pub fn with_time_zone(mut self, zone: Option<chrono_tz::Tz>) -> Self {
        self.time_zone = zone.map(|z| z.name().to_owned());
        self
    }

    /// The zone as chosen (`None`: the installation's).
    pub fn chosen_zone(&self) -> Option<&str> {
        self.time_zone.as_deref()
    }
}

/// The columns of a [`StaffUser`], in its order.
pub const COLUMNS: (
    staff::id,
    staff::username,
    staff::display_name,
    staff::is_admin,
    staff::language,
    staff::time_zone,
) = (staff::id, staff::username, staff::display_name, staff::is_admin, staff::language, staff::time_zone);

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
    /// Where they sign in: `local`, `oidc` or `ldap` (SPEC §16).
    pub source: String,
    pub last_sign_in: Option<DateTime<Utc>>,
    /// The break-glass admin of `YEYAK_ADMIN_USER`, which no erase touches.
    pub break_glass: bool,
    /// Erased (SPEC §26): listed, nothing left to manage.
    pub erased: bool,
}

/// The `password_hash` of an account without a local password (company
/// sign-in): no Argon2 string, so no password ever matches it.
pub const NO_PASSWORD: &str = "!";

/// Where an account signs in (`local`, `oidc`, `ldap`); `None` when there is no such account.
pub async fn source_of(conn: &mut Conn, id: i64) -> QueryResult<Option<String>> {
    staff::table.find(id).select(staff::source).first(conn).await.optional()
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
        .on_conflict_do_nothing()
        .returning(COLUMNS)
        .get_result(conn)
        .await
        .optional()
}

pub async fn list(conn: &mut Conn) -> QueryResult<Vec<StaffEntry>> {
    staff::table
        .order(staff::username)
        .select((
            COLUMNS,
            staff::email,
            staff::disabled_at.is_not_null(),
            staff::source,
            staff::last_sign_in_at,
            staff::configured_password_hash.is_not_null(),
            staff::erased_at.is_not_null(),
        ))
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
            .on_conflict_do_nothing()
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

/// An enabled local account by username (any spelling), with its password hash. A
/// disabled person is not found, nor a company account (SPEC §16: no local
/// password): they cannot sign in with a password.
pub async fn lookup(conn: &mut Conn, username: &str) -> QueryResult<Option<(StaffUser, String)>> {
    staff::table
        .filter(lower(staff::username).eq(crate::auth::throttle::username_key(username)))
        .filter(staff::disabled_at.is_null())
        .filter(staff::source.eq("local"))
        .select((COLUMNS, staff::password_hash))
        .first(conn)
        .await
        .optional()
}

/// A person's password hash (enabled or not).
pub async fn password_hash_of(conn: &mut Conn, id: i64) -> QueryResult<Option<String>> {
    staff::table.find(id).select(staff::password_hash).first(conn).await.optional()
}

/// Sets a password and ends every session of that person except `keep`
/// (the session making the change, if it is their own), inside the
/// command's transaction. A company account has no local password to set
/// (`false`, nothing changed).
pub async fn set_password_in(conn: &mut Conn, id: i64, hash: &str, keep: Option<&str>) -> QueryResult<bool> {
    // An erased account keeps no password (SPEC §26).
    let changed =
        diesel::update(staff::table.find(id).filter(staff::source.eq("local")).filter(staff::erased_at.is_null()))
            .set(staff::password_hash.eq(hash))
            .execute(&mut *conn)
            .await?;
    if changed == 0 {
        return Ok(false);
    }
    let keep = keep.map(token_hash).unwrap_or_default();
    diesel::delete(session::table.filter(session::user_id.eq(id)).filter(session::token_hash.ne(keep)))
        .execute(&mut *conn)
        .await?;
    Ok(true)
}

/// Disables or enables a person, inside the command's transaction. A
/// disabled person's sessions end in the same transaction (feeds and door
/// displays check the flag on every request) and their calendar token and
/// app passwords for good: its generation moves on, so enabling them again
/// revives no feed address (SPEC §20; a new one is shown on `/account`).
pub async fn set_disabled_in(
    conn: &mut Conn,
    id: i64,
    disabled: bool,
    now: DateTime<Utc>,
) -> QueryResult<Option<StaffUser>> {
    // An erased account stays disabled: it is nobody to enable (SPEC §26).
    let user = diesel::update(staff::table.find(id).filter(staff::erased_at.is_null()))
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
        // Ended for good, like the calendar token: enabling revives none.
        super::app_password::revoke_all(conn, id, now).await?;
    }
    Ok(user)
}

fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A new session, and the person's last sign-in; the returned token goes
/// into the cookie and nowhere else.
pub async fn start_session(conn: &mut Conn, user_id: i64, now: DateTime<Utc>) -> QueryResult<String> {
    start_session_with(conn, user_id, None, now).await
}

/// [`start_session`] keeping an OpenID sign-in's ID token with the session,
/// for the provider's sign-out (`id_token_hint`).
pub async fn start_session_with(
    conn: &mut Conn,
    user_id: i64,
    id_token: Option<&str>,
    now: DateTime<Utc>,
) -> QueryResult<String> {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let token = hex::encode(bytes);
    diesel::insert_into(session::table)
        .values((
            session::token_hash.eq(token_hash(&token)),
            session::user_id.eq(user_id),
            session::created_at.eq(now),
            session::expires_at.eq(now + Duration::hours(SESSION_TTL_HOURS)),
            session::id_token.eq(id_token),
        ))
        .execute(&mut *conn)
        .await?;
    diesel::update(staff::table.find(user_id)).set(staff::last_sign_in_at.eq(now)).execute(conn).await?;
    Ok(token)
}

/// The enabled person behind a live session, and whether anyone named
/// them a delegate.
pub async fn find_session(conn: &mut Conn, token: &str, now: DateTime<Utc>) -> QueryResult<Option<(StaffUser, bool)>> {
    // Whether anyone named them a delegate (SPEC §25), in the same
    // statement: the booking form offers "for" only then, at no extra
    // statement for everyone else.
    let delegate_of_someone = diesel::dsl::sql::<diesel::sql_types::Bool>(
        "EXISTS (SELECT 1 FROM delegation d WHERE d.delegate = staff_user.id)",
    );
    session::table
        .inner_join(staff::table)
        .filter(session::token_hash.eq(token_hash(token)))
        .filter(session::expires_at.gt(now))
        .filter(staff::disabled_at.is_null())
        .select((COLUMNS, delegate_of_someone))
        .first(conn)
        .await
        .optional()
}

/// Stores a person's language (`None`: not chosen); `false` when there is
/// no such person.
pub async fn set_language(conn: &mut Conn, id: i64, lang: Option<Lang>) -> QueryResult<bool> {
    let changed =
        diesel::update(staff::table.find(id)).set(staff::language.eq(lang.map(Lang::tag))).execute(conn).await?;
    Ok(changed == 1)
}

/// Stores a person's time zone (`None`: the installation's).
pub async fn set_time_zone(conn: &mut Conn, id: i64, zone: Option<chrono_tz::Tz>) -> QueryResult<bool> {
    let changed =
        diesel::update(staff::table.find(id)).set(staff::time_zone.eq(zone.map(|z| z.name()))).execute(conn).await?;
    Ok(changed == 1)
}

/// Ends a session; the ID token it was started with, if any (for the
/// provider's sign-out).
pub async fn end_session(conn: &mut Conn, token: &str) -> QueryResult<Option<String>> {
    let id_token = diesel::delete(session::table.filter(session::token_hash.eq(token_hash(token))))
        .returning(session::id_token)
        .get_result::<Option<String>>(conn)
        .await
        .optional()?;
    Ok(id_token.flatten())
}
