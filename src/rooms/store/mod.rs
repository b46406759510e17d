//! The booking engine's writes (seed 002, SPEC §2, §11, §12), one file per
//! command; this file holds what they share. Every write touches
//! `reservation_room` in room order, one statement per row, in the caller's
//! transaction, and keeps the copies equal to the parent. Overlaps are decided
//! by the EXCLUDE constraint alone: `INSERT … ON CONFLICT DO NOTHING` answers an
//! overlap with zero rows instead of an error (and, unlike a plain INSERT or
//! UPDATE, cannot deadlock against another speculative insert, seed 002 §교착).
//! Every change is recorded in the booking's history and announced through
//! the outbox by the same transaction (`events`).
//!
//! Lock order of every writer: the organizer's quota lock, then the rooms
//! (share), then the reservation row, then its room copies. A retirement
//! takes the room row, then reservations; nothing waits the other way round.

pub mod cancel;
pub mod create;
pub mod decide;
pub mod move_to;
pub mod retire_room;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::Bool;
use diesel_async::RunQueryDsl;

use super::booking::{find, find_many, Booking};
use super::domain::{Status, TimeRange};
use super::{access, events};
use crate::command::{CommandError, Ctx, Principal};
use crate::db::cached::CacheExt;
use crate::db::schema::{reservation, reservation_room};
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};
use crate::history::Action;

pub use cancel::CancelBooking;
pub use create::CreateBooking;
pub use decide::DecideBooking;
pub use move_to::MoveBooking;
pub use retire_room::{Retire, RetireRoom};

/// Writes one room copy (it takes the room's buffers, SPEC §24). A taken
/// room is refused by the database (`ON CONFLICT DO NOTHING`, which waits
/// for a concurrent writer without deadlocking on the two exclusion
/// indexes); the refusal is then named by what the now visible winner
/// overlaps: its meeting (`RoomTimeTaken`) or only its buffers
/// (`RoomBufferTaken`).
pub(crate) async fn claim_room(
    conn: &mut Conn,
    id: i64,
    room_code: &str,
    range: &TimeRange,
) -> Result<(), CommandError> {
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
    if inserted == 1 {
        return Ok(());
    }
    let meetings_overlap = diesel::select(diesel::dsl::exists(
        reservation_room::table
            .filter(reservation_room::room.eq(room_code))
            .filter(reservation_room::active)
            .filter(reservation_room::reservation_id.ne(id))
            .filter(reservation_room::starts_at.lt(range.ends_at()))
            .filter(reservation_room::ends_at.gt(range.starts_at())),
    ))
    .get_result::<bool>(conn)
    .await?;
    if meetings_overlap {
        return Err(ApiError::room_time_taken().into());
    }
    if holds_another_desk(conn, id, room_code, range).await? {
        return Err(crate::db::DbError::DeskAlreadyBooked.into());
    }
    Err(ApiError::room_buffer_taken().into())
}

#[derive(QueryableByName)]
struct Holds {
    #[diesel(sql_type = Bool)]
    holds: bool,
}

/// Whether `room_code` is a desk and the booking's organizer holds another
/// desk in `range`: what `reservation_room_one_desk_per_person` (SPEC §28)
/// compared when an `ON CONFLICT DO NOTHING` insert wrote nothing.
async fn holds_another_desk(conn: &mut Conn, id: i64, room_code: &str, range: &TimeRange) -> QueryResult<bool> {
    use diesel::sql_types::{Int8, Text, Timestamptz};
    let found: Holds = diesel::sql_query(
        "SELECT EXISTS (
             SELECT 1 FROM reservation_room rr, reservation p
              WHERE p.id = $1 AND rr.desk_holder = p.organizer_digest AND rr.active AND rr.reservation_id <> $1
                AND tstzrange(rr.starts_at, rr.ends_at, '[)') && tstzrange($3, $4, '[)')
                AND EXISTS (SELECT 1 FROM room d WHERE d.code = $2 AND d.kind = 'desk')) AS holds",
    )
    .bind::<Int8, _>(id)
    .bind::<Text, _>(room_code)
    .bind::<Timestamptz, _>(range.starts_at())
    .bind::<Timestamptz, _>(range.ends_at())
    .get_result(conn)
    .await?;
    Ok(found.holds)
}

/// What new reservation rows share: one booking's, or a series' occurrences'.
pub struct NewRows<'a> {
    pub title: &'a str,
    pub organizer_name: &'a str,
    pub status: Status,
    /// Shown to its organizer, their delegates and admins only (SPEC §26).
    pub private: bool,
    pub check_in_required: bool,
    /// The series they are occurrences of; each row's `occurrence_start` is
    /// where the rule put it, its start.
    pub series: Option<i64>,
}

#[derive(QueryableByName)]
struct Inserted {
    #[diesel(sql_type = diesel::sql_types::Int8)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Timestamptz)]
    starts_at: DateTime<Utc>,
}

/// The one writer of reservation rows, stamped with who organizes them —
/// the principal's digest, person and key tenant (SPEC §20) — in one
/// statement however many: each new id with its start, in `ranges`' order.
pub async fn insert_rows(
    conn: &mut Conn,
    rows: &NewRows<'_>,
    ranges: &[TimeRange],
    ctx: &Ctx<'_>,
) -> QueryResult<Vec<(i64, DateTime<Utc>)>> {
    use diesel::sql_types::{Array, Int8, Nullable, Text, Timestamptz};
    let (starts, ends): (Vec<_>, Vec<_>) = ranges.iter().map(|r| (r.starts_at(), r.ends_at())).unzip();
    let inserted: Vec<Inserted> = diesel::sql_query(
        "INSERT INTO reservation (title, organizer_name, organizer_digest, organizer_staff_id, organizer_tenant,
                                  starts_at, ends_at, status, check_in_required, series_id, occurrence_start,
                                  created_at, updated_at, booked_by, private)
         SELECT $1, $2, $3, $4, $11, o.s, o.e, $5, $6, $7, CASE WHEN $7 IS NULL THEN NULL ELSE o.s END, $8, $8, $12, $13
           FROM unnest($9::timestamptz[], $10::timestamptz[]) WITH ORDINALITY AS o(s, e, ord)
          ORDER BY o.ord
         RETURNING id, starts_at",
    )
    .bind::<Text, _>(rows.title)
    .bind::<Text, _>(rows.organizer_name)
    .bind::<Text, _>(ctx.principal.digest().as_str())
    .bind::<Nullable<Int8>, _>(ctx.principal.staff_id())
    .bind::<Text, _>(rows.status.as_str())
    .bind::<Bool, _>(rows.check_in_required)
    .bind::<Nullable<Int8>, _>(rows.series)
    .bind::<Timestamptz, _>(ctx.now)
    .bind::<Array<Timestamptz>, _>(&starts)
    .bind::<Array<Timestamptz>, _>(&ends)
    .bind::<Nullable<Text>, _>(ctx.principal.key_tenant().map(|t| t.as_str()))
    .bind::<Nullable<Int8>, _>(ctx.principal.booked_by())
    .bind::<Bool, _>(rows.private)
    .cached()
    .load(conn)
    .await?;
    Ok(inserted.into_iter().map(|i| (i.id, i.starts_at)).collect())
}

/// Inserts one booking and its room copies (rooms in position order); a
/// taken room is `RoomTimeTaken` (the caller's savepoint rolls back). Returns
/// the new id.
pub async fn insert(
    conn: &mut Conn,
    row: &NewRows<'_>,
    range: TimeRange,
    rooms: &[String],
    ctx: &Ctx<'_>,
) -> Result<i64, CommandError> {
    let (id, _) = insert_rows(conn, row, &[range], ctx).await?.pop().ok_or_else(ApiError::internal)?;
    for code in rooms {
        claim_room(conn, id, code, &range).await?;
    }
    Ok(id)
}

/// Locks the parent row and checks who may `act` on it, its state and version.
pub async fn lock_for(
    conn: &mut Conn,
    id: i64,
    principal: &Principal,
    act: access::Act,
    expected_version: Option<i32>,
) -> Result<Booking, CommandError> {
    let locked: Option<i64> =
        reservation::table.find(id).select(reservation::id).for_update().first(conn).await.optional()?;
    if locked.is_none() {
        return Err(ApiError::not_found("booking").into());
    }
    let booking = find(conn, id).await?.ok_or_else(|| ApiError::not_found("booking"))?;
    if !access::may(principal, &booking, act) {
        return Err(access::not_organizer().into());
    }
    if !booking.is_live() {
        return Err(invalid_state(booking.status).into());
    }
    if let Some(expected) = expected_version {
        if expected != booking.version {
            let details = serde_json::json!({ "expectedVersion": expected, "currentVersion": booking.version });
            return Err(ApiError::worded(ErrorCode::VersionConflict, details)
                .with_current_revision(i64::from(booking.version))
                .into());
        }
    }
    Ok(booking)
}

/// A booking in a state that refuses the change; the catalogue words it
/// from `what` and `state` ("이미 취소된 예약입니다.").
pub fn invalid_state(status: Status) -> ApiError {
    ApiError::worded(ErrorCode::InvalidState, serde_json::json!({ "what": "booking", "state": status.as_str() }))
}

/// CANCELLED with its copies inactive, for live bookings among `ids`;
/// `exception` marks series occurrences cancelled on their own.
pub(crate) async fn set_cancelled(
    conn: &mut Conn,
    ids: &[i64],
    now: DateTime<Utc>,
    exception: bool,
) -> QueryResult<Vec<i64>> {
    let cancelled: Vec<i64> = diesel::update(
        reservation::table.filter(reservation::id.eq_any(ids)).filter(reservation::status.eq_any(Status::live_texts())),
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

pub(crate) async fn deactivate_copies(conn: &mut Conn, ids: &[i64]) -> QueryResult<()> {
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
