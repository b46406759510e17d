//! Retention of personal data (SPEC §26, `YEYAK_PERSONAL_DATA_DAYS`): the
//! sweeper's set-based batches that take title, organizer name and the
//! titles in their history from bookings that ended longer ago, the same
//! anonymisation an erase does. Rooms, times and states stay, so reports
//! give the same numbers. Each batch is one statement: a booking is
//! anonymised whole or not at all.

use chrono::{DateTime, Utc};
use diesel::sql_types::{Int8, Text, Timestamptz};
use diesel_async::RunQueryDsl;

use super::erase::{anonymise_sql, Count, ANONYMOUS};
use crate::db::{Conn, DbError};

/// Bookings that ended before `$1`, oldest first (`reservation_named_by_end_idx`).
const DUE: &str = "id = ANY(ARRAY(
     SELECT id FROM reservation WHERE ends_at < $1 AND anonymised_at IS NULL ORDER BY ends_at LIMIT $4))";

/// Series none of whose occurrences ends at or after `$1`.
const SERIES: &str = "UPDATE booking_series s
    SET title = $2, organizer_name = $2, anonymised_at = $3
  WHERE s.id = ANY(ARRAY(
        SELECT s2.id FROM booking_series s2
         WHERE s2.anonymised_at IS NULL AND s2.ends_at < $1
           AND NOT EXISTS (SELECT 1 FROM reservation r WHERE r.series_id = s2.id AND r.ends_at >= $1)
         LIMIT $4))";

/// Anonymises up to `batches` batches of `batch` bookings that ended before
/// `cutoff`, then such series; returns the bookings anonymised.
pub async fn run(
    conn: &mut Conn,
    cutoff: DateTime<Utc>,
    now: DateTime<Utc>,
    batch: i64,
    batches: usize,
) -> Result<u64, DbError> {
    let mut total = 0;
    for _ in 0..batches {
        let done: Count = diesel::sql_query(anonymise_sql(DUE))
            .bind::<Timestamptz, _>(cutoff)
            .bind::<Text, _>(ANONYMOUS)
            .bind::<Timestamptz, _>(now)
            .bind::<Int8, _>(batch)
            .get_result(conn)
            .await?;
        total += done.n as u64;
        if done.n < batch {
            break;
        }
    }
    for _ in 0..batches {
        let n = diesel::sql_query(SERIES)
            .bind::<Timestamptz, _>(cutoff)
            .bind::<Text, _>(ANONYMOUS)
            .bind::<Timestamptz, _>(now)
            .bind::<Int8, _>(batch)
            .execute(conn)
            .await?;
        if (n as i64) < batch {
            break;
        }
    }
    Ok(total)
}
