//! Booking rules decided inside the booking's transaction (SPEC §8, §12):
//! which rooms and whether they link (from share-locked catalogue rows), each
//! room's maximum length and horizon, approval, and the organizer's quota of
//! live future bookings — counted under a lock of that organizer, so twenty
//! simultaneous requests at quota − 1 give exactly one booking.

use chrono::{Duration, NaiveDate};
use diesel::sql_types::{Array, Date, Int8, Nullable, Text, Timestamptz};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::RunQueryDsl;

use super::desks::{self, When};
use super::domain::{Status, TimeRange};
use crate::catalogue::domain::LinkedRooms;
use crate::command::{CommandError, Ctx};
use crate::db::cached::CacheExt;
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};

/// The rooms of a booking as the catalogue holds them now, share-locked,
/// with the rules that depend on them: each room's maximum length, and
/// (admins exempt) its horizon. Unknown or unlinkable rooms and over-long
/// bookings are invalid input (never stored); a start beyond the horizon
/// depends on when it is asked, so that refusal is stored.
pub async fn resolve(
    conn: &mut Conn,
    codes: &[String],
    range: &TimeRange,
    ctx: &Ctx<'_>,
) -> Result<LinkedRooms, CommandError> {
    resolve_when(conn, codes, &When::Range(*range), ctx).await.map(|(rooms, _)| rooms)
}

/// [`resolve`] for a booking given as instants or as a desk's unit (SPEC
/// §28): answers the rooms and the instants. A desk's longest booking is
/// its working day (`desks::range_of` admits only its units), and an
/// assigned desk is checked against its holder's away days.
pub async fn resolve_when(
    conn: &mut Conn,
    codes: &[String],
    when: &When,
    ctx: &Ctx<'_>,
) -> Result<(LinkedRooms, TimeRange), CommandError> {
    let found = crate::catalogue::store::lock_bookable(conn, codes, ctx.policy.timezone).await?;
    let rooms = LinkedRooms::link(codes, found).map_err(CommandError::Invalid)?;
    let range = desks::range_of(&rooms, when).map_err(CommandError::Invalid)?;
    if !rooms.is_desk() {
        range.ensure_at_most(rooms.max_duration_minutes()).map_err(CommandError::Invalid)?;
    }
    ensure_within_horizon(&rooms, &range, ctx)?;
    ensure_open(conn, &rooms, std::slice::from_ref(&range), ctx).await?;
    desks::ensure_may_take(conn, &rooms, &range, ctx).await?;
    Ok((rooms, range))
}

/// The area's opening rules (SPEC §24; admins exempt): where working hours
/// are enforced, each range lies inside one day's hours in the area's zone
/// (`OUTSIDE_WORKING_HOURS`); where the area closes on holidays, no range
/// touches a holiday of its calendar (`AREA_CLOSED`) — one statement for
/// every date of every range.
pub async fn ensure_open(
    conn: &mut Conn,
    rooms: &LinkedRooms,
    ranges: &[TimeRange],
    ctx: &Ctx<'_>,
) -> Result<(), CommandError> {
    let area = rooms.area();
    if ctx.principal.is_admin() {
        return Ok(());
    }
    if area.restrict_to_working_hours {
        if let Some(r) = ranges.iter().find(|r| !area.hours.contains(area.zone, r.starts_at(), r.ends_at())) {
            return Err(ApiError::worded(
                ErrorCode::OutsideWorkingHours,
                serde_json::json!({ "field": "startsAt", "area": area.area, "startsAt": r.starts_at(),
                                    "workingHours": area.hours.to_text() }),
            )
            .into());
        }
    }
    let Some(calendar) = area.holiday_calendar.as_deref().filter(|_| area.closed_on_holidays) else {
        return Ok(());
    };
    let mut dates: Vec<NaiveDate> = Vec::new();
    for r in ranges {
        let first = r.starts_at().with_timezone(&area.zone).date_naive();
        let last = (r.ends_at() - Duration::seconds(1)).with_timezone(&area.zone).date_naive();
        dates.extend(first.iter_days().take_while(|d| *d <= last));
    }
    let closed: Option<Closed> =
        diesel::sql_query("SELECT day, name FROM holiday WHERE calendar = $1 AND day = ANY($2) ORDER BY day LIMIT 1")
            .bind::<Text, _>(calendar)
            .bind::<Array<Date>, _>(dates)
            .cached()
            .get_result(conn)
            .await
            .optional()?;
    match closed {
        Some(c) => Err(ApiError::worded(
            ErrorCode::AreaClosed,
            serde_json::json!({ "field": "startsAt", "area": area.area, "date": c.day.to_string(), "holiday": c.name }),
        )
        .into()),
        None => Ok(()),
    }
}

#[derive(QueryableByName)]
struct Closed {
    #[diesel(sql_type = Date)]
    day: NaiveDate,
    #[diesel(sql_type = Text)]
    name: String,
}

pub fn ensure_within_horizon(rooms: &LinkedRooms, range: &TimeRange, ctx: &Ctx<'_>) -> Result<(), ApiError> {
    match rooms.horizon_days() {
        Some(days) if !ctx.principal.is_admin() && range.starts_at() >= ctx.now + Duration::days(i64::from(days)) => {
            Err(ApiError::worded(
                ErrorCode::BeyondHorizon,
                serde_json::json!({ "field": "startsAt", "horizonDays": days }),
            ))
        }
        _ => Ok(()),
    }
}

/// PENDING for a non-admin in a room that needs approval, else CONFIRMED.
pub fn initial_status(rooms: &LinkedRooms, ctx: &Ctx<'_>) -> Status {
    if rooms.approval_required() && !ctx.principal.is_admin() {
        Status::Pending
    } else {
        Status::Confirmed
    }
}

/// A booking that moves (a new time or new rooms; SPEC §11, §12): in rooms
/// that need approval it needs approval again unless an admin moves it,
/// and a check-in belonged to the time and rooms it was made for. The one
/// rule for a booking's move and a series' retime; `moved` says whether
/// this booking's time or rooms change. Answers its status and check-in.
pub fn after_move(
    status: Status,
    checked_in_at: Option<chrono::DateTime<chrono::Utc>>,
    moved: bool,
    rooms: &LinkedRooms,
    ctx: &Ctx<'_>,
) -> (Status, Option<chrono::DateTime<chrono::Utc>>) {
    if !moved {
        return (status, checked_in_at);
    }
    match initial_status(rooms, ctx) {
        Status::Pending => (Status::Pending, None),
        _ => (status, None),
    }
}

/// The quota lock of the acting organizer, held to the end of the
/// transaction, when a quota is in force for them.
pub struct Quota {
    max: Option<u32>,
}

#[derive(QueryableByName)]
struct Counted {
    #[diesel(sql_type = Int8)]
    live: i64,
}

impl Quota {
    /// Takes the organizer's lock first of all (the lock order of every
    /// booking write); nothing when no quota applies (admins, or none set).
    pub async fn lock(conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Quota, CommandError> {
        let max = ctx.policy.max_active_bookings.filter(|_| !ctx.principal.is_admin());
        if max.is_some() {
            diesel::sql_query("SELECT pg_advisory_xact_lock(hashtextextended('yeyak-quota:' || $1, 0))")
                .bind::<Text, _>(ctx.principal.digest().as_str())
                .cached()
                .execute(conn)
                .await?;
        }
        Ok(Quota { max })
    }

    /// Refuses `adding` more live future bookings when the organizer would
    /// pass the quota (`except`: a booking being moved). A new statement
    /// after the lock, so it sees every booking committed by whoever held
    /// the lock before.
    pub async fn ensure_room_for(
        &self,
        conn: &mut Conn,
        ctx: &Ctx<'_>,
        adding: i64,
        except: Option<i64>,
    ) -> Result<(), CommandError> {
        let Some(max) = self.max else { return Ok(()) };
        let counted: Counted = diesel::sql_query(concat!(
            "SELECT count(*) AS live FROM reservation
              WHERE organizer_digest = $1 AND ends_at > $2 AND id IS DISTINCT FROM $3 AND status IN ",
            crate::live_statuses!()
        ))
        .bind::<Text, _>(ctx.principal.digest().as_str())
        .bind::<Timestamptz, _>(ctx.now)
        .bind::<Nullable<Int8>, _>(except)
        .cached()
        .get_result(conn)
        .await?;
        if counted.live + adding > i64::from(max) {
            return Err(ApiError::worded(
                ErrorCode::QuotaExceeded,
                serde_json::json!({ "maxActiveBookings": max, "active": counted.live, "adding": adding }),
            )
            .into());
        }
        Ok(())
    }
}
