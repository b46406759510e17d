//! A booking as every door reads it (the view type of the API, pages,
//! feeds and mail) and the reads of bookings: by id, by window, by room, by
//! organizer, pending ones, and a room's free intervals.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Int4, Int8, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use serde::{Deserialize, Serialize};

use super::domain::{Status, TimeRange};
use crate::db::cached::CacheExt;
use crate::db::Conn;

/// A booking as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, QueryableByName, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Booking {
    #[diesel(sql_type = Int8)]
    pub id: i64,
    #[diesel(sql_type = Text)]
    pub title: String,
    /// Display name of who booked (never decides who may change it).
    #[diesel(sql_type = Text, column_name = organizer_name)]
    pub organizer: String,
    /// Room codes in position order.
    #[diesel(sql_type = Array<Text>)]
    pub rooms: Vec<String>,
    #[diesel(sql_type = Timestamptz)]
    pub starts_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    pub ends_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub cancelled_at: Option<DateTime<Utc>>,
    /// Starts at 1; every change adds 1.
    #[diesel(sql_type = Int4)]
    pub version: i32,
    #[diesel(sql_type = Text)]
    pub status: Status,
    /// The series this booking is an occurrence of (null when single).
    #[diesel(sql_type = Nullable<Int8>)]
    pub series_id: Option<i64>,
    #[diesel(sql_type = Bool)]
    pub check_in_required: bool,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub checked_in_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub released_at: Option<DateTime<Utc>>,
    /// Title, organizer and attendees for the organizer, their delegates
    /// and admins only (SPEC §26; `super::privacy`).
    #[diesel(sql_type = Bool)]
    pub private: bool,
    /// The username of the delegate who made it for its organizer (SPEC
    /// §25); null when the organizer did.
    #[diesel(sql_type = Nullable<Text>)]
    pub booked_by: Option<String>,
    /// That delegate, who gets its mail too.
    #[serde(skip)]
    #[diesel(sql_type = Nullable<Int8>)]
    pub booked_by_staff_id: Option<i64>,
    /// Decides who may change the booking; never serialised.
    #[serde(skip)]
    #[diesel(sql_type = Text)]
    pub organizer_digest: String,
    #[serde(skip)]
    #[diesel(sql_type = Nullable<Int8>)]
    pub organizer_staff_id: Option<i64>,
    /// Changed or cancelled on its own: series edits leave it alone.
    #[serde(skip)]
    #[diesel(sql_type = Bool)]
    pub is_exception: bool,
    /// Where the series put it (its RECURRENCE-ID); null when single.
    #[serde(skip)]
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub occurrence_start: Option<DateTime<Utc>>,
    /// The last change (an event's DTSTAMP).
    #[serde(skip)]
    #[diesel(sql_type = Timestamptz)]
    pub updated_at: DateTime<Utc>,
    /// The tenant of the API key it was made through (null for people and
    /// door displays): pages show it beside the organizer name.
    #[serde(skip)]
    #[diesel(sql_type = Nullable<Text>)]
    pub organizer_tenant: Option<String>,
    /// Each room's setup and cleanup minutes as kept with the booking
    /// (SPEC §24), in the order of `rooms`.
    #[serde(skip)]
    #[diesel(sql_type = Array<Int4>)]
    pub buffers_before: Vec<i32>,
    #[serde(skip)]
    #[diesel(sql_type = Array<Int4>)]
    pub buffers_after: Vec<i32>,
    /// The zone of its rooms' area (SPEC §24; rooms booked together are of
    /// one suite, in one area), in which its times are shown: pages, mail,
    /// calendars. `min` rather than an ordered aggregate: no sort.
    #[serde(skip)]
    #[diesel(sql_type = Nullable<Text>)]
    pub time_zone: Option<String>,
}

impl Booking {
    /// A confirmed single booking for unit tests of what reads bookings.
    #[cfg(test)]
    pub fn example(id: i64, title: &str, rooms: &[&str], starts_at: DateTime<Utc>, ends_at: DateTime<Utc>) -> Booking {
        Booking {
            id,
            title: title.into(),
            organizer: "o".into(),
            rooms: rooms.iter().map(|r| r.to_string()).collect(),
            starts_at,
            ends_at,
            cancelled_at: None,
            version: 1,
            status: Status::Confirmed,
            series_id: None,
            check_in_required: false,
            checked_in_at: None,
            released_at: None,
            private: false,
            booked_by: None,
            booked_by_staff_id: None,
            organizer_digest: String::new(),
            organizer_staff_id: None,
            is_exception: false,
            occurrence_start: None,
            updated_at: DateTime::UNIX_EPOCH,
            organizer_tenant: None,
            buffers_before: vec![0; rooms.len()],
            buffers_after: vec![0; rooms.len()],
            time_zone: None,
        }
    }

    /// The zone its times are shown and read in: its area's, else `home`.
    pub fn zone(&self, home: chrono_tz::Tz) -> chrono_tz::Tz {
        self.time_zone.as_deref().and_then(|z| z.parse().ok()).unwrap_or(home)
    }

    /// Who booked, as pages and calendars show it ([`super::domain::shown_organizer`]).
    pub fn shown_organizer(&self) -> Cow<'_, str> {
        super::domain::shown_organizer(&self.organizer, self.organizer_tenant.as_deref())
    }

    /// Whether it holds its rooms' time (and may be changed).
    pub fn is_live(&self) -> bool {
        self.status.is_live()
    }

    pub fn time(&self) -> TimeRange {
        TimeRange::from_stored(self.starts_at, self.ends_at)
    }
}

/// A booking's row with its rooms (in the catalogue's order), each room's
/// buffers and its area's zone, aggregated once per booking in a lateral
/// subquery: the rows arrive sorted, so the aggregates need no sort of
/// their own (three ordered aggregates over a join grouped by booking made
/// the week page 1.35x slower, docs/PERFORMANCE.md). Callers add `WHERE`
/// and `ORDER BY` on `r`; nothing is grouped.
pub const BOOKING_COLUMNS: &str = "
SELECT r.id, r.title, r.organizer_name, r.organizer_digest, r.organizer_staff_id, r.starts_at, r.ends_at,
       r.cancelled_at, r.version, r.status, r.series_id, r.check_in_required, r.checked_in_at, r.released_at,
       r.is_exception, r.occurrence_start, r.updated_at, r.organizer_tenant, r.booked_by AS booked_by_staff_id, r.private,
       CASE WHEN r.booked_by IS NOT NULL THEN (SELECT s.username FROM staff_user s WHERE s.id = r.booked_by) END
           AS booked_by,
       x.rooms, x.buffers_before, x.buffers_after, x.time_zone
  FROM reservation r
 CROSS JOIN LATERAL (
       SELECT COALESCE(array_agg(o.room), '{}') AS rooms,
              COALESCE(array_agg(o.buffer_before_minutes), '{}') AS buffers_before,
              COALESCE(array_agg(o.buffer_after_minutes), '{}') AS buffers_after,
              min(o.time_zone) AS time_zone
         FROM (SELECT rr.room, rr.buffer_before_minutes, rr.buffer_after_minutes, am.time_zone
                 FROM reservation_room rr
                 JOIN room rm ON rm.code = rr.room
                 JOIN area am ON am.code = rm.area
                WHERE rr.reservation_id = r.id
                ORDER BY rm.position, rm.code) o) x";

pub async fn find(conn: &mut Conn, id: i64) -> QueryResult<Option<Booking>> {
    diesel::sql_query(format!("{BOOKING_COLUMNS} WHERE r.id = $1"))
        .bind::<Int8, _>(id)
        .cached()
        .get_result(conn)
        .await
        .optional()
}

/// Where a page of [`list`] ended: its last booking's start and id, the
/// list's order. A client holds it as opaque text (`?cursor=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageMark {
    pub starts_at: DateTime<Utc>,
    pub id: i64,
}

impl PageMark {
    pub fn after(booking: &Booking) -> PageMark {
        PageMark { starts_at: booking.starts_at, id: booking.id }
    }

    /// 32 hex digits: the start in microseconds, then the id.
    pub fn encode(&self) -> String {
        format!("{:016x}{:016x}", self.starts_at.timestamp_micros() as u64, self.id as u64)
    }

    pub fn decode(raw: &str) -> Option<PageMark> {
        if raw.len() != 32 || !raw.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let micros = u64::from_str_radix(&raw[..16], 16).ok()? as i64;
        let id = u64::from_str_radix(&raw[16..], 16).ok()? as i64;
        Some(PageMark { starts_at: DateTime::from_timestamp_micros(micros)?, id })
    }
}

/// Bookings overlapping `[from, to)`, by start time then id, at most
/// `limit` of them after `after`; live ones (confirmed, pending, released)
/// unless `include_cancelled`.
pub async fn list(
    conn: &mut Conn,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    include_cancelled: bool,
    after: Option<PageMark>,
    limit: i64,
) -> QueryResult<Vec<Booking>> {
    diesel::sql_query(format!(
        "{BOOKING_COLUMNS}
          WHERE tstzrange(r.starts_at, r.ends_at, '[)') && tstzrange($1, $2, '[)')
            AND ($3 OR r.status IN {occupied})
            AND ($4::timestamptz IS NULL OR (r.starts_at, r.id) > ($4, $5))
          ORDER BY r.starts_at, r.id
          LIMIT $6",
        occupied = crate::occupied_statuses!()
    ))
    .bind::<Timestamptz, _>(from)
    .bind::<Timestamptz, _>(to)
    .bind::<Bool, _>(include_cancelled)
    .bind::<Nullable<Timestamptz>, _>(after.map(|m| m.starts_at))
    .bind::<Nullable<Int8>, _>(after.map(|m| m.id))
    .bind::<Int8, _>(limit)
    .cached()
    .load(conn)
    .await
}

/// Bookings that hold time overlapping `[from, to)` in any of `rooms` (one
/// area's day or week page), by start time. Found room by room through
/// the room rows' exclusion index (`room =`, range `&&`, active rows:
/// occupied bookings hold active rows), so a page reads its own rooms'
/// bookings, never the site's week (SPEC §27).
pub async fn list_in_rooms(
    conn: &mut Conn,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    rooms: &[String],
) -> QueryResult<Vec<Booking>> {
    diesel::sql_query(format!(
        "{BOOKING_COLUMNS}
          WHERE r.id IN (SELECT x.reservation_id
                           FROM unnest($3::text[]) AS asked(room)
                           JOIN reservation_room x ON x.room = asked.room AND x.active
                            AND tstzrange(x.starts_at, x.ends_at, '[)') && tstzrange($1, $2, '[)'))
            AND r.status IN {occupied}
          ORDER BY r.starts_at, r.id",
        occupied = crate::occupied_statuses!()
    ))
    .bind::<Timestamptz, _>(from)
    .bind::<Timestamptz, _>(to)
    .bind::<Array<Text>, _>(rooms)
    .cached()
    .load(conn)
    .await
}

/// A person's bookings ending after `from` (live and pending), by start.
pub async fn list_of_organizer(
    conn: &mut Conn,
    organizer_digest: &str,
    from: DateTime<Utc>,
    limit: i64,
) -> QueryResult<Vec<Booking>> {
    diesel::sql_query(format!(
        "{BOOKING_COLUMNS}
          WHERE r.organizer_digest = $1 AND r.ends_at > $2 AND r.status IN {live}
          ORDER BY r.starts_at, r.id
          LIMIT $3",
        live = crate::live_statuses!()
    ))
    .bind::<Text, _>(organizer_digest)
    .bind::<Timestamptz, _>(from)
    .bind::<Int8, _>(limit)
    .cached()
    .load(conn)
    .await
}

pub async fn find_many(conn: &mut Conn, ids: &[i64]) -> QueryResult<Vec<Booking>> {
    diesel::sql_query(format!("{BOOKING_COLUMNS} WHERE r.id = ANY($1) ORDER BY r.starts_at, r.id"))
        .bind::<Array<Int8>, _>(ids)
        .cached()
        .load(conn)
        .await
}

/// Pending bookings, oldest request first (the approvals page).
pub async fn pending(conn: &mut Conn, limit: i64) -> QueryResult<Vec<Booking>> {
    diesel::sql_query(format!("{BOOKING_COLUMNS} WHERE r.status = 'PENDING' ORDER BY r.created_at, r.id LIMIT $1"))
        .bind::<Int8, _>(limit)
        .cached()
        .load(conn)
        .await
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, QueryableByName, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FreeInterval {
    #[diesel(sql_type = Timestamptz)]
    pub starts_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    pub ends_at: DateTime<Utc>,
}

/// Free intervals of a room within `[from, to)`, computed by PostgreSQL as the
/// window minus the multirange of active bookings (seed 002 §트레이드오프).
pub async fn free_intervals(
    conn: &mut Conn,
    room_code: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> QueryResult<Vec<FreeInterval>> {
    diesel::sql_query(
        "SELECT lower(f) AS starts_at, upper(f) AS ends_at
           FROM unnest(
                  tstzmultirange(tstzrange($2, $3, '[)'))
                  - COALESCE((SELECT range_agg(reservation_room_occupied(
                                       rr.starts_at, rr.ends_at,
                                       rr.buffer_before_minutes + r.buffer_after_minutes,
                                       rr.buffer_after_minutes + r.buffer_before_minutes))
                                FROM reservation_room rr JOIN room r ON r.code = rr.room
                               WHERE rr.room = $1 AND rr.active
                                 AND reservation_room_occupied(rr.starts_at, rr.ends_at,
                                       rr.buffer_before_minutes + r.buffer_after_minutes,
                                       rr.buffer_after_minutes + r.buffer_before_minutes)
                                  && tstzrange($2, $3, '[)')),
                             '{}'::tstzmultirange)
                ) AS f
          ORDER BY 1",
    )
    .bind::<Text, _>(room_code)
    .bind::<Timestamptz, _>(from)
    .bind::<Timestamptz, _>(to)
    .cached()
    .load(conn)
    .await
}

/// Busy intervals of a room within `[from, to)`, merged: its meetings
/// (CalDAV free/busy's `BUSY`, SPEC §17).
pub async fn busy_intervals(
    conn: &mut Conn,
    room_code: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> QueryResult<Vec<FreeInterval>> {
    diesel::sql_query(
        "SELECT lower(b) AS starts_at, upper(b) AS ends_at
           FROM unnest((SELECT range_agg(tstzrange(starts_at, ends_at, '[)') * tstzrange($2, $3, '[)'))
                          FROM reservation_room
                         WHERE room = $1 AND active
                           AND tstzrange(starts_at, ends_at, '[)') && tstzrange($2, $3, '[)'))) AS b
          ORDER BY 1",
    )
    .bind::<Text, _>(room_code)
    .bind::<Timestamptz, _>(from)
    .bind::<Timestamptz, _>(to)
    .cached()
    .load(conn)
    .await
}

/// The buffers around a room's meetings within `[from, to)`, merged: what
/// its bookings occupy beyond their own time (free/busy's
/// `BUSY-UNAVAILABLE`, SPEC §24).
pub async fn buffer_intervals(
    conn: &mut Conn,
    room_code: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> QueryResult<Vec<FreeInterval>> {
    diesel::sql_query(
        "SELECT lower(b) AS starts_at, upper(b) AS ends_at
           FROM unnest(
                  COALESCE((SELECT range_agg(reservation_room_occupied(starts_at, ends_at, buffer_before_minutes,
                                                                       buffer_after_minutes) * tstzrange($2, $3, '[)'))
                              FROM reservation_room
                             WHERE room = $1 AND active
                               AND reservation_room_occupied(starts_at, ends_at, buffer_before_minutes,
                                                             buffer_after_minutes) && tstzrange($2, $3, '[)')),
                           '{}'::tstzmultirange)
                  - COALESCE((SELECT range_agg(tstzrange(starts_at, ends_at, '[)'))
                                FROM reservation_room
                               WHERE room = $1 AND active
                                 AND tstzrange(starts_at, ends_at, '[)') && tstzrange($2, $3, '[)')),
                             '{}'::tstzmultirange)) AS b
          ORDER BY 1",
    )
    .bind::<Text, _>(room_code)
    .bind::<Timestamptz, _>(from)
    .bind::<Timestamptz, _>(to)
    .cached()
    .load(conn)
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_booking_made_through_a_key_shows_its_tenant() {
        let t = DateTime::UNIX_EPOCH;
        let mut b = Booking::example(1, "회의", &["A"], t, t + chrono::Duration::hours(1));
        b.organizer = "김민지".into();
        assert_eq!(b.shown_organizer(), "김민지");
        b.organizer_tenant = Some("crm".into());
        assert_eq!(b.shown_organizer(), "김민지 · crm");
    }
}
