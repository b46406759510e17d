//! Retention purge (SPEC §4, §13: tables do not grow without bound), the one
//! purge of the installation. The elected sweeper deletes, each tick, rows
//! older than their retention from the tables nothing else ever shrinks:
//! idempotency records (`YEYAK_IDEMPOTENCY_RETENTION_HOURS`), expired
//! sessions, sign-in throttle rows, delivered notifications and delivery
//! attempt logs (`YEYAK_RETENTION_DAYS`), access records
//! (`YEYAK_ACCESS_LOG_DAYS`, never earlier: the database refuses it); and
//! bookings that ended more than `YEYAK_PERSONAL_DATA_DAYS` ago lose their
//! title and organizer name (`privacy::retention`). Each DELETE takes at
//! most `batch` rows by their `ctid` (a TID scan, no long lock), and a tick
//! runs at most `MAX_BATCHES` of them per table, so a backlog drains over
//! several ticks without starving the expiry work.

use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{Int8, Timestamptz};
use diesel_async::RunQueryDsl;
use serde::Serialize;

use crate::admission::Lane;
use crate::db::{Conn, DbError};

/// Batches one table gets per tick.
pub const MAX_BATCHES: usize = 10;

/// `YEYAK_RETENTION_DAYS`, `YEYAK_IDEMPOTENCY_RETENTION_HOURS` and `YEYAK_PURGE_BATCH`.
#[derive(Debug, Clone, Copy)]
pub struct Purge {
    pub retention: Duration,
    pub idempotency_retention: Duration,
    /// `YEYAK_ACCESS_LOG_DAYS` (SPEC §26); the database's own retention bounds it too.
    pub access_log: Duration,
    /// `YEYAK_PERSONAL_DATA_DAYS` (SPEC §26); none keeps names for ever.
    pub personal_data: Option<Duration>,
    pub batch: i64,
}

impl Default for Purge {
    fn default() -> Self {
        Purge {
            retention: Duration::days(30),
            idempotency_retention: Duration::hours(24),
            access_log: crate::privacy::access::retention(crate::privacy::access::DEFAULT_DAYS),
            personal_data: None,
            batch: 1000,
        }
    }
}

/// Rows removed by one purge, per table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Purged {
    pub idempotency_records: u64,
    pub sessions: u64,
    pub throttle: u64,
    pub address_throttle: u64,
    pub deliveries: u64,
    pub attempts: u64,
    pub access_records: u64,
    /// Bookings that lost title and organizer name (not deleted).
    pub anonymised: u64,
}

impl Purged {
    pub fn total(&self) -> u64 {
        self.idempotency_records
            + self.sessions
            + self.throttle
            + self.address_throttle
            + self.deliveries
            + self.attempts
            + self.access_records
            + self.anonymised
    }
}

/// One bounded DELETE per statement: `$1` is the cut-off, `$2` the batch.
/// Every selection is served by an index of migrations/…_abuse_limits.
const SESSIONS: &str = "DELETE FROM staff_session WHERE ctid = ANY(ARRAY(
     SELECT ctid FROM staff_session WHERE expires_at < $1 LIMIT $2))";
const THROTTLE: &str = "DELETE FROM staff_login_throttle WHERE ctid = ANY(ARRAY(
     SELECT ctid FROM staff_login_throttle
      WHERE window_start < $1 AND (locked_until IS NULL OR locked_until < $1) LIMIT $2))";
const ADDRESS_THROTTLE: &str = "DELETE FROM address_login_throttle WHERE ctid = ANY(ARRAY(
     SELECT ctid FROM address_login_throttle
      WHERE window_start < $1 AND (locked_until IS NULL OR locked_until < $1) LIMIT $2))";
/// Delivered rows only: PENDING ones are still owed, EXHAUSTED ones wait for
/// an operator's re-drive. Their attempt rows go with them (ON DELETE CASCADE).
const DELIVERIES: &str = "DELETE FROM notification_outbox WHERE ctid = ANY(ARRAY(
     SELECT ctid FROM notification_outbox WHERE status = 'DELIVERED' AND delivered_at < $1 LIMIT $2))";
const ATTEMPTS: &str = "DELETE FROM notification_attempt WHERE ctid = ANY(ARRAY(
     SELECT ctid FROM notification_attempt WHERE attempted_at < $1 LIMIT $2))";

/// Purges what is older than `now - retention`, in batches.
pub async fn run(conn: &mut Conn, purge: Purge, now: DateTime<Utc>) -> Result<Purged, DbError> {
    let cutoff = now - purge.retention;
    let records = crate::idempotency::purge_before(conn, now - purge.idempotency_retention, purge.batch, MAX_BATCHES);
    Ok(Purged {
        idempotency_records: records.await? as u64,
        sessions: batches(conn, SESSIONS, cutoff, purge.batch).await?,
        throttle: batches(conn, THROTTLE, cutoff, purge.batch).await?,
        address_throttle: batches(conn, ADDRESS_THROTTLE, cutoff, purge.batch).await?,
        deliveries: batches(conn, DELIVERIES, cutoff, purge.batch).await?,
        attempts: batches(conn, ATTEMPTS, cutoff, purge.batch).await?,
        access_records: batches(conn, crate::privacy::access::PURGE, now - purge.access_log, purge.batch).await?,
        anonymised: match purge.personal_data {
            Some(days) => crate::privacy::retention::run(conn, now - days, now, purge.batch, MAX_BATCHES).await?,
            None => 0,
        },
    })
}

/// Runs `sql` until a batch comes back short, at most `MAX_BATCHES` times.
async fn batches(conn: &mut Conn, sql: &'static str, cutoff: DateTime<Utc>, batch: i64) -> Result<u64, DbError> {
    let mut total = 0;
    for _ in 0..MAX_BATCHES {
        let n = diesel::sql_query(sql)
            .bind::<Timestamptz, _>(cutoff)
            .bind::<Int8, _>(batch)
            .execute(conn)
            .await
            .map_err(DbError::from)?;
        total += n as u64;
        if (n as i64) < batch {
            break;
        }
    }
    Ok(total)
}

impl super::Sweeper {
    /// Retention and batch size of the purge an elected tick runs.
    pub fn with_purge(mut self, purge: Purge) -> Self {
        self.purge = purge;
        self
    }

    /// The retention purge of one elected tick, in the background lane.
    pub async fn purge(&self) -> Result<Purged, DbError> {
        let _lane = match &self.bulkhead {
            Some(b) => b.enter(Lane::Background).await,
            None => None,
        };
        let mut conn = self.pool.get().await?;
        let purged = run(&mut conn, self.purge, self.clock.now()).await?;
        self.metrics.idempotency_purged.inc_by(purged.idempotency_records);
        for (table, n) in [
            ("idempotency_record", purged.idempotency_records),
            ("staff_session", purged.sessions),
            ("staff_login_throttle", purged.throttle),
            ("address_login_throttle", purged.address_throttle),
            ("notification_outbox", purged.deliveries),
            ("notification_attempt", purged.attempts),
            ("access_record", purged.access_records),
            ("reservation", purged.anonymised),
        ] {
            self.metrics.purged_rows.with_label_values(&[table]).inc_by(n);
        }
        if purged.total() > 0 {
            tracing::info!(?purged, "rows past their retention purged");
        }
        Ok(purged)
    }
}
