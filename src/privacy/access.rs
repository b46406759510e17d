//! Access records (SPEC §26): who looked at whose personal data, when, from
//! where, and how many people it showed. The table is append-only by the
//! database's own triggers (migrations/2026-12-06-000040_privacy); this
//! module only inserts, lists and purges what the retention lets go.
//!
//! A record is written by a single statement beside the read it records,
//! before the data is answered: the read is not a command (nothing else
//! changes), so there is no pipeline transaction to join, and a read whose
//! record cannot be written is refused rather than answered unrecorded.

use std::net::IpAddr;

use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use diesel::sql_types::{Int4, Int8, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use schemars::JsonSchema;
use serde::Serialize;

use crate::db::{Conn, DbError};

/// `YEYAK_ACCESS_LOG_DAYS`'s default (the migration's `privacy_setting` row too).
pub const DEFAULT_DAYS: u32 = crate::config::ACCESS_LOG_DAYS;

/// Who looked: a signed-in admin, or an admin API key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    Staff { id: i64, username: String },
    Key { tenant: String },
}

/// What was looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `/admin/staff`.
    StaffList,
    /// `GET /api/admin/staff`.
    StaffApiList,
    /// `GET /api/admin/reports/bookings.csv`.
    BookingsCsv,
    /// A person's export, by an admin.
    Export,
    /// Another person's booking history.
    History,
    /// A person erased.
    Erase,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::StaffList => "staff_list",
            Kind::StaffApiList => "staff_api_list",
            Kind::BookingsCsv => "bookings_csv",
            Kind::Export => "export",
            Kind::History => "history",
            Kind::Erase => "erase",
        }
    }
}

/// One view to record.
#[derive(Debug, Clone)]
pub struct Access<'a> {
    pub actor: &'a Actor,
    pub kind: Kind,
    /// The person viewed (a staff id); none for a list.
    pub subject: Option<i64>,
    /// How many people the view showed.
    pub people: usize,
    /// The request's client address, as `transport::Transport::client_ip` decides it.
    pub address: Option<IpAddr>,
}

/// Writes one record, in one statement; `at` is the database's clock.
pub async fn record(conn: &mut Conn, access: &Access<'_>) -> Result<(), DbError> {
    let (staff, tenant, name) = match access.actor {
        Actor::Staff { id, username } => (Some(*id), None, username.clone()),
        Actor::Key { tenant } => (None, Some(tenant.clone()), tenant.clone()),
    };
    diesel::sql_query(
        "INSERT INTO access_record (actor_staff, actor_tenant, actor_name, kind, subject, address, people)
         VALUES ($1, $2, $3, $4, $5, $6::inet, $7)",
    )
    .bind::<Nullable<Int8>, _>(staff)
    .bind::<Nullable<Text>, _>(tenant)
    .bind::<Text, _>(name)
    .bind::<Text, _>(access.kind.as_str())
    .bind::<Nullable<Int8>, _>(access.subject)
    .bind::<Nullable<Text>, _>(access.address.map(|a| a.to_string()))
    .bind::<Int4, _>(i32::try_from(access.people).unwrap_or(i32::MAX))
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes `YEYAK_ACCESS_LOG_DAYS` where the append-only trigger reads it
/// (one statement at start-up, before any door is open).
pub async fn set_retention(conn: &mut Conn, days: u32) -> Result<(), DbError> {
    diesel::sql_query("UPDATE privacy_setting SET access_log_days = $1 WHERE access_log_days <> $1")
        .bind::<Int4, _>(i32::try_from(days).unwrap_or(i32::MAX))
        .execute(conn)
        .await?;
    Ok(())
}

/// A record as `/admin/access-log` and the JSON API show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema, QueryableByName)]
#[serde(rename_all = "camelCase")]
pub struct AccessRecord {
    #[diesel(sql_type = Int8)]
    pub id: i64,
    #[diesel(sql_type = Timestamptz)]
    pub at: DateTime<Utc>,
    /// `staff` (a signed-in admin) or `key` (an admin API key).
    #[diesel(sql_type = Text)]
    pub actor_kind: String,
    /// The admin's username, or the key's tenant.
    #[diesel(sql_type = Text)]
    pub actor: String,
    /// `staff_list`, `staff_api_list`, `bookings_csv`, `export`, `history` or `erase`.
    #[diesel(sql_type = Text)]
    pub kind: String,
    /// The username of the person viewed; none for a list.
    #[diesel(sql_type = Nullable<Text>)]
    pub subject: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub address: Option<String>,
    #[diesel(sql_type = Int4)]
    pub people: i32,
}

/// The most records one listing gives.
pub const LIST_LIMIT: i64 = 5000;

/// Records of `[from, to)`, newest first, at most [`LIST_LIMIT`], and
/// whether more were left out (then a narrower range shows them).
pub async fn list(
    conn: &mut Conn,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<(Vec<AccessRecord>, bool), DbError> {
    let mut records: Vec<AccessRecord> = diesel::sql_query(
        "SELECT a.id, a.at,
                CASE WHEN a.actor_staff IS NULL THEN 'key' ELSE 'staff' END AS actor_kind,
                a.actor_name AS actor, a.kind, s.username AS subject, host(a.address) AS address, a.people
           FROM access_record a LEFT JOIN staff_user s ON s.id = a.subject
          WHERE a.at >= $1 AND a.at < $2
          ORDER BY a.at DESC, a.id DESC
          LIMIT $3",
    )
    .bind::<Timestamptz, _>(from)
    .bind::<Timestamptz, _>(to)
    .bind::<Int8, _>(LIST_LIMIT + 1)
    .load(conn)
    .await?;
    let more = records.len() as i64 > LIST_LIMIT;
    records.truncate(LIST_LIMIT as usize);
    Ok((records, more))
}

/// One bounded DELETE for the sweeper's purge: records older than both the
/// cut-off and the retention the trigger reads, so the purge never asks for
/// what the database would refuse, whatever the process's clock says.
pub const PURGE: &str = "DELETE FROM access_record WHERE ctid = ANY(ARRAY(
     SELECT ctid FROM access_record
      WHERE at < LEAST($1, now() - make_interval(days => (SELECT access_log_days FROM privacy_setting)))
      LIMIT $2))";

/// The retention as a duration.
pub fn retention(days: u32) -> Duration {
    Duration::days(i64::from(days))
}

/// Local midnight of `day` in `tz` (the earlier of a repeated hour, the
/// hour after a skipped one).
fn midnight(tz: Tz, day: NaiveDate) -> DateTime<Utc> {
    let at = day.and_hms_opt(0, 0, 0).expect("midnight exists");
    tz.from_local_datetime(&at)
        .earliest()
        .or_else(|| tz.from_local_datetime(&(at + Duration::hours(1))).earliest())
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|| Utc.from_utc_datetime(&at))
}

/// The instants `[from 00:00, the day after to, 00:00)` of local dates in `tz`.
pub fn instants(from: NaiveDate, to: NaiveDate, tz: Tz) -> (DateTime<Utc>, DateTime<Utc>) {
    (midnight(tz, from), midnight(tz, to.succ_opt().unwrap_or(to)))
}
