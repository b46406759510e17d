//! The booking engine's SQL (seed 002, SPEC §2, §11, §12). Every write touches
//! `reservation_room` in room order, one statement per row, in the caller's
//! transaction, and keeps the copies equal to the parent. Overlaps are decided
//! by the EXCLUDE constraint alone: `INSERT … ON CONFLICT DO NOTHING` answers an
//! overlap with zero rows instead of an error (and, unlike a plain INSERT or
//! UPDATE, cannot deadlock against another speculative insert, seed 002 §교착).
//! Every change is recorded in the booking's history and announced through
//! the outbox by the same transaction (`events::changed`).
//!
//! Lock order of every writer: the organizer's quota lock, then the rooms
//! (share), then the reservation row, then its room copies. A retirement
//! takes the room row, then reservations; nothing waits the other way round.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Int4, Int8, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use serde::{Deserialize, Serialize};

use super::domain::{Policy, RequestedRooms, Status, TimeRange, Title};
use super::{events, rules};
use crate::command::Acting;
use crate::db::cached::CacheExt;
use crate::db::schema::{reservation, reservation_room};
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};
use crate::history::Action;
use crate::idempotency::CommandError;

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
            organizer_digest: String::new(),
            organizer_staff_id: None,
            is_exception: false,
            occurrence_start: None,
            updated_at: DateTime::UNIX_EPOCH,
        }
    }

    /// Whether it holds its rooms' time (and may be changed).
    pub fn is_live(&self) -> bool {
        matches!(self.status, Status::Confirmed | Status::Pending)
    }

    pub fn time(&self) -> TimeRange {
        TimeRange::from_stored(self.starts_at, self.ends_at)
    }
}

/// Who asks, and under which rules, at which instant.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    pub actor: &'a Acting,
    pub policy: Policy,
    pub now: DateTime<Utc>,
}

impl Acting {
    pub fn may_change(&self, organizer_digest: &str) -> bool {
        self.is_admin || self.digest.as_str() == organizer_digest
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewBooking {
    pub title: Title,
    pub rooms: RequestedRooms,
    #[serde(flatten)]
    pub range: TimeRange,
    pub organizer_name: Title,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MoveBooking {
    #[serde(flatten)]
    pub range: TimeRange,
    pub title: Option<Title>,
    pub expected_version: Option<i32>,
}

pub const BOOKING_COLUMNS: &str = "
SELECT r.id, r.title, r.organizer_name, r.organizer_digest, r.organizer_staff_id, r.starts_at, r.ends_at,
       r.cancelled_at, r.version, r.status, r.series_id, r.check_in_required, r.checked_in_at, r.released_at,
       r.is_exception, r.occurrence_start, r.updated_at,
       COALESCE(array_agg(rr.room ORDER BY rm.position, rm.code) FILTER (WHERE rr.room IS NOT NULL), '{}') AS rooms
  FROM reservation r
  LEFT JOIN reservation_room rr ON rr.reservation_id = r.id
  LEFT JOIN room rm ON rm.code = rr.room";

pub async fn find(conn: &mut Conn, id: i64) -> QueryResult<Option<Booking>> {
    diesel::sql_query(format!("{BOOKING_COLUMNS} WHERE r.id = $1 GROUP BY r.id"))
        .bind::<Int8, _>(id)
        .cached()
        .get_result(conn)
        .await
        .optional()
}

/// Bookings overlapping `[from, to)`, by start time; live ones (confirmed,
/// pending, released) unless `include_cancelled`.
pub async fn list(
    conn: &mut Conn,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    include_cancelled: bool,
) -> QueryResult<Vec<Booking>> {
    diesel::sql_query(format!(
        "{BOOKING_COLUMNS}
          WHERE tstzrange(r.starts_at, r.ends_at, '[)') && tstzrange($1, $2, '[)')
            AND ($3 OR r.status IN ('CONFIRMED', 'PENDING', 'RELEASED'))
          GROUP BY r.id
          ORDER BY r.starts_at, r.id"
    ))
    .bind::<Timestamptz, _>(from)
    .bind::<Timestamptz, _>(to)
    .bind::<Bool, _>(include_cancelled)
    .cached()
    .load(conn)
    .await
}

/// Bookings that hold time overlapping `[from, to)` in any of `rooms` (one
/// area's day or week page), by start time.
pub async fn list_in_rooms(
    conn: &mut Conn,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    rooms: &[String],
) -> QueryResult<Vec<Booking>> {
    diesel::sql_query(format!(
        "{BOOKING_COLUMNS}
          WHERE tstzrange(r.starts_at, r.ends_at, '[)') && tstzrange($1, $2, '[)')
            AND r.status IN ('CONFIRMED', 'PENDING', 'RELEASED')
            AND EXISTS (SELECT 1 FROM reservation_room x WHERE x.reservation_id = r.id AND x.room = ANY($3))
          GROUP BY r.id
          ORDER BY r.starts_at, r.id"
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
          WHERE r.organizer_digest = $1 AND r.ends_at > $2 AND r.status IN ('CONFIRMED', 'PENDING')
          GROUP BY r.id
          ORDER BY r.starts_at, r.id
          LIMIT $3"
    ))
    .bind::<Text, _>(organizer_digest)
    .bind::<Timestamptz, _>(from)
    .bind::<Int8, _>(limit)
    .cached()
    .load(conn)
    .await
}

/// Writes one room copy; `false` when the room is taken at that time.
async fn claim_room(conn: &mut Conn, id: i64, room_code: &str, range: &TimeRange) -> QueryResult<bool> {
    let inserted = diesel::insert_into(reservation_room::table)
        .values((
            reservation_room::reservation_id.eq(id),
            reservation_room::room.eq(room_code),
            reservation_room::starts_at.eq(range.starts_at()),
            reservation_room::ends_at.eq(range.ends_at()),
            reservation_room::active.eq(true),
        ))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(inserted == 1)
}

/// What a new reservation row holds.
pub struct Row<'a> {
    pub title: &'a str,
    pub organizer_name: &'a str,
    pub range: TimeRange,
    pub status: Status,
    pub check_in_required: bool,
    /// The series and where it put this occurrence.
    pub series: Option<(i64, DateTime<Utc>)>,
}

/// Inserts a reservation and its room copies (rooms in position order); a
/// taken room is `RoomTimeTaken` (the caller's savepoint rolls back). Returns
/// the new id.
pub async fn insert(conn: &mut Conn, row: &Row<'_>, rooms: &[String], ctx: &Ctx<'_>) -> Result<i64, CommandError> {
    let id: i64 = diesel::insert_into(reservation::table)
        .values((
            reservation::title.eq(row.title),
            reservation::organizer_name.eq(row.organizer_name),
            reservation::organizer_digest.eq(ctx.actor.digest.as_str()),
            reservation::organizer_staff_id.eq(ctx.actor.staff_id),
            reservation::starts_at.eq(row.range.starts_at()),
            reservation::ends_at.eq(row.range.ends_at()),
            reservation::status.eq(row.status.as_str()),
            reservation::check_in_required.eq(row.check_in_required),
            reservation::series_id.eq(row.series.map(|s| s.0)),
            reservation::occurrence_start.eq(row.series.map(|s| s.1)),
            reservation::created_at.eq(ctx.now),
            reservation::updated_at.eq(ctx.now),
        ))
        .returning(reservation::id)
        .get_result(conn)
        .await?;
    for code in rooms {
        if !claim_room(conn, id, code, &row.range).await? {
            return Err(ApiError::room_time_taken().into());
        }
    }
    Ok(id)
}

/// Creates a booking on all its rooms or none.
pub async fn create(conn: &mut Conn, new: &NewBooking, ctx: &Ctx<'_>) -> Result<Booking, CommandError> {
    // Inside the command, so that a retry after the start time replays the
    // first answer instead of being judged afresh.
    new.range.ensure_not_past(ctx.now)?;
    let quota = rules::Quota::lock(conn, ctx).await?;
    let rooms = rules::resolve(conn, new.rooms.codes(), &new.range, ctx).await?;
    quota.ensure_room_for(conn, ctx, 1, None).await?;
    let row = Row {
        title: new.title.as_str(),
        organizer_name: new.organizer_name.as_str(),
        range: new.range,
        status: rules::initial_status(&rooms, ctx),
        check_in_required: rooms.check_in_required(),
        series: None,
    };
    let id = insert(conn, &row, &rooms.codes(), ctx).await?;
    let booking = find(conn, id).await?.ok_or_else(ApiError::internal)?;
    events::created(conn, &[&booking], ctx).await?;
    Ok(booking)
}

/// Locks the parent row and checks who may change it, its state and version.
pub async fn lock_for_change(
    conn: &mut Conn,
    id: i64,
    actor: &Acting,
    expected_version: Option<i32>,
) -> Result<Booking, CommandError> {
    let locked: Option<i64> =
        reservation::table.find(id).select(reservation::id).for_update().first(conn).await.optional()?;
    if locked.is_none() {
        return Err(ApiError::not_found("booking").into());
    }
    let booking = find(conn, id).await?.ok_or_else(|| ApiError::not_found("booking"))?;
    if !actor.may_change(&booking.organizer_digest) {
        return Err(ApiError::new(ErrorCode::NotOrganizer, "예약한 사람(또는 관리자)만 바꿀 수 있습니다.").into());
    }
    if !booking.is_live() {
        return Err(invalid_state(booking.status).into());
    }
    if let Some(expected) = expected_version {
        if expected != booking.version {
            return Err(ApiError::new(ErrorCode::VersionConflict, "예약이 그사이 바뀌었습니다. 다시 불러와 주세요.")
                .with_details(serde_json::json!({ "expectedVersion": expected, "currentVersion": booking.version }))
                .with_current_revision(i64::from(booking.version))
                .into());
        }
    }
    Ok(booking)
}

pub fn invalid_state(status: Status) -> ApiError {
    let text = match status {
        Status::Cancelled => "이미 취소된 예약입니다.",
        Status::Rejected => "거절된 예약입니다.",
        Status::Released => "자동 반납된 예약입니다.",
        Status::Pending => "승인을 기다리는 예약입니다.",
        Status::Confirmed => "확정된 예약입니다.",
    };
    ApiError::new(ErrorCode::InvalidState, text).with_details(serde_json::json!({ "state": status.as_str() }))
}

/// Moves a booking to new times (and optionally a new title). Each room copy
/// is replaced in room order; the deleted old copy no longer counts, so a move
/// never conflicts with its own old time.
pub async fn move_to(conn: &mut Conn, id: i64, change: &MoveBooking, ctx: &Ctx<'_>) -> Result<Booking, CommandError> {
    change.range.ensure_not_past(ctx.now)?;
    let quota = rules::Quota::lock(conn, ctx).await?;
    let current_rooms = find(conn, id).await?.ok_or_else(|| ApiError::not_found("booking"))?.rooms;
    let rooms = rules::resolve(conn, &current_rooms, &change.range, ctx).await?;
    let before = lock_for_change(conn, id, ctx.actor, change.expected_version).await?;
    quota.ensure_room_for(conn, ctx, 1, Some(id)).await?;
    let title = change.title.as_ref().map_or(before.title.as_str(), Title::as_str).to_owned();
    let retimed = change.range != before.time();
    // A new time in a room that needs approval needs approval again.
    let status = match rules::initial_status(&rooms, ctx) {
        Status::Pending if retimed => Status::Pending,
        _ => before.status,
    };
    diesel::update(reservation::table.find(id))
        .set((
            reservation::title.eq(&title),
            reservation::starts_at.eq(change.range.starts_at()),
            reservation::ends_at.eq(change.range.ends_at()),
            reservation::status.eq(status.as_str()),
            reservation::is_exception.eq(before.series_id.is_some() || before.is_exception),
            reservation::checked_in_at.eq(if retimed { None } else { before.checked_in_at }),
            reservation::version.eq(reservation::version + 1),
            reservation::updated_at.eq(ctx.now),
        ))
        .execute(conn)
        .await?;
    if retimed {
        for code in rooms.codes() {
            diesel::delete(reservation_room::table.find((id, &code))).execute(conn).await?;
            if !claim_room(conn, id, &code, &change.range).await? {
                return Err(ApiError::room_time_taken().into());
            }
        }
    }
    let after = find(conn, id).await?.ok_or_else(ApiError::internal)?;
    events::changed(conn, &before, &after, ctx).await?;
    Ok(after)
}

/// Cancels a booking; its time is free as soon as this commits.
pub async fn cancel(
    conn: &mut Conn,
    id: i64,
    expected_version: Option<i32>,
    ctx: &Ctx<'_>,
) -> Result<Booking, CommandError> {
    let before = lock_for_change(conn, id, ctx.actor, expected_version).await?;
    set_cancelled(conn, &[id], ctx.now, true).await?;
    let after = find(conn, id).await?.ok_or_else(ApiError::internal)?;
    events::changed(conn, &before, &after, ctx).await?;
    Ok(after)
}

/// CANCELLED with its copies inactive, for live bookings among `ids`;
/// `exception` marks series occurrences cancelled on their own.
async fn set_cancelled(conn: &mut Conn, ids: &[i64], now: DateTime<Utc>, exception: bool) -> QueryResult<Vec<i64>> {
    let cancelled: Vec<i64> = diesel::update(
        reservation::table
            .filter(reservation::id.eq_any(ids))
            .filter(reservation::status.eq_any([Status::Confirmed.as_str(), Status::Pending.as_str()])),
    )
    .set((
        reservation::status.eq(Status::Cancelled.as_str()),
        reservation::cancelled_at.eq(now),
        reservation::is_exception.eq(reservation::is_exception.or(exception.into_sql::<Bool>())),
        reservation::version.eq(reservation::version + 1),
        reservation::updated_at.eq(now),
    ))
    .returning(reservation::id)
    .get_results(conn)
    .await?;
    deactivate_copies(conn, &cancelled).await?;
    Ok(cancelled)
}

async fn deactivate_copies(conn: &mut Conn, ids: &[i64]) -> QueryResult<()> {
    if !ids.is_empty() {
        diesel::update(reservation_room::table.filter(reservation_room::reservation_id.eq_any(ids)))
            .set(reservation_room::active.eq(false))
            .execute(conn)
            .await?;
    }
    Ok(())
}

/// Cancels the given live bookings whole (every room of each) as one set:
/// a retired room's future bookings, a series from a date on. `exception`
/// is false when the series itself cancels them. Returns the cancelled ones.
pub async fn cancel_many(
    conn: &mut Conn,
    ids: &[i64],
    ctx: &Ctx<'_>,
    exception: bool,
) -> Result<Vec<Booking>, CommandError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    // Row locks in id order, the order of every multi-booking write.
    let _: Vec<i64> = reservation::table
        .filter(reservation::id.eq_any(&ids))
        .order(reservation::id)
        .select(reservation::id)
        .for_update()
        .load(conn)
        .await?;
    let before = find_many(conn, &ids).await?;
    let cancelled = set_cancelled(conn, &ids, ctx.now, exception).await?;
    let after = find_many(conn, &cancelled).await?;
    let pairs: Vec<(&Booking, &Booking)> =
        after.iter().filter_map(|a| before.iter().find(|b| b.id == a.id).map(|b| (b, a))).collect();
    events::changed_many(conn, &pairs, Action::Cancelled, ctx).await?;
    Ok(after)
}

pub async fn find_many(conn: &mut Conn, ids: &[i64]) -> QueryResult<Vec<Booking>> {
    diesel::sql_query(format!("{BOOKING_COLUMNS} WHERE r.id = ANY($1) GROUP BY r.id ORDER BY r.starts_at, r.id"))
        .bind::<Array<Int8>, _>(ids)
        .cached()
        .load(conn)
        .await
}

/// Approves (PENDING → CONFIRMED) or rejects (PENDING → REJECTED, its time
/// free at once) a booking; admins only, checked by the caller.
pub async fn decide(
    conn: &mut Conn,
    id: i64,
    approve: bool,
    reason: Option<&str>,
    ctx: &Ctx<'_>,
) -> Result<Booking, CommandError> {
    let before = lock_for_change(conn, id, ctx.actor, None).await?;
    if before.status != Status::Pending {
        return Err(invalid_state(before.status).into());
    }
    let status = if approve { Status::Confirmed } else { Status::Rejected };
    diesel::update(reservation::table.find(id))
        .set((
            reservation::status.eq(status.as_str()),
            reservation::decided_at.eq(ctx.now),
            reservation::decision_reason.eq(reason),
            reservation::version.eq(reservation::version + 1),
            reservation::updated_at.eq(ctx.now),
        ))
        .execute(conn)
        .await?;
    if !approve {
        deactivate_copies(conn, &[id]).await?;
    }
    let after = find(conn, id).await?.ok_or_else(ApiError::internal)?;
    events::decided(conn, &before, &after, reason, ctx).await?;
    Ok(after)
}

/// Pending bookings, oldest request first (the approvals page).
pub async fn pending(conn: &mut Conn, limit: i64) -> QueryResult<Vec<Booking>> {
    diesel::sql_query(format!(
        "{BOOKING_COLUMNS} WHERE r.status = 'PENDING' GROUP BY r.id ORDER BY r.created_at, r.id LIMIT $1"
    ))
    .bind::<Int8, _>(limit)
    .cached()
    .load(conn)
    .await
}

/// Checks a booking in: organizer or admin, a check-in room, inside the
/// window from `open` before its start until `grace` after it.
pub async fn check_in(conn: &mut Conn, id: i64, ctx: &Ctx<'_>) -> Result<Booking, CommandError> {
    let before = lock_for_change(conn, id, ctx.actor, None).await?;
    if !before.check_in_required {
        return Err(ApiError::new(ErrorCode::CheckInNotRequired, "이 예약은 체크인이 필요 없습니다.").into());
    }
    if before.status != Status::Confirmed {
        return Err(invalid_state(before.status).into());
    }
    if before.checked_in_at.is_some() {
        return Ok(before);
    }
    let (opens, closes) = ctx.policy.check_in_window(before.starts_at);
    if ctx.now < opens || ctx.now >= closes {
        return Err(ApiError::new(
            ErrorCode::CheckInClosed,
            format!(
                "체크인은 시작 {}분 전부터 시작 후 {}분까지 할 수 있습니다.",
                ctx.policy.check_in_open.num_minutes(),
                ctx.policy.check_in_grace.num_minutes()
            ),
        )
        .with_details(serde_json::json!({ "opensAt": opens, "closesAt": closes }))
        .into());
    }
    diesel::update(reservation::table.find(id))
        .set((
            reservation::checked_in_at.eq(ctx.now),
            reservation::version.eq(reservation::version + 1),
            reservation::updated_at.eq(ctx.now),
        ))
        .execute(conn)
        .await?;
    let after = find(conn, id).await?.ok_or_else(ApiError::internal)?;
    events::changed(conn, &before, &after, ctx).await?;
    Ok(after)
}

#[derive(QueryableByName)]
struct Released {
    #[diesel(sql_type = Int8)]
    id: i64,
    #[diesel(sql_type = Timestamptz)]
    old_ends_at: DateTime<Utc>,
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

/// Releases no-shows (SPEC §11): confirmed bookings of check-in rooms not
/// checked in when their grace ended are shortened to the release time
/// (rounded up to the minute, never before a minute after the start) on the
/// parent and every room copy, marked RELEASED, recorded and announced — at
/// most `limit` per call, in one set of statements. The status test in the
/// UPDATE makes a second run (or a second process) release nothing again.
pub async fn release_no_shows(
    conn: &mut Conn,
    policy: Policy,
    limit: i64,
    actor: &Acting,
    now: DateTime<Utc>,
) -> Result<usize, CommandError> {
    let released: Vec<Released> = diesel::sql_query(
        "WITH due AS (
             SELECT id FROM reservation
              WHERE check_in_required AND status = 'CONFIRMED' AND checked_in_at IS NULL AND starts_at <= $1
              ORDER BY starts_at, id
              LIMIT $3
                FOR UPDATE SKIP LOCKED),
         old AS (SELECT r.id, r.ends_at FROM reservation r JOIN due USING (id))
         UPDATE reservation r
            SET status = 'RELEASED', released_at = $2,
                ends_at = GREATEST(r.starts_at + interval '1 minute', LEAST(r.ends_at, $4)),
                version = r.version + 1, updated_at = $2
           FROM old
          WHERE r.id = old.id
      RETURNING r.id, old.ends_at AS old_ends_at",
    )
    .bind::<Timestamptz, _>(now - policy.check_in_grace)
    .bind::<Timestamptz, _>(now)
    .bind::<Int8, _>(limit)
    .bind::<Timestamptz, _>(ceil_minute(now))
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
    let ctx = Ctx { actor, policy, now };
    events::released(conn, &after, &released.iter().map(|r| (r.id, r.old_ends_at)).collect::<Vec<_>>(), &ctx).await?;
    Ok(after.len())
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
                  - COALESCE((SELECT range_agg(tstzrange(starts_at, ends_at, '[)'))
                                FROM reservation_room
                               WHERE room = $1 AND active
                                 AND tstzrange(starts_at, ends_at, '[)') && tstzrange($2, $3, '[)')),
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
