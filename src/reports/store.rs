//! The two reports, each one statement: PostgreSQL clips, sums and counts
//! (multiranges for the time, `FILTER` for the counts), Rust only reads rows.
//! Each area's working hours are computed in the same statement from the
//! `area` and `holiday` rows (`generate_series` over the period's dates, a
//! window a day in the area's zone, holidays left out), so a report sends
//! one statement whatever the number of areas or rooms.

use chrono_tz::Tz;
use diesel::sql_types::{BigInt, Bool, Date, Nullable, Text};
use diesel::{QueryResult, QueryableByName};
use diesel_async::RunQueryDsl;

use super::domain::{AreaHours, BookingLine, Period, RoomUse, Utilisation};
use crate::db::cached::CacheExt;
use crate::db::Conn;

/// Per area (all, or the one asked for in `$4`; a null zone is `$3`,
/// `YEYAK_TIMEZONE`): the period's local dates in its zone (`lo`, `hi`)
/// and its working hours — for each date that is not a holiday of its
/// calendar, the weekday's span of `working_hours` in its zone — as one
/// `tstzmultirange` and in seconds (elapsed time, so a daylight-saving
/// change inside the span counts as it happens).
///
/// Per active room of those areas: time held by CONFIRMED and RELEASED
/// bookings (their room copies, so a release counts up to its shortened end
/// and a linked booking once per room) clipped to the period in its area's
/// zone, and to its area's working hours (a booking on a holiday is booked
/// time, not working time); counts of bookings by their start in that
/// period. Bookings are found through `reservation_time_idx` (GiST on the
/// parent's range) over the period's dates widened by a day on each side
/// (every zone's midnight is within 14 hours of UTC's), a range of
/// constants the planner estimates well, and each is clipped to its room's
/// area's period in the aggregates' `FILTER`s, so no condition links a
/// booking to an area other than through its room (a join on the range
/// had the planner pair every booking with every area first). A room's
/// active bookings never overlap (`reservation_room_no_overlap`), so the
/// union of their ranges (`range_agg`) measures the same as their sum; the
/// copies from the widened edges fall outside the area's working hours.
///
/// Recaptured time (SPEC §25): per room, the time no-show releases gave
/// back (from the shortened end to the end before, `released_until`) inside
/// the period, and the part of it that bookings made after the release
/// occupy (their room rows over that span, found through the room's
/// exclusion index; a room's live rows never overlap, so the sum is exact).
/// That part is summed per room over the releases' ids, after the
/// aggregate: as a subquery inside it, its cost was counted for every
/// booking of the period and the planner chose a nested loop that took a
/// campus's site report from 5 s to 40 s (docs/PERFORMANCE.md "Campus").
///
/// An area without active rooms gives one row without a room (`code`
/// null), so an area asked for that exists is told from one that does not
/// (no row at all) in the same statement.
macro_rules! utilisation_sql {
    ($bookings:expr) => {
        concat!(
            "
WITH areas AS (
    SELECT a.code, z.tz, a.working_hours, a.holiday_calendar,
           $1::timestamp AT TIME ZONE z.tz AS lo,
           ($2 + 1)::timestamp AT TIME ZONE z.tz AS hi
      FROM area a
     CROSS JOIN LATERAL (SELECT coalesce(a.time_zone, $3) AS tz) AS z
     WHERE $4::text IS NULL OR a.code = $4),
working AS (
    SELECT a.code AS area, a.tz, a.lo, a.hi,
           coalesce(range_agg(w.slot) FILTER (WHERE w.slot IS NOT NULL), '{}') AS hours,
           coalesce(sum(extract(epoch FROM upper(w.slot) - lower(w.slot))), 0)::bigint AS seconds
      FROM areas a
      LEFT JOIN LATERAL (
          SELECT tstzrange((d + (span ->> 0)::time) AT TIME ZONE a.tz,
                           (d + (span ->> 1)::time) AT TIME ZONE a.tz, '[)') AS slot
            FROM generate_series(0, $2 - $1) AS i,
                 LATERAL (SELECT $1 + i AS d) AS day,
                 LATERAL (SELECT a.working_hours -> (ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'])
                                                        [extract(isodow FROM d)::int] AS span) AS s
           WHERE jsonb_typeof(span) = 'array'
             AND NOT EXISTS (SELECT FROM holiday h WHERE h.calendar = a.holiday_calendar AND h.day = d)) AS w ON true
     GROUP BY a.code, a.tz, a.lo, a.hi),
per_room AS (
    SELECT rr.room,
           sum(extract(epoch FROM least(rr.ends_at, a.hi) - greatest(rr.starts_at, a.lo)))
               FILTER (WHERE r.status IN ('CONFIRMED', 'RELEASED') AND r.starts_at < a.hi AND r.ends_at > a.lo)
               AS booked_seconds,
           range_agg(tstzrange(rr.starts_at, rr.ends_at, '[)'))
               FILTER (WHERE r.status IN ('CONFIRMED', 'RELEASED')) AS held,
           count(*) FILTER (WHERE r.status IN ('CONFIRMED', 'RELEASED') AND r.starts_at >= a.lo AND r.starts_at < a.hi)
               AS bookings,
           count(*) FILTER (WHERE r.status = 'CANCELLED' AND r.starts_at >= a.lo AND r.starts_at < a.hi) AS cancellations,
           count(*) FILTER (WHERE r.status = 'RELEASED' AND r.starts_at >= a.lo AND r.starts_at < a.hi) AS releases,
           sum(extract(epoch FROM least(r.released_until, a.hi) - greatest(r.ends_at, a.lo)))
               FILTER (WHERE r.status = 'RELEASED' AND r.released_until > a.lo AND r.ends_at < a.hi)
               AS released_seconds,
           array_agg(r.id)
               FILTER (WHERE r.status = 'RELEASED' AND r.released_until > a.lo AND r.ends_at < a.hi)
               AS released_ids
",
            $bookings,
            "
     GROUP BY rr.room)
SELECT w.area, w.tz AS time_zone, w.seconds AS working_seconds,
       room.code, room.name,
       coalesce(p.booked_seconds, 0)::bigint AS booked_seconds,
       (SELECT coalesce(sum(extract(epoch FROM upper(x) - lower(x))), 0)::bigint
          FROM unnest(coalesce(p.held, '{}') * w.hours) AS x) AS working_booked_seconds,
       coalesce(p.bookings, 0) AS bookings,
       coalesce(p.cancellations, 0) AS cancellations,
       coalesce(p.releases, 0) AS releases,
       coalesce(p.released_seconds, 0)::bigint AS released_seconds,
       (SELECT coalesce(sum(extract(epoch FROM least(o.ends_at, x.released_until, w.hi)
                                               - greatest(o.starts_at, x.ends_at, w.lo))), 0)::bigint
          FROM reservation x
          JOIN reservation_room o ON o.room = room.code AND o.active
           AND tstzrange(o.starts_at, o.ends_at, '[)') && tstzrange(x.ends_at, x.released_until, '[)')
           AND o.starts_at < w.hi AND o.ends_at > w.lo
          JOIN reservation ob ON ob.id = o.reservation_id
           AND ob.created_at >= x.released_at AND ob.status IN ('CONFIRMED', 'RELEASED')
         WHERE x.id = ANY(p.released_ids)) AS reused_seconds
  FROM working w
  LEFT JOIN room ON room.area = w.area AND room.active
  LEFT JOIN per_room p ON p.room = room.code
 ORDER BY w.area, room.position, room.code"
        )
    };
}

/// The whole site: the period's bookings through `reservation_time_idx`.
const UTILISATION: &str = utilisation_sql!(
    "
      FROM reservation r
      JOIN reservation_room rr ON rr.reservation_id = r.id
      JOIN room m ON m.code = rr.room
      JOIN areas a ON a.code = m.area
     WHERE tstzrange(r.starts_at, r.ends_at, '[)')
           && tstzrange(($1 - 1)::timestamp AT TIME ZONE 'UTC', ($2 + 2)::timestamp AT TIME ZONE 'UTC', '[)')"
);

/// One area (`$4`): its rooms' rows through `reservation_room_room_end_idx`
/// (room, end), the rows of any status that end after the widened period's
/// start, then those that start before its end: the area's bookings, never
/// the site's year (4.2 s for one area of a 3,000,000-booking campus
/// through the time index, SPEC §27). Its own text, so that the generic
/// plan of the prepared statement takes that index.
const UTILISATION_OF_AREA: &str = utilisation_sql!(
    "
      FROM areas a
      JOIN room m ON m.area = a.code
      JOIN reservation_room rr ON rr.room = m.code
       AND rr.ends_at > ($1 - 1)::timestamp AT TIME ZONE 'UTC'
       AND rr.starts_at < ($2 + 2)::timestamp AT TIME ZONE 'UTC'
      JOIN reservation r ON r.id = rr.reservation_id"
);

/// Every booking (any status) that starts in the period, by start; local
/// times as text, rooms as `A+B` in position order. With an area (`$4`),
/// the bookings that hold one of its rooms (all their rooms listed), the
/// period and the times in its zone; else in `$3` (`YEYAK_TIMEZONE`). An
/// unknown area gives no row. A booking that starts in the period overlaps
/// it, so the overlap test lets `reservation_time_idx` find the candidates
/// (no index on the start alone is needed).
const BOOKINGS: &str = "
WITH zone AS (
    SELECT coalesce(a.time_zone, $3) AS tz
      FROM (SELECT $4::text AS code) AS asked
      LEFT JOIN area a ON a.code = asked.code
     WHERE asked.code IS NULL OR a.code IS NOT NULL),
span AS (
    SELECT tz, $1::timestamp AT TIME ZONE tz AS lo, ($2 + 1)::timestamp AT TIME ZONE tz AS hi FROM zone),
picked AS (
    SELECT r.*, span.tz FROM span JOIN reservation r
        ON tstzrange(r.starts_at, r.ends_at, '[)') && tstzrange(span.lo, span.hi, '[)')
       AND r.starts_at >= span.lo AND r.starts_at < span.hi),
rooms AS (
    SELECT rr.reservation_id AS id, string_agg(rr.room, '+' ORDER BY rm.area, rm.position, rr.room) AS rooms,
           bool_or(rm.area = $4) AS in_area
      FROM picked
      JOIN reservation_room rr ON rr.reservation_id = picked.id
      JOIN room rm ON rm.code = rr.room
     GROUP BY rr.reservation_id)
SELECT p.id,
       to_char(p.starts_at AT TIME ZONE p.tz, 'YYYY-MM-DD HH24:MI:SS') AS starts_at,
       to_char(p.ends_at AT TIME ZONE p.tz, 'YYYY-MM-DD HH24:MI:SS') AS ends_at,
       rooms.rooms, p.title, p.organizer_name AS organizer, p.status, p.series_id,
       to_char(p.created_at AT TIME ZONE p.tz, 'YYYY-MM-DD HH24:MI:SS') AS created_at,
       to_char(p.checked_in_at AT TIME ZONE p.tz, 'YYYY-MM-DD HH24:MI:SS') AS checked_in_at,
       to_char(p.released_at AT TIME ZONE p.tz, 'YYYY-MM-DD HH24:MI:SS') AS released_at,
       to_char(p.cancelled_at AT TIME ZONE p.tz, 'YYYY-MM-DD HH24:MI:SS') AS cancelled_at
  FROM picked p JOIN rooms USING (id)
 WHERE $4::text IS NULL OR rooms.in_area
 ORDER BY p.starts_at, p.id";

/// One row of [`UTILISATION`]: an area, and one of its active rooms unless
/// it has none.
#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    area: String,
    #[diesel(sql_type = Text)]
    time_zone: String,
    #[diesel(sql_type = BigInt)]
    working_seconds: i64,
    #[diesel(sql_type = Nullable<Text>)]
    code: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    name: Option<String>,
    #[diesel(sql_type = BigInt)]
    booked_seconds: i64,
    #[diesel(sql_type = BigInt)]
    working_booked_seconds: i64,
    #[diesel(sql_type = BigInt)]
    bookings: i64,
    #[diesel(sql_type = BigInt)]
    cancellations: i64,
    #[diesel(sql_type = BigInt)]
    releases: i64,
    #[diesel(sql_type = BigInt)]
    released_seconds: i64,
    #[diesel(sql_type = BigInt)]
    reused_seconds: i64,
}

/// The utilisation of every area's active rooms, or of one area's
/// (`area`); `home` is the zone of an area without one. `None`: no area
/// has the code asked for.
pub async fn utilisation(
    conn: &mut Conn,
    period: Period,
    home: Tz,
    area: Option<&str>,
) -> QueryResult<Option<Utilisation>> {
    let sql = if area.is_some() { UTILISATION_OF_AREA } else { UTILISATION };
    let rows: Vec<Row> = diesel::sql_query(sql)
        .bind::<Date, _>(period.from())
        .bind::<Date, _>(period.to())
        .bind::<Text, _>(home.name())
        .bind::<Nullable<Text>, _>(area)
        .cached()
        .load(conn)
        .await?;
    if area.is_some() && rows.is_empty() {
        return Ok(None);
    }
    Ok(Some(assemble(period, area, rows)))
}

/// Rows (area order, then position) into areas and rooms.
fn assemble(period: Period, area: Option<&str>, rows: Vec<Row>) -> Utilisation {
    let mut report = Utilisation { period, area: area.map(str::to_owned), areas: Vec::new(), rooms: Vec::new() };
    for row in rows {
        if report.areas.last().is_none_or(|a| a.code != row.area) {
            report.areas.push(AreaHours {
                code: row.area.clone(),
                time_zone: row.time_zone,
                working_seconds: row.working_seconds,
            });
        }
        let Some(code) = row.code else { continue };
        report.rooms.push(RoomUse {
            code,
            name: row.name.unwrap_or_default(),
            area: row.area,
            booked_seconds: row.booked_seconds,
            working_booked_seconds: row.working_booked_seconds,
            working_seconds: row.working_seconds,
            bookings: row.bookings,
            cancellations: row.cancellations,
            releases: row.releases,
            released_seconds: row.released_seconds,
            reused_seconds: row.reused_seconds,
        });
    }
    report
}

/// The bookings starting in the period, of every room or of one area's
/// rooms (`area`: period and times in its zone). `None`: no area has the
/// code asked for — looked up only when the list is empty, so a report
/// stays one statement.
pub async fn bookings(
    conn: &mut Conn,
    period: Period,
    home: Tz,
    area: Option<&str>,
) -> QueryResult<Option<Vec<BookingLine>>> {
    let lines: Vec<BookingLine> = diesel::sql_query(BOOKINGS)
        .bind::<Date, _>(period.from())
        .bind::<Date, _>(period.to())
        .bind::<Text, _>(home.name())
        .bind::<Nullable<Text>, _>(area)
        .cached()
        .load(conn)
        .await?;
    match area {
        Some(code) if lines.is_empty() && !area_exists(conn, code).await? => Ok(None),
        _ => Ok(Some(lines)),
    }
}

#[derive(QueryableByName)]
struct Found {
    #[diesel(sql_type = Bool)]
    found: bool,
}

async fn area_exists(conn: &mut Conn, code: &str) -> QueryResult<bool> {
    let row: Found = diesel::sql_query("SELECT EXISTS (SELECT FROM area WHERE code = $1) AS found")
        .bind::<Text, _>(code)
        .get_result(conn)
        .await?;
    Ok(row.found)
}
