//! Sign-in throttling (SPEC §13, §20): failures are counted per client
//! address and per username in one statement each; a locked attempt is
//! refused before any password is checked and is not counted. A browser
//! that signed in as a person within the last 30 days carries a device
//! mark (an HMAC keyed by `YEYAK_SECRET_KEY`; nothing of it is stored) that
//! lifts the username lock for that browser alone, so strangers spread over
//! many addresses cannot lock the person out of their own device.

use std::net::IpAddr;

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::db::cached::CacheExt;
use crate::db::Conn;

/// Failures counted within this window…
const FAILURE_WINDOW_MINUTES: i32 = 15;
/// …before attempts from one client address are locked (1 min doubling to
/// 15; at most 9 failures in any 15 minutes)…
pub const ADDRESS_FREE_FAILURES: i32 = 5;
/// …and before a username is locked for every browser but its own devices.
/// Higher than the address limit, so one stranger is stopped first.
pub const USERNAME_FREE_FAILURES: i32 = 10;
/// How long a successful sign-in marks its browser as the person's device.
pub const DEVICE_DAYS: i64 = 30;

/// The one key a person's failures count under, whatever the spelling
/// typed (SPEC §22): usernames compare case-insensitively (ASCII), so `Kim`
/// and `kim` share one count on the sign-in form, CalDAV Basic and LDAP.
pub fn username_key(username: &str) -> String {
    username.to_ascii_lowercase()
}

/// One sign-in attempt (or a current-password check) as the throttle sees it.
#[derive(Debug, Clone, Copy)]
pub struct Attempt<'a> {
    /// The username when it passes the format check; a malformed one counts
    /// against the address alone.
    pub username: Option<&'a str>,
    pub address: Option<IpAddr>,
    /// The browser carries a live device mark of this username.
    pub known_device: bool,
}

impl Attempt<'_> {
    /// The keys an attempt takes its turn on, address first (`HashingGate`).
    pub fn turn_keys(&self) -> Vec<String> {
        self.address_turn().into_iter().chain(self.username.map(|u| format!("username:{}", username_key(u)))).collect()
    }

    /// The key of the address's turn alone (an app password's attempt:
    /// the username lock does not apply to it).
    pub fn address_turn(&self) -> Option<String> {
        self.address.map(|a| format!("address:{a}"))
    }

    fn key(&self) -> Option<String> {
        self.username.map(username_key)
    }
}

/// Until when this attempt is refused unchecked: the address's lock, and the
/// username's unless the browser is one of the person's devices.
pub async fn locked_until(
    conn: &mut Conn,
    attempt: &Attempt<'_>,
    now: DateTime<Utc>,
) -> QueryResult<Option<DateTime<Utc>>> {
    #[derive(QueryableByName)]
    struct Until {
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Timestamptz>)]
        until: Option<DateTime<Utc>>,
    }
    let row: Until = diesel::sql_query(
        "SELECT GREATEST(
           (SELECT locked_until FROM staff_login_throttle WHERE username = $1 AND NOT $4 AND locked_until > $3),
           (SELECT locked_until FROM address_login_throttle WHERE address = $2::inet AND locked_until > $3)) AS until",
    )
    .bind::<diesel::sql_types::Nullable<diesel::sql_types::Text>, _>(attempt.key())
    .bind::<diesel::sql_types::Nullable<diesel::sql_types::Text>, _>(attempt.address.map(|a| a.to_string()))
    .bind::<diesel::sql_types::Timestamptz, _>(now)
    .bind::<diesel::sql_types::Bool, _>(attempt.known_device)
    .cached()
    .get_result(conn)
    .await?;
    Ok(row.until)
}

/// Counts a failed attempt against the username (when well-formed) and the
/// client address in one statement, so concurrent failures all count.
pub async fn record_failure(conn: &mut Conn, attempt: &Attempt<'_>, now: DateTime<Utc>) -> QueryResult<()> {
    // The same window-and-backoff arithmetic for both tables.
    const UPSERT: &str = "failures = CASE WHEN t.window_start < $2 - make_interval(mins => $3) THEN 1 ELSE t.failures + 1 END,
           window_start = CASE WHEN t.window_start < $2 - make_interval(mins => $3) THEN $2 ELSE t.window_start END,
           locked_until = CASE WHEN t.window_start >= $2 - make_interval(mins => $3) AND t.failures + 1 >= {free}
                               THEN $2 + LEAST(make_interval(mins => 15), make_interval(mins => 1) * power(2, t.failures + 1 - {free}))
                               ELSE t.locked_until END";
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "WITH by_name AS (
               INSERT INTO staff_login_throttle AS t (username, failures, window_start)
               SELECT $1, 1, $2 WHERE $1 IS NOT NULL
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
        .bind::<diesel::sql_types::Nullable<diesel::sql_types::Text>, _>(attempt.key())
        .bind::<diesel::sql_types::Timestamptz, _>(now)
        .bind::<diesel::sql_types::Integer, _>(FAILURE_WINDOW_MINUTES)
        .bind::<diesel::sql_types::Nullable<diesel::sql_types::Text>, _>(attempt.address.map(|a| a.to_string()))
        .cached()
        .execute(conn)
        .await?;
    Ok(())
}

/// Forgets a username's failures after it signs in (the address keeps its
/// count: a success of one's own account must not buy more guesses).
pub async fn clear_failures(conn: &mut Conn, username: &str) -> QueryResult<()> {
    use crate::db::schema::staff_login_throttle as t;
    diesel::delete(t::table.find(username_key(username))).execute(conn).await?;
    Ok(())
}

/// Whole seconds until `until`, at least 1 (`Retry-After`).
pub fn retry_after(until: DateTime<Utc>, now: DateTime<Utc>) -> u32 {
    let millis = (until - now).num_milliseconds().max(0);
    u32::try_from((millis + 999) / 1000).unwrap_or(u32::MAX).max(1)
}

fn device_mac(secret: &[u8], username: &str, expires: i64) -> Hmac<Sha256> {
    let username = username_key(username);
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("any key length");
    mac.update(b"device\x00");
    mac.update(&(username.len() as u64).to_be_bytes());
    mac.update(username.as_bytes());
    mac.update(&expires.to_be_bytes());
    mac
}

/// The device mark a browser gets when it signs in as `username`:
/// `{expiry, unix seconds}.{HMAC}`.
pub fn device_mark(secret: &[u8], username: &str, now: DateTime<Utc>) -> String {
    let expires = (now + Duration::days(DEVICE_DAYS)).timestamp();
    format!("{expires}.{}", hex::encode(device_mac(secret, username, expires).finalize().into_bytes()))
}

/// Whether `mark` is a live device mark of `username`.
pub fn is_device_of(secret: &[u8], mark: &str, username: &str, now: DateTime<Utc>) -> bool {
    let Some((expires, sent)) = mark.split_once('.') else { return false };
    let (Ok(expires), Ok(sent)) = (expires.parse::<i64>(), hex::decode(sent)) else { return false };
    expires > now.timestamp() && device_mac(secret, username, expires).verify_slice(&sent).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_marks_belong_to_one_person_for_thirty_days() {
        let now = DateTime::from_timestamp(1_900_000_000, 0).unwrap();
        let mark = device_mark(b"k", "kim", now);
        assert!(is_device_of(b"k", &mark, "kim", now + Duration::days(29)));
        assert!(!is_device_of(b"k", &mark, "kim", now + Duration::days(31)), "expired");
        assert!(!is_device_of(b"k", &mark, "lee", now), "another person");
        assert!(!is_device_of(b"other", &mark, "kim", now), "another key");
        let (_, mac) = mark.split_once('.').unwrap();
        let stretched = format!("{}.{mac}", now.timestamp() + 365 * 86_400);
        assert!(!is_device_of(b"k", &stretched, "kim", now), "the expiry is signed");
        assert!(!is_device_of(b"k", "garbage", "kim", now));
        assert!(is_device_of(b"k", &mark, "Kim", now), "whatever the spelling typed");
    }

    #[test]
    fn every_spelling_of_a_username_counts_under_one_key() {
        let typed = |username| Attempt { username: Some(username), address: None, known_device: false };
        assert_eq!(typed("Kim").turn_keys(), typed("kim").turn_keys());
        assert_eq!(typed("KIM.lee").key(), Some("kim.lee".to_owned()));
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        let now = DateTime::from_timestamp(1_900_000_000, 0).unwrap();
        assert_eq!(retry_after(now + Duration::milliseconds(60_001), now), 61);
        assert_eq!(retry_after(now, now), 1);
    }
}
