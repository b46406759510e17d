//! A series' writes (SPEC §9), one file per command, and what they share:
//! every occurrence is a reservation of its own, written by one multi-row
//! statement each for the parents and for the room copies. The copies go in
//! (time, room position) order — the same global order as single bookings —
//! with `ON CONFLICT DO NOTHING`, so the EXCLUDE constraint alone decides
//! what is taken, two series that overlap on many dates wait on each other
//! in one direction only (no deadlock), and a taken date is a missing row,
//! not an error.

pub mod cancel;
pub mod change;
pub mod create;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Int8, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::command::{CommandError, Ctx};
use crate::db::cached::CacheExt;
use crate::db::schema::{booking_series, reservation};
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};
use crate::rooms::access;
use crate::rooms::booking::{Booking, BOOKING_COLUMNS};
use crate::rooms::domain::Status;

pub use cancel::CancelSeries;
pub use change::{ChangeSeries, SeriesChange};
pub use create::{CreateSeries, Created, OnConflict};

/// A series as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Queryable, Selectable)]
#[diesel(table_name = booking_series)]
#[serde(rename_all = "camelCase")]
pub struct Series {
    pub id: i64,
    pub title: String,
    /// Room codes in position order.
    pub rooms: Vec<String>,
    /// The RRULE value as given.
    pub recurrence: String,
    #[diesel(column_name = organizer_name)]
    pub organizer: String,
    /// The first occurrence.
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    #[serde(skip)]
    pub organizer_digest: String,
    #[serde(skip)]
    pub timezone: String,
    /// Its occurrences are private (SPEC §26).
    pub private: bool,
}

/// A date the series could not have, and the booking that holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, QueryableByName)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "TakenDate")]
pub struct Taken {
    #[diesel(sql_type = Timestamptz)]
    pub starts_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    pub ends_at: DateTime<Utc>,
    #[diesel(sql_type = Int8)]
    pub booking_id: i64,
}

/// The catalogue counts the dates from `conflicts` ("이미 예약된 날짜가 2개 있습니다. …").
pub(crate) fn conflict(taken: Vec<Taken>) -> ApiError {
    ApiError::worded(ErrorCode::SeriesConflict, json!({ "conflicts": taken }))
}

/// For each range, the first live booking holding any of `rooms` then,
/// its buffers and the room's included (ranges given as parallel arrays).
pub(crate) async fn holders(
    conn: &mut Conn,
    rooms: &[String],
    starts: &[DateTime<Utc>],
    ends: &[DateTime<Utc>],
    except_series: Option<i64>,
) -> QueryResult<Vec<Taken>> {
    diesel::sql_query(
        "SELECT DISTINCT ON (o.ord) o.s AS starts_at, o.e AS ends_at, rr.reservation_id AS booking_id
           FROM unnest($2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY AS o(s, e, ord)
           JOIN reservation_room rr ON rr.room = ANY($1) AND rr.active
           JOIN room rm ON rm.code = rr.room
            AND reservation_room_occupied(rr.starts_at, rr.ends_at, rr.buffer_before_minutes, rr.buffer_after_minutes)
             && reservation_room_occupied(o.s, o.e, rm.buffer_before_minutes, rm.buffer_after_minutes)
           JOIN reservation r ON r.id = rr.reservation_id
          WHERE $4::int8 IS NULL OR r.series_id IS DISTINCT FROM $4
          ORDER BY o.ord, rr.reservation_id",
    )
    .bind::<Array<Text>, _>(rooms)
    .bind::<Array<Timestamptz>, _>(starts)
    .bind::<Array<Timestamptz>, _>(ends)
    .bind::<Nullable<Int8>, _>(except_series)
    .cached()
    .load(conn)
    .await
}

#[derive(QueryableByName)]
struct Claimed {
    #[diesel(sql_type = Int8)]
    reservation_id: i64,
}

/// Writes room copies for `(id, start, end)` rows in (time, room) order;
/// returns the ids that got every room.
pub(crate) async fn claim_all(
    conn: &mut Conn,
    rooms: &[String],
    rows: &[(i64, DateTime<Utc>, DateTime<Utc>)],
) -> QueryResult<Vec<i64>> {
    let (ids, (starts, ends)): (Vec<i64>, (Vec<_>, Vec<_>)) = rows.iter().map(|(i, s, e)| (*i, (*s, *e))).unzip();
    let claimed: Vec<Claimed> = diesel::sql_query(
        "INSERT INTO reservation_room (reservation_id, room, starts_at, ends_at, active)
         SELECT o.id, r.code, o.s, o.e, true
           FROM unnest($1::int8[], $2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY AS o(id, s, e, ord)
          CROSS JOIN unnest($4::text[]) WITH ORDINALITY AS r(code, rord)
          ORDER BY o.s, o.ord, r.rord
         ON CONFLICT DO NOTHING
         RETURNING reservation_id",
    )
    .bind::<Array<Int8>, _>(&ids)
    .bind::<Array<Timestamptz>, _>(&starts)
    .bind::<Array<Timestamptz>, _>(&ends)
    .bind::<Array<Text>, _>(rooms)
    .cached()
    .load(conn)
    .await?;
    Ok(ids.into_iter().filter(|id| claimed.iter().filter(|c| c.reservation_id == *id).count() == rooms.len()).collect())
}

pub async fn find(conn: &mut Conn, id: i64) -> QueryResult<Option<Series>> {
    booking_series::table.find(id).select(Series::as_select()).first(conn).await.optional()
}

/// Every occurrence of a series, cancelled ones included, by start.
pub async fn occurrences(conn: &mut Conn, id: i64) -> QueryResult<Vec<Booking>> {
    diesel::sql_query(format!("{} WHERE r.series_id = $1 ORDER BY r.starts_at, r.id", BOOKING_COLUMNS))
        .bind::<Int8, _>(id)
        .cached()
        .load(conn)
        .await
}

/// Locks a series the principal may change.
pub(crate) async fn lock(conn: &mut Conn, id: i64, ctx: &Ctx<'_>) -> Result<Series, CommandError> {
    let series: Series = booking_series::table
        .find(id)
        .select(Series::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| ApiError::not_found("series"))?;
    if !access::may_change(ctx.principal, &series.organizer_digest) {
        return Err(access::not_organizer().into());
    }
    Ok(series)
}

/// Live occurrences starting at or after `from`, locked in id order;
/// `rule_only` keeps only those that were never changed on their own.
pub(crate) async fn live_from(
    conn: &mut Conn,
    series_id: i64,
    from: DateTime<Utc>,
    rule_only: bool,
) -> QueryResult<Vec<i64>> {
    let ids: Vec<(i64, bool)> = reservation::table
        .filter(reservation::series_id.eq(series_id))
        .filter(reservation::starts_at.ge(from))
        .filter(reservation::status.eq_any(Status::live_texts()))
        .order(reservation::id)
        .select((reservation::id, reservation::is_exception))
        .for_update()
        .load(conn)
        .await?;
    Ok(ids.into_iter().filter(|(_, exception)| !(rule_only && *exception)).map(|(id, _)| id).collect())
}

/// A person's series with how many live occurrences are still ahead.
#[derive(Debug, Clone, QueryableByName)]
pub struct Upcoming {
    #[diesel(sql_type = Int8)]
    pub id: i64,
    #[diesel(sql_type = Text)]
    pub title: String,
    #[diesel(sql_type = Text)]
    pub recurrence: String,
    #[diesel(sql_type = Array<Text>)]
    pub rooms: Vec<String>,
    #[diesel(sql_type = Int8)]
    pub ahead: i64,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub next_start: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Int8>)]
    pub next_id: Option<i64>,
}

pub async fn of_organizer(conn: &mut Conn, digest: &str, now: DateTime<Utc>) -> QueryResult<Vec<Upcoming>> {
    diesel::sql_query(concat!(
        "SELECT s.id, s.title, s.recurrence, s.rooms, count(r.id) AS ahead, min(r.starts_at) AS next_start,
                (array_agg(r.id ORDER BY r.starts_at))[1] AS next_id
           FROM booking_series s
           JOIN reservation r ON r.series_id = s.id AND r.ends_at > $2 AND r.status IN ",
        crate::live_statuses!(),
        "
          WHERE s.organizer_digest = $1
          GROUP BY s.id
          ORDER BY min(r.starts_at), s.id"
    ))
    .bind::<Text, _>(digest)
    .bind::<Timestamptz, _>(now)
    .cached()
    .load(conn)
    .await
}

/// The person who organizes series `id` (none: an API key's, or no such series).
pub async fn organizer_staff_id(conn: &mut Conn, id: i64) -> QueryResult<Option<i64>> {
    use crate::db::schema::booking_series;
    Ok(booking_series::table
        .find(id)
        .select(booking_series::organizer_staff_id)
        .first::<Option<i64>>(conn)
        .await
        .optional()?
        .flatten())
}
