//! The staff directory as admins and integrations read it (SPEC §25):
//! `GET /api/admin/staff` in pages of 500 by username, each person with
//! their delegates and away days in the same three statements whatever the
//! page's size.

use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde::{Deserialize, Serialize};

use super::delegation;
use crate::db::schema::staff_user as staff;
use crate::db::{lower, Conn};

/// A page of the directory.
pub const PAGE: i64 = 500;

/// One person as `GET /api/admin/staff` shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StaffRecord {
    pub username: String,
    pub display_name: String,
    pub email: Option<String>,
    pub admin: bool,
    pub disabled: bool,
    /// `local`, `oidc` or `ldap` (SPEC §16).
    pub source: String,
    pub language: Option<String>,
    pub time_zone: Option<String>,
    /// Usernames of the people who may book for them.
    pub delegates: Vec<String>,
    /// Their days away from today on (SPEC §28), on which others may book their desk.
    pub away: Vec<crate::auth::away::AwaySpan>,
    pub last_sign_in_at: Option<DateTime<Utc>>,
}

/// A page of people and where the next one starts.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StaffPage {
    pub staff: Vec<StaffRecord>,
    /// The `cursor` of the next page; null on the last.
    pub next_cursor: Option<String>,
}

type Row =
    (i64, String, String, Option<String>, bool, bool, String, Option<String>, Option<String>, Option<DateTime<Utc>>);

macro_rules! row_columns {
    () => {
        (
            staff::id,
            staff::username,
            staff::display_name,
            staff::email,
            staff::is_admin,
            staff::disabled_at.is_not_null(),
            staff::source,
            staff::language,
            staff::time_zone,
            staff::last_sign_in_at,
        )
    };
}

/// The rows with their delegates and their away days from `today` on.
async fn with_delegates(conn: &mut Conn, rows: Vec<Row>, today: NaiveDate) -> QueryResult<Vec<StaffRecord>> {
    let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
    let delegates = delegation::all_delegates(conn, &ids).await?;
    let mut away = crate::auth::away::of_people(conn, &ids, today).await?;
    Ok(rows
        .into_iter()
        .map(|(id, username, display_name, email, admin, disabled, source, language, time_zone, last)| StaffRecord {
            username,
            display_name,
            email,
            admin,
            disabled,
            source,
            language,
            time_zone,
            delegates: delegates.iter().find(|(p, _)| *p == id).map(|(_, d)| d.clone()).unwrap_or_default(),
            away: away.remove(&id).unwrap_or_default(),
            last_sign_in_at: last,
        })
        .collect())
}

/// The people after `cursor` (a username), by username.
pub async fn page(conn: &mut Conn, cursor: Option<&str>, today: NaiveDate) -> QueryResult<StaffPage> {
    let mut query = staff::table.order(staff::username).select(row_columns!()).limit(PAGE + 1).into_boxed();
    if let Some(after) = cursor {
        query = query.filter(staff::username.gt(after.to_owned()));
    }
    let mut rows: Vec<Row> = query.load(conn).await?;
    let more = rows.len() as i64 > PAGE;
    rows.truncate(PAGE as usize);
    let next_cursor = if more { rows.last().map(|r| r.1.clone()) } else { None };
    Ok(StaffPage { staff: with_delegates(conn, rows, today).await?, next_cursor })
}

/// One person's record.
pub async fn record_of(conn: &mut Conn, id: i64, today: NaiveDate) -> QueryResult<Option<StaffRecord>> {
    let rows: Vec<Row> = staff::table.find(id).select(row_columns!()).load(conn).await?;
    Ok(with_delegates(conn, rows, today).await?.pop())
}

/// A person's id by username, their row locked for the change (never an
/// erased account: nobody to change, SPEC §26).
pub async fn lock(conn: &mut Conn, username: &str) -> QueryResult<Option<i64>> {
    staff::table
        .filter(lower(staff::username).eq(username.to_lowercase()))
        .filter(staff::erased_at.is_null())
        .select(staff::id)
        .for_update()
        .first(conn)
        .await
        .optional()
}

/// The profile fields an admin's change gives (name, email, admin); `None`
/// leaves one as it is, `Some(None)` clears the email.
pub async fn set_profile(
    conn: &mut Conn,
    id: i64,
    display_name: Option<&str>,
    email: Option<Option<&str>>,
    admin: Option<bool>,
) -> QueryResult<()> {
    if let Some(name) = display_name {
        diesel::update(staff::table.find(id)).set(staff::display_name.eq(name.trim())).execute(conn).await?;
    }
    if let Some(email) = email {
        let email = email.map(str::trim).filter(|e| !e.is_empty());
        diesel::update(staff::table.find(id)).set(staff::email.eq(email)).execute(conn).await?;
    }
    if let Some(admin) = admin {
        diesel::update(staff::table.find(id)).set(staff::is_admin.eq(admin)).execute(conn).await?;
    }
    Ok(())
}

/// An optional email address: empty is none; else `local@domain`, 3–254 characters.
pub(crate) fn parse_email(raw: &str) -> Result<Option<&str>, ()> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    let ok = (3..=254).contains(&raw.len())
        && raw.split_once('@').is_some_and(|(l, d)| !l.is_empty() && !d.is_empty() && !d.contains('@'))
        && !raw.chars().any(char::is_whitespace);
    if ok {
        Ok(Some(raw))
    } else {
        Err(())
    }
}

/// A person by id (enabled), as a delegation names them.
pub async fn person(conn: &mut Conn, id: i64) -> QueryResult<Option<delegation::Person>> {
    staff::table
        .find(id)
        .filter(staff::disabled_at.is_null())
        .select((staff::id, staff::username, staff::display_name))
        .first(conn)
        .await
        .optional()
}

/// A person by username, any spelling, enabled or not.
pub async fn any_person(conn: &mut Conn, username: &str) -> QueryResult<Option<delegation::Person>> {
    staff::table
        .filter(lower(staff::username).eq(username.to_lowercase()))
        .select((staff::id, staff::username, staff::display_name))
        .first(conn)
        .await
        .optional()
}

/// A person's username by id, enabled or not.
pub async fn username_of(conn: &mut Conn, id: i64) -> QueryResult<Option<String>> {
    staff::table.find(id).select(staff::username).first(conn).await.optional()
}
