//! The room catalogue's SQL: list, create, change and retire rooms, find free
//! ones, and read the rooms of a booking under a share lock inside the
//! booking's transaction (so that a retirement cannot slip between the check
//! and the insert).

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{Array, Bool, Double, Int4, Int8, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use serde_json::json;

use super::domain::{Assignee, Bookable, Fraction, NewRoom, Room, RoomKind, RoomPatch, SearchLimit};
use super::hours::{AreaRules, WorkingHours};
use crate::command::CommandError;
use crate::db::cached::CacheExt;
use crate::db::schema::room;
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};

/// Catalogue order: area, then position (then code, for retired rooms that
/// gave their position up).
pub async fn list(conn: &mut Conn, include_retired: bool) -> QueryResult<Vec<Room>> {
    let mut query = room::table.order((room::area, room::position, room::code)).select(Room::as_select()).into_boxed();
    if !include_retired {
        query = query.filter(room::active);
    }
    query.load(conn).await
}

pub async fn find(conn: &mut Conn, code: &str) -> QueryResult<Option<Room>> {
    room::table.find(code).select(Room::as_select()).first(conn).await.optional()
}

/// What the constraints of `room` say about a refused write.
fn conflict(err: DieselError, code: &str, area: &str, suite: Option<&str>, position: Option<i32>) -> CommandError {
    let constraint = match &err {
        DieselError::DatabaseError(
            DatabaseErrorKind::UniqueViolation | DatabaseErrorKind::ExclusionViolation,
            info,
        ) => info.constraint_name().map(str::to_owned),
        _ => None,
    };
    match constraint.as_deref() {
        Some("room_pkey") => {
            ApiError::worded(ErrorCode::RoomCodeTaken, json!({ "field": "code", "code": code })).into()
        }
        Some("room_area_position_key") => ApiError::worded(
            ErrorCode::RoomPositionTaken,
            json!({ "field": "position", "area": area, "position": position }),
        )
        .into(),
        Some("room_suite_in_one_area") => {
            ApiError::worded(ErrorCode::SuiteInOtherArea, json!({ "field": "suite", "suite": suite, "area": area }))
                .into()
        }
        _ => err.into(),
    }
}

/// The person a desk is assigned to, by username (compared as
/// `staff_user_username_lower_key` does); an unknown one is a 400 naming
/// `assignedTo`, never stored.
async fn assignee_id(conn: &mut Conn, username: Option<&str>) -> Result<Option<i64>, CommandError> {
    let Some(username) = username else { return Ok(None) };
    let found: Option<Affected> = diesel::sql_query("SELECT id FROM staff_user WHERE lower(username) = lower($1)")
        .bind::<Text, _>(username)
        .get_result(conn)
        .await
        .optional()?;
    match found {
        Some(row) => Ok(Some(row.id)),
        None => Err(CommandError::Invalid(ApiError::malformed("assignedTo", "no person has this username"))),
    }
}

pub async fn create(conn: &mut Conn, new: &NewRoom, home: Tz, now: DateTime<Utc>) -> Result<Room, CommandError> {
    super::areas::ensure(conn, new.area.as_str(), home).await?;
    let assignee = assignee_id(conn, new.assigned_to.as_ref().map(Assignee::as_str)).await?;
    let inserted = diesel::sql_query(
        "INSERT INTO room (code, name, area, capacity, equipment, suite, position, check_in_required,
                           approval_required, max_duration_minutes, horizon_days, created_at, updated_at,
                           buffer_before_minutes, buffer_after_minutes, kind, assigned_to, plan_x, plan_y)
         VALUES ($1, $2, $3, $4, $5, $6,
                 COALESCE($7, (SELECT COALESCE(max(position), 0) + 1 FROM room WHERE area = $3 AND active)),
                 $8, $9, $10, $11, $12, $12, $13, $14, $15, $16, $17, $18)
         RETURNING code",
    )
    .bind::<Text, _>(new.code.as_str())
    .bind::<Text, _>(new.name.as_str())
    .bind::<Text, _>(new.area.as_str())
    .bind::<Int4, _>(new.capacity)
    .bind::<Array<Text>, _>(new.equipment.tags())
    .bind::<Nullable<Text>, _>(new.suite.as_ref().map(|s| s.as_str()))
    .bind::<Nullable<Int4>, _>(new.position)
    .bind::<Bool, _>(new.check_in_required)
    .bind::<Bool, _>(new.approval_required)
    .bind::<Int4, _>(new.max_duration_minutes)
    .bind::<Nullable<Int4>, _>(new.horizon_days)
    .bind::<Timestamptz, _>(now)
    .bind::<Int4, _>(new.buffers.before_minutes)
    .bind::<Int4, _>(new.buffers.after_minutes)
    .bind::<Text, _>(new.kind.as_str())
    .bind::<Nullable<Int8>, _>(assignee)
    .bind::<Nullable<Double>, _>(new.place.map(|p| p.x.get()))
    .bind::<Nullable<Double>, _>(new.place.map(|p| p.y.get()))
    .execute(conn)
    .await;
    if let Err(e) = inserted {
        let suite = new.suite.as_ref().map(|s| s.as_str());
        return Err(conflict(e, new.code.as_str(), new.area.as_str(), suite, new.position));
    }
    find(conn, new.code.as_str()).await?.ok_or_else(|| ApiError::internal().into())
}

/// The highest position of an area's active rooms (0 when it has none).
async fn last_position(conn: &mut Conn, area: &str) -> QueryResult<i32> {
    room::table
        .filter(room::area.eq(area))
        .filter(room::active)
        .select(diesel::dsl::max(room::position))
        .first::<Option<i32>>(conn)
        .await
        .map(|p| p.unwrap_or(0))
}

/// Locks an active room for a change of the catalogue.
async fn lock_active(conn: &mut Conn, code: &str) -> Result<Room, CommandError> {
    let found: Option<Room> =
        room::table.find(code).select(Room::as_select()).for_update().first(conn).await.optional()?;
    let room = found.ok_or_else(|| ApiError::not_found("room"))?;
    if !room.active {
        return Err(ApiError::worded(ErrorCode::InvalidState, json!({ "what": "room", "state": "RETIRED" })).into());
    }
    Ok(room)
}

pub async fn patch(
    conn: &mut Conn,
    code: &str,
    patch: &RoomPatch,
    home: Tz,
    now: DateTime<Utc>,
) -> Result<Room, CommandError> {
    let current = lock_active(conn, code).await?;
    let mut next = patch.apply_checked(&current).map_err(CommandError::Invalid)?;
    let assignee = assignee_id(conn, next.assigned_to.as_deref()).await?;
    super::areas::ensure(conn, &next.area, home).await?;
    if next.area != current.area && patch.position.is_none() {
        // A room moved to another area takes the last position there (SPEC §24).
        next.position = last_position(conn, &next.area).await? + 1;
    }
    let updated = diesel::update(room::table.find(code))
        .set((
            room::name.eq(&next.name),
            room::area.eq(&next.area),
            room::capacity.eq(next.capacity),
            room::equipment.eq(&next.equipment),
            room::suite.eq(&next.suite),
            room::position.eq(next.position),
            room::check_in_required.eq(next.check_in_required),
            room::approval_required.eq(next.approval_required),
            room::max_duration_minutes.eq(next.max_duration_minutes),
            room::horizon_days.eq(next.horizon_days),
            room::buffer_before_minutes.eq(next.buffer_before_minutes),
            room::buffer_after_minutes.eq(next.buffer_after_minutes),
            room::kind.eq(next.kind.as_str()),
            room::assigned_to.eq(assignee),
            room::plan_x.eq(next.x.map(Fraction::get)),
            room::plan_y.eq(next.y.map(Fraction::get)),
            room::updated_at.eq(now),
        ))
        .returning(Room::as_returning())
        .get_result(conn)
        .await;
    updated.map_err(|e| conflict(e, code, &next.area, next.suite.as_deref(), Some(next.position)))
}

#[derive(QueryableByName)]
struct Affected {
    #[diesel(sql_type = diesel::sql_types::Int8)]
    id: i64,
}

/// Bookings that hold the room and have not ended yet, by id.
async fn future_bookings(conn: &mut Conn, code: &str, now: DateTime<Utc>) -> QueryResult<Vec<i64>> {
    let rows: Vec<Affected> = diesel::sql_query(
        "SELECT reservation_id AS id FROM reservation_room
          WHERE room = $1 AND active AND ends_at > $2 ORDER BY reservation_id",
    )
    .bind::<Text, _>(code)
    .bind::<Timestamptz, _>(now)
    .load(conn)
    .await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}

/// Retires a room. Its row lock waits for bookings in flight (they hold it
/// shared) and keeps new ones out until this commits; then the room's future
/// bookings refuse the retirement, or, with `cancel_future`, are cancelled
/// whole (every room of a linked booking) in this same transaction.
/// Returns the room and the bookings cancelled.
pub async fn retire(
    conn: &mut Conn,
    code: &str,
    cancel_future: bool,
    now: DateTime<Utc>,
) -> Result<(Room, Vec<i64>), CommandError> {
    lock_active(conn, code).await?;
    let future = future_bookings(conn, code, now).await?;
    if !future.is_empty() && !cancel_future {
        return Err(ApiError::worded(
            ErrorCode::RoomHasFutureBookings,
            json!({ "count": future.len(), "bookingIds": future }),
        )
        .into());
    }
    diesel::update(room::table.find(code))
        .set((room::active.eq(false), room::retired_at.eq(now), room::updated_at.eq(now)))
        .execute(conn)
        .await?;
    let room = find(conn, code).await?.ok_or_else(ApiError::internal)?;
    Ok((room, future))
}

/// Active rooms free for the whole window `[from, to)` with at least
/// `min_capacity` seats and every tag of `equipment`, optionally in one area;
/// smallest sufficient capacity first, the first `limit` of them. The NOT
/// EXISTS probes the EXCLUDE constraint's GiST index (room, range) once per
/// candidate room, in that order, until `limit` are found.
pub async fn free(
    conn: &mut Conn,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    min_capacity: i32,
    equipment: &[String],
    area: Option<&str>,
    limit: SearchLimit,
) -> QueryResult<Vec<Room>> {
    diesel::sql_query(FREE_ROOMS_SQL)
        .bind::<Timestamptz, _>(from)
        .bind::<Timestamptz, _>(to)
        .bind::<Int4, _>(min_capacity)
        .bind::<Array<Text>, _>(equipment)
        .bind::<Nullable<Text>, _>(area)
        .bind::<Int8, _>(limit.get())
        .cached()
        .load::<RoomByName>(conn)
        .await
        .map(|rows| rows.into_iter().map(Room::from).collect())
}

/// The room's future live bookings that its buffers as they are now would
/// not allow beside another (SPEC §24): each was made under other buffers.
pub async fn buffer_conflicts(conn: &mut Conn, code: &str, now: DateTime<Utc>) -> QueryResult<Vec<i64>> {
    #[derive(QueryableByName)]
    struct Id {
        #[diesel(sql_type = diesel::sql_types::Int8)]
        id: i64,
    }
    let rows: Vec<Id> = diesel::sql_query(
        "SELECT DISTINCT a.reservation_id AS id
           FROM reservation_room a
           JOIN room r ON r.code = a.room
           JOIN reservation_room b ON b.room = a.room AND b.active AND b.reservation_id <> a.reservation_id
            AND reservation_room_occupied(b.starts_at, b.ends_at, r.buffer_before_minutes, r.buffer_after_minutes)
             && reservation_room_occupied(a.starts_at, a.ends_at, r.buffer_before_minutes, r.buffer_after_minutes)
          WHERE a.room = $1 AND a.active AND a.ends_at > $2
          ORDER BY 1",
    )
    .bind::<Text, _>(code)
    .bind::<Timestamptz, _>(now)
    .load(conn)
    .await?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}

/// The free-room search (docs/PERFORMANCE.md shows its plan). The
/// candidate rooms are sorted first (a subquery that `OFFSET 0` keeps
/// apart), then probed in that order until `limit` are free: each probe is
/// one lookup in the exclusion constraint's GiST index (about 0.07 ms at
/// 3,000,000 bookings), so a campus of 5,000 rooms probes about `limit`
/// of them, not all (SPEC §27: 0.34 s when every room was probed before the
/// sort). Codes compare byte by byte (`COLLATE "C"`), as the catalogue
/// orders rooms in Rust (`RoomCatalog::new`): the same order whatever the
/// database's collation, and at 5,000 rooms the sort takes 3.5 ms instead
/// of 8 ms under `C.UTF-8`.
pub const FREE_ROOMS_SQL: &str = "
SELECT r.code, r.name, r.area, r.capacity, r.equipment, r.suite, r.position, r.check_in_required,
       r.approval_required, r.max_duration_minutes, r.horizon_days, r.active,
       r.buffer_before_minutes, r.buffer_after_minutes,
       COALESCE((SELECT a.time_zone FROM area a WHERE a.code = r.area), 'UTC') AS time_zone,
       r.kind, (SELECT s.username FROM staff_user s WHERE s.id = r.assigned_to) AS assigned_to, r.plan_x, r.plan_y
  FROM (SELECT * FROM room
         WHERE active AND capacity >= $3 AND equipment @> $4 AND ($5::text IS NULL OR area = $5)
         ORDER BY capacity, area COLLATE \"C\", position, code COLLATE \"C\"
        OFFSET 0) r
 WHERE NOT EXISTS (SELECT 1 FROM reservation_room rr
                    WHERE rr.room = r.code AND rr.active
                      AND reservation_room_occupied(rr.starts_at, rr.ends_at, rr.buffer_before_minutes, rr.buffer_after_minutes)
                       && reservation_room_occupied($1, $2, r.buffer_before_minutes, r.buffer_after_minutes))
 ORDER BY r.capacity, r.area COLLATE \"C\", r.position, r.code COLLATE \"C\"
 LIMIT $6";

#[derive(QueryableByName)]
struct RoomByName {
    #[diesel(sql_type = Text)]
    code: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    area: String,
    #[diesel(sql_type = Int4)]
    capacity: i32,
    #[diesel(sql_type = Array<Text>)]
    equipment: Vec<String>,
    #[diesel(sql_type = Nullable<Text>)]
    suite: Option<String>,
    #[diesel(sql_type = Int4)]
    position: i32,
    #[diesel(sql_type = Bool)]
    check_in_required: bool,
    #[diesel(sql_type = Bool)]
    approval_required: bool,
    #[diesel(sql_type = Int4)]
    max_duration_minutes: i32,
    #[diesel(sql_type = Nullable<Int4>)]
    horizon_days: Option<i32>,
    #[diesel(sql_type = Bool)]
    active: bool,
    #[diesel(sql_type = Int4)]
    buffer_before_minutes: i32,
    #[diesel(sql_type = Int4)]
    buffer_after_minutes: i32,
    #[diesel(sql_type = Text)]
    time_zone: String,
    #[diesel(sql_type = Text)]
    kind: RoomKind,
    #[diesel(sql_type = Nullable<Text>)]
    assigned_to: Option<String>,
    #[diesel(sql_type = Nullable<Double>)]
    plan_x: Option<Fraction>,
    #[diesel(sql_type = Nullable<Double>)]
    plan_y: Option<Fraction>,
}

impl From<RoomByName> for Room {
    fn from(r: RoomByName) -> Self {
        Room {
            code: r.code,
            name: r.name,
            area: r.area,
            capacity: r.capacity,
            equipment: r.equipment,
            suite: r.suite,
            position: r.position,
            check_in_required: r.check_in_required,
            approval_required: r.approval_required,
            max_duration_minutes: r.max_duration_minutes,
            horizon_days: r.horizon_days,
            active: r.active,
            buffer_before_minutes: r.buffer_before_minutes,
            buffer_after_minutes: r.buffer_after_minutes,
            time_zone: r.time_zone,
            kind: r.kind,
            assigned_to: r.assigned_to,
            x: r.plan_x,
            y: r.plan_y,
        }
    }
}

#[derive(QueryableByName)]
struct BookableRow {
    #[diesel(sql_type = Text)]
    code: String,
    #[diesel(sql_type = Nullable<Text>)]
    suite: Option<String>,
    #[diesel(sql_type = Int4)]
    position: i32,
    #[diesel(sql_type = Int4)]
    max_duration_minutes: i32,
    #[diesel(sql_type = Nullable<Int4>)]
    horizon_days: Option<i32>,
    #[diesel(sql_type = Bool)]
    approval_required: bool,
    #[diesel(sql_type = Bool)]
    check_in_required: bool,
    #[diesel(sql_type = Array<Text>)]
    suite_members: Vec<String>,
    #[diesel(sql_type = Text)]
    area: String,
    #[diesel(sql_type = Nullable<Text>)]
    time_zone: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Jsonb)]
    working_hours: serde_json::Value,
    #[diesel(sql_type = Bool)]
    restrict_to_working_hours: bool,
    #[diesel(sql_type = Bool)]
    closed_on_holidays: bool,
    #[diesel(sql_type = Nullable<Text>)]
    holiday_calendar: Option<String>,
    #[diesel(sql_type = Text)]
    kind: RoomKind,
    #[diesel(sql_type = Nullable<Int8>)]
    assigned_to: Option<i64>,
}

/// The active rooms among `codes`, each with its suite's active members in
/// position order, share-locked (`FOR KEY SHARE`, the lock a foreign key
/// takes) until the booking's transaction ends: a retirement, which locks the
/// row `FOR UPDATE`, waits for the booking or the booking sees it retired.
/// Each comes with its area's rules (`home`: a zone not set).
pub async fn lock_bookable(conn: &mut Conn, codes: &[String], home: Tz) -> QueryResult<Vec<Bookable>> {
    let rows: Vec<BookableRow> = diesel::sql_query(
        "SELECT r.code, r.suite, r.position, r.max_duration_minutes, r.horizon_days, r.approval_required,
                r.check_in_required,
                COALESCE((SELECT array_agg(m.code ORDER BY m.position, m.code) FROM room m
                           WHERE m.active AND m.suite = r.suite), '{}') AS suite_members,
                r.area, a.time_zone, a.working_hours, a.restrict_to_working_hours, a.closed_on_holidays,
                a.holiday_calendar, r.kind, r.assigned_to
           FROM room r JOIN area a ON a.code = r.area
          WHERE r.code = ANY($1) AND r.active
          ORDER BY r.position, r.code
            FOR KEY SHARE OF r",
    )
    .bind::<Array<Text>, _>(codes)
    .cached()
    .load(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Bookable {
            code: r.code,
            suite: r.suite,
            position: r.position,
            max_duration_minutes: r.max_duration_minutes,
            horizon_days: r.horizon_days,
            approval_required: r.approval_required,
            check_in_required: r.check_in_required,
            suite_members: r.suite_members,
            area: AreaRules {
                zone: r.time_zone.and_then(|z| z.parse().ok()).unwrap_or(home),
                hours: WorkingHours::from_json(&r.working_hours),
                restrict_to_working_hours: r.restrict_to_working_hours,
                closed_on_holidays: r.closed_on_holidays,
                holiday_calendar: r.holiday_calendar,
                area: r.area,
            },
            kind: r.kind,
            assigned_to: r.assigned_to,
        })
        .collect())
}
