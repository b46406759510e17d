//! The booking engine's SQL (seed 002, SPEC §2). Every write touches
//! `reservation_room` in room order, one statement per row, in the caller's
//! transaction, and keeps the copies equal to the parent. Overlaps are decided
//! by the EXCLUDE constraint alone: `INSERT … ON CONFLICT DO NOTHING` answers an
//! overlap with zero rows instead of an error (and, unlike a plain INSERT or
//! UPDATE, cannot deadlock against another speculative insert, seed 002 §교착).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Int4, Int8, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use serde::Serialize;

use super::domain::{RequestedRooms, TimeRange, Title};
use crate::catalogue::domain::LinkedRooms;
use crate::command::Acting;
use crate::db::cached::CacheExt;
use crate::db::schema::{reservation, reservation_room};
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};
use crate::idempotency::CommandError;

/// A booking as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, QueryableByName, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Booking {
    #[diesel(sql_type = Int8)]
    pub id: i64,
    #[diesel(sql_type = Text)]
    pub title: String,
    #[diesel(sql_type = Text, column_name = organizer_name)]
    pub organizer: String,
    #[diesel(sql_type = Array<Text>)]
    pub rooms: Vec<String>,
    #[diesel(sql_type = Timestamptz)]
    pub starts_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    pub ends_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub cancelled_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Int4)]
    pub version: i32,
    /// Decides who may change the booking; never serialised.
    #[serde(skip)]
    #[diesel(sql_type = Text)]
    pub organizer_digest: String,
}

/// Who asks to change a booking.
pub type Actor = Acting;

impl Acting {
    fn may_change(&self, organizer_digest: &str) -> bool {
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

const BOOKING_SELECT: &str = "
SELECT r.id, r.title, r.organizer_name, r.organizer_digest, r.starts_at, r.ends_at,
       r.cancelled_at, r.version,
       COALESCE(array_agg(rr.room ORDER BY rm.position) FILTER (WHERE rr.room IS NOT NULL), '{}') AS rooms
  FROM reservation r
  LEFT JOIN reservation_room rr ON rr.reservation_id = r.id
  LEFT JOIN room rm ON rm.code = rr.room";

pub async fn find(conn: &mut Conn, id: i64) -> QueryResult<Option<Booking>> {
    diesel::sql_query(format!("{BOOKING_SELECT} WHERE r.id = $1 GROUP BY r.id"))
        .bind::<Int8, _>(id)
        .cached()
        .get_result(conn)
        .await
        .optional()
}

/// Bookings overlapping `[from, to)`, by start time.
pub async fn list(
    conn: &mut Conn,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    include_cancelled: bool,
) -> QueryResult<Vec<Booking>> {
    diesel::sql_query(format!(
        "{BOOKING_SELECT}
          WHERE tstzrange(r.starts_at, r.ends_at, '[)') && tstzrange($1, $2, '[)')
            AND ($3 OR r.cancelled_at IS NULL)
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

/// Active bookings overlapping `[from, to)` that hold any of `rooms` (one
/// area's day page), by start time.
pub async fn list_in_rooms(
    conn: &mut Conn,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    rooms: &[String],
) -> QueryResult<Vec<Booking>> {
    diesel::sql_query(format!(
        "{BOOKING_SELECT}
          WHERE tstzrange(r.starts_at, r.ends_at, '[)') && tstzrange($1, $2, '[)')
            AND r.cancelled_at IS NULL
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

/// The rooms of a booking as the catalogue holds them now, share-locked,
/// with the rules of SPEC §8/§12 that depend on them: each room's maximum
/// length, and (admins exempt) its horizon. Unknown or unlinkable rooms and
/// over-long bookings are invalid input (never stored); a start beyond the
/// horizon depends on when it is asked, so that refusal is stored.
async fn resolve(
    conn: &mut Conn,
    codes: &[String],
    range: &TimeRange,
    actor: &Actor,
    now: DateTime<Utc>,
) -> Result<LinkedRooms, CommandError> {
    let found = crate::catalogue::store::lock_bookable(conn, codes).await?;
    let rooms = LinkedRooms::link(codes, found).map_err(CommandError::Invalid)?;
    range.ensure_at_most(rooms.max_duration_minutes()).map_err(CommandError::Invalid)?;
    if let (Some(days), false) = (rooms.horizon_days(), actor.is_admin) {
        if range.starts_at() >= now + chrono::Duration::days(i64::from(days)) {
            return Err(ApiError::new(
                ErrorCode::BeyondHorizon,
                format!("이 회의실은 {days}일 앞까지만 예약할 수 있습니다."),
            )
            .with_details(serde_json::json!({ "field": "startsAt", "horizonDays": days }))
            .into());
        }
    }
    Ok(rooms)
}

/// Creates a booking on all its rooms or none (the caller's savepoint rolls
/// the parent row back when a room is taken).
pub async fn create(
    conn: &mut Conn,
    new: &NewBooking,
    actor: &Actor,
    now: DateTime<Utc>,
) -> Result<Booking, CommandError> {
    // Inside the command, so that a retry after the start time replays the
    // first answer instead of being judged afresh.
    new.range.ensure_not_past(now)?;
    let rooms = resolve(conn, new.rooms.codes(), &new.range, actor, now).await?;
    let id: i64 = diesel::insert_into(reservation::table)
        .values((
            reservation::title.eq(new.title.as_str()),
            reservation::organizer_name.eq(new.organizer_name.as_str()),
            reservation::organizer_digest.eq(actor.digest.as_str()),
            reservation::starts_at.eq(new.range.starts_at()),
            reservation::ends_at.eq(new.range.ends_at()),
            reservation::created_at.eq(now),
            reservation::updated_at.eq(now),
        ))
        .returning(reservation::id)
        .get_result(conn)
        .await?;
    let codes = rooms.codes();
    for code in &codes {
        if !claim_room(conn, id, code, &new.range).await? {
            return Err(ApiError::room_time_taken().into());
        }
    }
    Ok(Booking {
        id,
        title: new.title.as_str().to_owned(),
        organizer: new.organizer_name.as_str().to_owned(),
        rooms: codes,
        starts_at: new.range.starts_at(),
        ends_at: new.range.ends_at(),
        cancelled_at: None,
        version: 1,
        organizer_digest: actor.digest.as_str().to_owned(),
    })
}

/// Locks the parent row and checks who may change it and at which version.
async fn lock_for_change(
    conn: &mut Conn,
    id: i64,
    actor: &Actor,
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
    if booking.cancelled_at.is_some() {
        return Err(ApiError::new(ErrorCode::InvalidState, "이미 취소된 예약입니다.")
            .with_details(serde_json::json!({ "state": "CANCELLED" }))
            .into());
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

/// Moves a booking to new times (and optionally a new title). Each room copy
/// is replaced in room order; the deleted old copy no longer counts, so a move
/// never conflicts with its own old time.
pub async fn move_to(
    conn: &mut Conn,
    id: i64,
    change: &MoveBooking,
    actor: &Actor,
    now: DateTime<Utc>,
) -> Result<Booking, CommandError> {
    change.range.ensure_not_past(now)?;
    // The rooms first (they never change), then the booking: the lock order
    // of every writer, retirements included (room, then reservation).
    let current_rooms = find(conn, id).await?.ok_or_else(|| ApiError::not_found("booking"))?.rooms;
    let rooms = resolve(conn, &current_rooms, &change.range, actor, now).await?;
    let booking = lock_for_change(conn, id, actor, change.expected_version).await?;
    let title = change.title.as_ref().map_or(booking.title.as_str(), Title::as_str).to_owned();
    let version: i32 = diesel::update(reservation::table.find(id))
        .set((
            reservation::title.eq(&title),
            reservation::starts_at.eq(change.range.starts_at()),
            reservation::ends_at.eq(change.range.ends_at()),
            reservation::version.eq(reservation::version + 1),
            reservation::updated_at.eq(now),
        ))
        .returning(reservation::version)
        .cached()
        .get_result(conn)
        .await?;
    for code in rooms.codes() {
        diesel::delete(reservation_room::table.find((id, &code))).execute(conn).await?;
        if !claim_room(conn, id, &code, &change.range).await? {
            return Err(ApiError::room_time_taken().into());
        }
    }
    Ok(Booking { title, starts_at: change.range.starts_at(), ends_at: change.range.ends_at(), version, ..booking })
}

/// Cancels a booking; its time is free as soon as this commits.
pub async fn cancel(
    conn: &mut Conn,
    id: i64,
    expected_version: Option<i32>,
    actor: &Actor,
    now: DateTime<Utc>,
) -> Result<Booking, CommandError> {
    let booking = lock_for_change(conn, id, actor, expected_version).await?;
    let version: i32 = diesel::update(reservation::table.find(id))
        .set((
            reservation::cancelled_at.eq(now),
            reservation::version.eq(reservation::version + 1),
            reservation::updated_at.eq(now),
        ))
        .returning(reservation::version)
        .cached()
        .get_result(conn)
        .await?;
    for code in &booking.rooms {
        diesel::update(reservation_room::table.find((id, code)))
            .set(reservation_room::active.eq(false))
            .cached()
            .execute(conn)
            .await?;
    }
    Ok(Booking { cancelled_at: Some(now), version, ..booking })
}

/// Cancels the given active bookings whole (every room of each), as one
/// set: a retired room's future bookings. Ids in ascending order, the lock
/// order of every multi-booking write.
pub async fn cancel_many(conn: &mut Conn, ids: &[i64], _actor: &Actor, now: DateTime<Utc>) -> QueryResult<usize> {
    if ids.is_empty() {
        return Ok(0);
    }
    let cancelled: Vec<i64> = diesel::update(
        reservation::table.filter(reservation::id.eq_any(ids)).filter(reservation::cancelled_at.is_null()),
    )
    .set((
        reservation::cancelled_at.eq(now),
        reservation::version.eq(reservation::version + 1),
        reservation::updated_at.eq(now),
    ))
    .returning(reservation::id)
    .get_results(conn)
    .await?;
    diesel::update(reservation_room::table.filter(reservation_room::reservation_id.eq_any(&cancelled)))
        .set(reservation_room::active.eq(false))
        .execute(conn)
        .await?;
    Ok(cancelled.len())
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
