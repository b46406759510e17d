//! The two reports, each one statement: PostgreSQL clips, sums and counts
//! (multiranges for the time, `FILTER` for the counts), Rust only reads rows.

use chrono_tz::Tz;
use diesel::sql_types::{Date, Text};
use diesel::QueryResult;
use diesel_async::RunQueryDsl;

use super::domain::{BookingLine, Period, RoomUse, Utilisation};
use crate::db::cached::CacheExt;
use crate::db::Conn;

/// Per active room: time held by CONFIRMED and RELEASED bookings (their room
/// copies, so a release counts up to its shortened end and a linked booking
/// once per room) clipped to the period, and to the working hours
/// (09:00–18:00 local, Monday–Friday); counts of bookings by their start.
/// Bookings are found through `reservation_time_idx` (GiST on the parent's
/// range), their copies through the primary key. A room's active bookings
/// never overlap (`reservation_room_no_overlap`), so the union of their
/// ranges (`range_agg`) measures the same as their sum.
const UTILISATION: &str = "
WITH span AS (
    SELECT $1::timestamp AT TIME ZONE $3 AS lo, ($2 + 1)::timestamp AT TIME ZONE $3 AS hi),
working AS (
    SELECT coalesce(range_agg(w), '{}') AS hours,
           coalesce(sum(extract(epoch FROM upper(w) - lower(w))), 0)::bigint AS seconds
      FROM generate_series(0, $2 - $1) AS i,
           LATERAL (SELECT $1 + i AS d) AS day,
           LATERAL (SELECT tstzrange((d + time '09:00') AT TIME ZONE $3, (d + time '18:00') AT TIME ZONE $3, '[)') AS w) AS slot
     WHERE extract(isodow FROM d) < 6),
per_room AS (
    SELECT rr.room,
           sum(extract(epoch FROM least(rr.ends_at, span.hi) - greatest(rr.starts_at, span.lo)))
               FILTER (WHERE r.status IN ('CONFIRMED', 'RELEASED')) AS booked_seconds,
           range_agg(tstzrange(rr.starts_at, rr.ends_at, '[)'))
               FILTER (WHERE r.status IN ('CONFIRMED', 'RELEASED')) AS held,
           count(*) FILTER (WHERE r.status IN ('CONFIRMED', 'RELEASED') AND r.starts_at >= span.lo) AS bookings,
           count(*) FILTER (WHERE r.status = 'CANCELLED' AND r.starts_at >= span.lo) AS cancellations,
           count(*) FILTER (WHERE r.status = 'RELEASED' AND r.starts_at >= span.lo) AS releases
      FROM span
      JOIN reservation r ON tstzrange(r.starts_at, r.ends_at, '[)') && tstzrange(span.lo, span.hi, '[)')
      JOIN reservation_room rr ON rr.reservation_id = r.id
     GROUP BY rr.room)
SELECT room.code, room.name, room.area,
       coalesce(p.booked_seconds, 0)::bigint AS booked_seconds,
       (SELECT coalesce(sum(extract(epoch FROM upper(x) - lower(x))), 0)::bigint
          FROM unnest(coalesce(p.held, '{}') * working.hours) AS x) AS working_booked_seconds,
       working.seconds AS working_seconds,
       coalesce(p.bookings, 0) AS bookings,
       coalesce(p.cancellations, 0) AS cancellations,
       coalesce(p.releases, 0) AS releases
  FROM room
 CROSS JOIN working
  LEFT JOIN per_room p ON p.room = room.code
 WHERE room.active
 ORDER BY room.area, room.position, room.code";

/// Every booking (any status) that starts in the period, by start; local
/// times as text, rooms as `A+B` in position order. A booking that starts in
/// the period overlaps it, so the overlap test lets `reservation_time_idx`
/// find the candidates (no index on the start alone is needed).
const BOOKINGS: &str = "
WITH span AS (
    SELECT $1::timestamp AT TIME ZONE $3 AS lo, ($2 + 1)::timestamp AT TIME ZONE $3 AS hi),
picked AS (
    SELECT r.* FROM span JOIN reservation r
        ON tstzrange(r.starts_at, r.ends_at, '[)') && tstzrange(span.lo, span.hi, '[)')
       AND r.starts_at >= span.lo AND r.starts_at < span.hi),
rooms AS (
    SELECT rr.reservation_id AS id, string_agg(rr.room, '+' ORDER BY rm.area, rm.position, rr.room) AS rooms
      FROM picked
      JOIN reservation_room rr ON rr.reservation_id = picked.id
      JOIN room rm ON rm.code = rr.room
     GROUP BY rr.reservation_id)
SELECT p.id,
       to_char(p.starts_at AT TIME ZONE $3, 'YYYY-MM-DD HH24:MI:SS') AS starts_at,
       to_char(p.ends_at AT TIME ZONE $3, 'YYYY-MM-DD HH24:MI:SS') AS ends_at,
       rooms.rooms, p.title, p.organizer_name AS organizer, p.status, p.series_id,
       to_char(p.created_at AT TIME ZONE $3, 'YYYY-MM-DD HH24:MI:SS') AS created_at,
       to_char(p.checked_in_at AT TIME ZONE $3, 'YYYY-MM-DD HH24:MI:SS') AS checked_in_at,
       to_char(p.released_at AT TIME ZONE $3, 'YYYY-MM-DD HH24:MI:SS') AS released_at,
       to_char(p.cancelled_at AT TIME ZONE $3, 'YYYY-MM-DD HH24:MI:SS') AS cancelled_at
  FROM picked p JOIN rooms USING (id)
 ORDER BY p.starts_at, p.id";

pub async fn utilisation(conn: &mut Conn, period: Period, tz: Tz) -> QueryResult<Utilisation> {
    let rooms: Vec<RoomUse> = diesel::sql_query(UTILISATION)
        .bind::<Date, _>(period.from())
        .bind::<Date, _>(period.to())
        .bind::<Text, _>(tz.name())
        .cached()
        .load(conn)
        .await?;
    Ok(Utilisation { period, rooms })
}

pub async fn bookings(conn: &mut Conn, period: Period, tz: Tz) -> QueryResult<Vec<BookingLine>> {
    diesel::sql_query(BOOKINGS)
        .bind::<Date, _>(period.from())
        .bind::<Date, _>(period.to())
        .bind::<Text, _>(tz.name())
        .cached()
        .load(conn)
        .await
}
