//! `booking.release_no_shows` (SPEC §11), the sweeper's: confirmed bookings
//! of check-in rooms not checked in when their grace ended are shortened to
//! the release time (rounded up to the minute, never before a minute after
//! the start) on the parent and every room copy, marked RELEASED, recorded
//! and announced — a batch per transaction, in one set of statements. The
//! status test in the UPDATE makes a second run (or a second process)
//! release nothing again, and `SKIP LOCKED` steps around a check-in in
//! flight.

use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{Array, Int8, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::cached::CacheExt;
use crate::db::Conn;
use crate::rooms::booking::find_many;
use crate::rooms::events;

pub static RELEASE: Operation = Operation::new("booking.release_no_shows", &[Role::System]);

/// Bookings released per transaction.
pub const BATCH: i64 = 500;

#[derive(QueryableByName)]
struct Released {
    #[diesel(sql_type = Int8)]
    id: i64,
    #[diesel(sql_type = Timestamptz)]
    old_ends_at: DateTime<Utc>,
    #[diesel(sql_type = diesel::sql_types::Nullable<Int8>)]
    series_id: Option<i64>,
}

/// The minute at or after `t`.
pub fn ceil_minute(t: DateTime<Utc>) -> DateTime<Utc> {
    use chrono::DurationRound;
    let floor = t.duration_trunc(Duration::minutes(1)).unwrap_or(t);
    if floor == t {
        t
    } else {
        floor + Duration::minutes(1)
    }
}

/// Releases at most `limit` due no-shows; answers how many.
#[derive(Debug, Clone, Copy)]
pub struct ReleaseNoShows {
    pub limit: i64,
}

impl Command for ReleaseNoShows {
    type Output = usize;

    fn operation(&self) -> &'static Operation {
        &RELEASE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::json!({ "limit": self.limit })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<usize, CommandError> {
        let released: Vec<Released> = diesel::sql_query(
            "WITH due AS (
                 SELECT id FROM reservation
                  WHERE check_in_required AND status = 'CONFIRMED' AND checked_in_at IS NULL AND starts_at <= $1
                  ORDER BY starts_at, id
                  LIMIT $3
                    FOR UPDATE SKIP LOCKED),
             old AS (SELECT r.id, r.ends_at FROM reservation r JOIN due USING (id))
             UPDATE reservation r
                SET status = 'RELEASED', released_at = $2, released_until = r.ends_at,
                    ends_at = GREATEST(r.starts_at + interval '1 minute', LEAST(r.ends_at, $4)),
                    version = r.version + 1, updated_at = $2
               FROM old
              WHERE r.id = old.id
          RETURNING r.id, old.ends_at AS old_ends_at, r.series_id",
        )
        .bind::<Timestamptz, _>(ctx.now - ctx.policy.check_in_grace)
        .bind::<Timestamptz, _>(ctx.now)
        .bind::<Int8, _>(self.limit)
        .bind::<Timestamptz, _>(ceil_minute(ctx.now))
        .cached()
        .load(conn)
        .await?;
        if released.is_empty() {
            return Ok(0);
        }
        let ids: Vec<i64> = released.iter().map(|r| r.id).collect();
        diesel::sql_query(
            "UPDATE reservation_room rr SET ends_at = r.ends_at
               FROM reservation r WHERE rr.reservation_id = r.id AND r.id = ANY($1)",
        )
        .bind::<Array<Int8>, _>(&ids)
        .cached()
        .execute(conn)
        .await?;
        let after = find_many(conn, &ids).await?;
        let ends: Vec<(i64, DateTime<Utc>)> = released.iter().map(|r| (r.id, r.old_ends_at)).collect();
        events::released(conn, &after, &ends, ctx).await?;
        let mut series: Vec<i64> = released.iter().filter_map(|r| r.series_id).collect();
        series.sort_unstable();
        series.dedup();
        super::strikes::after_release(conn, &series, ctx).await?;
        Ok(after.len())
    }
}
