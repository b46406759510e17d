//! A series in one transaction (SPEC §9): every occurrence a reservation of
//! its own, all written by one multi-row statement each for the parents and
//! for the room copies. The copies go in (time, room position) order — the
//! same global order as single bookings — with `ON CONFLICT DO NOTHING`, so
//! the EXCLUDE constraint alone decides what is taken, two series that
//! overlap on many dates wait on each other in one direction only (no
//! deadlock), and a taken date is a missing row, not an error.

use chrono::{DateTime, NaiveTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Int8, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::domain::Recurrence;
use crate::catalogue::domain::LinkedRooms;
use crate::db::cached::CacheExt;
use crate::db::schema::{booking_series, reservation};
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};
use crate::history::Action;
use crate::idempotency::CommandError;
use crate::rooms::domain::{RequestedRooms, Status, TimeRange, Title};
use crate::rooms::store::{self as bookings, Booking, Ctx};
use crate::rooms::{events, rules};

/// What to do when some dates are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnConflict {
    /// Any taken date refuses the whole series (the default).
    Fail,
    /// Book the free dates; list the taken ones.
    Skip,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSeries {
    pub title: Title,
    pub rooms: RequestedRooms,
    #[serde(flatten)]
    pub first: TimeRange,
    pub recurrence: Recurrence,
    pub on_conflict: OnConflict,
    pub organizer_name: Title,
}

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

/// `201` of `POST /api/series`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "SeriesCreated")]
pub struct Created {
    pub series: Series,
    pub created: Vec<Booking>,
    pub skipped: Vec<Taken>,
}

fn conflict(taken: Vec<Taken>) -> ApiError {
    ApiError::new(
        ErrorCode::SeriesConflict,
        format!(
            "이미 예약된 날짜가 {}개 있습니다. 나머지만 예약하려면 onConflict를 skip으로 보내 주세요.",
            taken.len()
        ),
    )
    .with_details(json!({ "conflicts": taken }))
}

/// For each range, the first live booking holding any of `rooms` then
/// (ranges given as parallel arrays).
async fn holders(
    conn: &mut Conn,
    rooms: &[String],
    starts: &[DateTime<Utc>],
    ends: &[DateTime<Utc>],
    except_series: Option<i64>,
) -> QueryResult<Vec<Taken>> {
    diesel::sql_query(
        "SELECT DISTINCT ON (o.ord) o.s AS starts_at, o.e AS ends_at, rr.reservation_id AS booking_id
           FROM unnest($2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY AS o(s, e, ord)
           JOIN reservation_room rr
             ON rr.room = ANY($1) AND rr.active AND tstzrange(rr.starts_at, rr.ends_at, '[)') && tstzrange(o.s, o.e, '[)')
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
struct Inserted {
    #[diesel(sql_type = Int8)]
    id: i64,
    #[diesel(sql_type = Timestamptz)]
    starts_at: DateTime<Utc>,
}

#[derive(QueryableByName)]
struct Claimed {
    #[diesel(sql_type = Int8)]
    reservation_id: i64,
}

/// Writes room copies for `(id, start, end)` rows in (time, room) order;
/// returns the ids that got every room.
async fn claim_all(
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

/// Creates a series and its occurrences; refuses it whole in `fail` mode
/// when any date is taken, books the free ones in `skip` mode.
pub async fn create(
    conn: &mut Conn,
    new: &NewSeries,
    tz: chrono_tz::Tz,
    ctx: &Ctx<'_>,
) -> Result<Created, CommandError> {
    let occurrences = new.recurrence.occurrences(&new.first, tz).map_err(CommandError::Invalid)?;
    new.first.ensure_not_past(ctx.now)?;
    let quota = rules::Quota::lock(conn, ctx).await?;
    let rooms = rules::resolve(conn, new.rooms.codes(), &new.first, ctx).await?;
    for o in &occurrences {
        o.ensure_at_most(rooms.max_duration_minutes()).map_err(CommandError::Invalid)?;
        rules::ensure_within_horizon(&rooms, o, ctx)?;
    }
    let codes = rooms.codes();
    let starts: Vec<_> = occurrences.iter().map(TimeRange::starts_at).collect();
    let ends: Vec<_> = occurrences.iter().map(TimeRange::ends_at).collect();
    let mut taken = holders(conn, &codes, &starts, &ends, None).await?;
    if !taken.is_empty() && new.on_conflict == OnConflict::Fail {
        return Err(conflict(taken).into());
    }
    let free: Vec<&TimeRange> =
        occurrences.iter().filter(|o| !taken.iter().any(|t| t.starts_at == o.starts_at())).collect();
    quota.ensure_room_for(conn, ctx, free.len() as i64, None).await?;
    let series: Series = diesel::insert_into(booking_series::table)
        .values((
            booking_series::title.eq(new.title.as_str()),
            booking_series::organizer_name.eq(new.organizer_name.as_str()),
            booking_series::organizer_digest.eq(ctx.actor.digest.as_str()),
            booking_series::organizer_staff_id.eq(ctx.actor.staff_id),
            booking_series::rooms.eq(&codes),
            booking_series::recurrence.eq(new.recurrence.as_str()),
            booking_series::starts_at.eq(new.first.starts_at()),
            booking_series::ends_at.eq(new.first.ends_at()),
            booking_series::timezone.eq(tz.name()),
            booking_series::created_at.eq(ctx.now),
            booking_series::updated_at.eq(ctx.now),
        ))
        .returning(Series::as_returning())
        .get_result(conn)
        .await?;
    let status = rules::initial_status(&rooms, ctx);
    let ids = insert_occurrences(conn, &series, &free, &rooms, status, ctx).await?;
    let rows: Vec<_> = ids.iter().map(|(id, r)| (*id, r.starts_at(), r.ends_at())).collect();
    let complete = claim_all(conn, &codes, &rows).await?;
    let raced: Vec<(i64, TimeRange)> = ids.iter().filter(|(id, _)| !complete.contains(id)).cloned().collect();
    if !raced.is_empty() {
        // Taken between the look and the write: the constraint decided.
        let raced_ids: Vec<i64> = raced.iter().map(|(id, _)| *id).collect();
        diesel::delete(reservation::table.filter(reservation::id.eq_any(&raced_ids))).execute(conn).await?;
        let (s, e): (Vec<_>, Vec<_>) = raced.iter().map(|(_, r)| (r.starts_at(), r.ends_at())).unzip();
        let lost = holders(conn, &codes, &s, &e, Some(series.id)).await?;
        if new.on_conflict == OnConflict::Fail {
            return Err(conflict(lost).into());
        }
        taken.extend(lost);
    }
    let created = bookings::find_many(conn, &complete).await?;
    events::created(conn, &created.iter().collect::<Vec<_>>(), ctx).await?;
    taken.sort_by_key(|t| t.starts_at);
    Ok(Created { series, created, skipped: taken })
}

/// Inserts the occurrences' parent rows (one statement); returns each id
/// with its range.
async fn insert_occurrences(
    conn: &mut Conn,
    series: &Series,
    ranges: &[&TimeRange],
    rooms: &LinkedRooms,
    status: Status,
    ctx: &Ctx<'_>,
) -> QueryResult<Vec<(i64, TimeRange)>> {
    if ranges.is_empty() {
        return Ok(Vec::new());
    }
    let (starts, ends): (Vec<_>, Vec<_>) = ranges.iter().map(|r| (r.starts_at(), r.ends_at())).unzip();
    let inserted: Vec<Inserted> = diesel::sql_query(
        "INSERT INTO reservation (title, organizer_name, organizer_digest, organizer_staff_id, starts_at, ends_at,
                                  status, check_in_required, series_id, occurrence_start, created_at, updated_at)
         SELECT $1, $2, $3, $4, o.s, o.e, $5, $6, $7, o.s, $8, $8
           FROM unnest($9::timestamptz[], $10::timestamptz[]) WITH ORDINALITY AS o(s, e, ord)
          ORDER BY o.ord
         RETURNING id, starts_at",
    )
    .bind::<Text, _>(&series.title)
    .bind::<Text, _>(&series.organizer)
    .bind::<Text, _>(ctx.actor.digest.as_str())
    .bind::<Nullable<Int8>, _>(ctx.actor.staff_id)
    .bind::<Text, _>(status.as_str())
    .bind::<diesel::sql_types::Bool, _>(rooms.check_in_required())
    .bind::<Int8, _>(series.id)
    .bind::<Timestamptz, _>(ctx.now)
    .bind::<Array<Timestamptz>, _>(&starts)
    .bind::<Array<Timestamptz>, _>(&ends)
    .cached()
    .load(conn)
    .await?;
    Ok(inserted
        .into_iter()
        .filter_map(|i| ranges.iter().find(|r| r.starts_at() == i.starts_at).map(|r| (i.id, **r)))
        .collect())
}

pub async fn find(conn: &mut Conn, id: i64) -> QueryResult<Option<Series>> {
    booking_series::table.find(id).select(Series::as_select()).first(conn).await.optional()
}

/// Every occurrence of a series, cancelled ones included, by start.
pub async fn occurrences(conn: &mut Conn, id: i64) -> QueryResult<Vec<Booking>> {
    diesel::sql_query(format!(
        "{} WHERE r.series_id = $1 GROUP BY r.id ORDER BY r.starts_at, r.id",
        bookings::BOOKING_COLUMNS
    ))
    .bind::<Int8, _>(id)
    .cached()
    .load(conn)
    .await
}

/// Locks a series the actor may change.
async fn lock(conn: &mut Conn, id: i64, ctx: &Ctx<'_>) -> Result<Series, CommandError> {
    let series: Series = booking_series::table
        .find(id)
        .select(Series::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| ApiError::not_found("series"))?;
    if !ctx.actor.may_change(&series.organizer_digest) {
        return Err(ApiError::new(ErrorCode::NotOrganizer, "예약한 사람(또는 관리자)만 바꿀 수 있습니다.").into());
    }
    Ok(series)
}

/// Live occurrences starting at or after `from`, locked in id order;
/// `rule_only` keeps only those that were never changed on their own.
async fn live_from(conn: &mut Conn, series_id: i64, from: DateTime<Utc>, rule_only: bool) -> QueryResult<Vec<i64>> {
    let ids: Vec<(i64, bool)> = reservation::table
        .filter(reservation::series_id.eq(series_id))
        .filter(reservation::starts_at.ge(from))
        .filter(reservation::status.eq_any([Status::Confirmed.as_str(), Status::Pending.as_str()]))
        .order(reservation::id)
        .select((reservation::id, reservation::is_exception))
        .for_update()
        .load(conn)
        .await?;
    Ok(ids.into_iter().filter(|(_, exception)| !(rule_only && *exception)).map(|(id, _)| id).collect())
}

/// `PATCH /api/series/{id}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeriesChange {
    pub title: Option<Title>,
    pub start_time: Option<NaiveTime>,
    pub end_time: Option<NaiveTime>,
    pub from: Option<DateTime<Utc>>,
}

/// Changes the title and/or local times of every future occurrence that is
/// not an exception; all or nothing (`SERIES_CONFLICT`).
pub async fn change(
    conn: &mut Conn,
    id: i64,
    change: &SeriesChange,
    tz: chrono_tz::Tz,
    ctx: &Ctx<'_>,
) -> Result<(Series, Vec<Booking>), CommandError> {
    let series = lock(conn, id, ctx).await?;
    let from = change.from.map_or(ctx.now, |f| f.max(ctx.now));
    let ids = live_from(conn, id, from, true).await?;
    let before = bookings::find_many(conn, &ids).await?;
    let retime = change.start_time.is_some() || change.end_time.is_some();
    let title = change.title.as_ref().map_or(series.title.clone(), |t| t.as_str().to_owned());
    let mut moved: Vec<(i64, TimeRange)> = Vec::with_capacity(before.len());
    for b in &before {
        let range = if retime { retimed(b.starts_at, b.ends_at, change, tz)? } else { b.time() };
        range.ensure_not_past(ctx.now)?;
        moved.push((b.id, range));
    }
    if retime && !moved.is_empty() {
        let rooms = rules::resolve(conn, &series.rooms, &moved[0].1, ctx).await?;
        for (_, r) in &moved {
            r.ensure_at_most(rooms.max_duration_minutes()).map_err(CommandError::Invalid)?;
            rules::ensure_within_horizon(&rooms, r, ctx)?;
        }
        diesel::delete(crate::db::schema::reservation_room::table)
            .filter(crate::db::schema::reservation_room::reservation_id.eq_any(&ids))
            .execute(conn)
            .await?;
        let rows: Vec<_> = moved.iter().map(|(id, r)| (*id, r.starts_at(), r.ends_at())).collect();
        let complete = claim_all(conn, &series.rooms, &rows).await?;
        let lost: Vec<&(i64, TimeRange)> = moved.iter().filter(|(id, _)| !complete.contains(id)).collect();
        if !lost.is_empty() {
            let (s, e): (Vec<_>, Vec<_>) = lost.iter().map(|(_, r)| (r.starts_at(), r.ends_at())).unzip();
            // The constraint refused them; name who holds each date.
            let taken = holders(conn, &series.rooms, &s, &e, Some(id)).await?;
            return Err(conflict(taken).into());
        }
    }
    for (bid, r) in &moved {
        let row = reservation::table.find(bid);
        if retime {
            diesel::update(row)
                .set((
                    reservation::title.eq(&title),
                    reservation::starts_at.eq(r.starts_at()),
                    reservation::ends_at.eq(r.ends_at()),
                    reservation::checked_in_at.eq(None::<DateTime<Utc>>),
                    reservation::version.eq(reservation::version + 1),
                    reservation::updated_at.eq(ctx.now),
                ))
                .execute(conn)
                .await?;
        } else {
            diesel::update(row)
                .set((
                    reservation::title.eq(&title),
                    reservation::version.eq(reservation::version + 1),
                    reservation::updated_at.eq(ctx.now),
                ))
                .execute(conn)
                .await?;
        }
    }
    let after = bookings::find_many(conn, &ids).await?;
    let pairs: Vec<(&Booking, &Booking)> =
        after.iter().filter_map(|a| before.iter().find(|b| b.id == a.id).map(|b| (b, a))).collect();
    let action = if retime { Action::Moved } else { Action::Retitled };
    events::changed_many(conn, &pairs, action, ctx).await?;
    // The series row keeps describing the pattern: its first occurrence
    // with the new local times.
    let pattern = if retime {
        retimed(series.starts_at, series.ends_at, change, tz)?
    } else {
        TimeRange::from_stored(series.starts_at, series.ends_at)
    };
    let (first_start, first_end) = (pattern.starts_at(), pattern.ends_at());
    let series: Series = diesel::update(booking_series::table.find(id))
        .set((
            booking_series::title.eq(&title),
            booking_series::starts_at.eq(first_start),
            booking_series::ends_at.eq(first_end),
            booking_series::version.eq(booking_series::version + 1),
            booking_series::updated_at.eq(ctx.now),
        ))
        .returning(Series::as_returning())
        .get_result(conn)
        .await?;
    Ok((series, after))
}

/// The occurrence's own date with the new local start and/or end time.
fn retimed(
    starts_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
    change: &SeriesChange,
    tz: chrono_tz::Tz,
) -> Result<TimeRange, ApiError> {
    let (s, e) = (starts_at.with_timezone(&tz), ends_at.with_timezone(&tz));
    let start = change.start_time.unwrap_or(s.time());
    let end = change.end_time.unwrap_or(e.time());
    let date = s.date_naive();
    let at = |t: NaiveTime| {
        use chrono::TimeZone;
        tz.from_local_datetime(&date.and_time(t))
            .earliest()
            .map(|t| t.with_timezone(&Utc))
            .ok_or_else(|| ApiError::malformed("startTime", "does not exist on that day"))
    };
    let (start, mut end_at) = (at(start)?, at(end)?);
    if end == NaiveTime::MIN && start > at(NaiveTime::MIN)? {
        end_at += chrono::Duration::days(1);
    }
    TimeRange::new(start, end_at).map_err(|e| e.with_details(json!({ "field": "endTime" })))
}

/// Cancels every live occurrence from `from` (or from now) on, exceptions
/// included; returns the cancelled ones.
pub async fn cancel(
    conn: &mut Conn,
    id: i64,
    from: Option<DateTime<Utc>>,
    ctx: &Ctx<'_>,
) -> Result<(Series, Vec<Booking>), CommandError> {
    let series = lock(conn, id, ctx).await?;
    let from = from.map_or(ctx.now, |f| f.max(ctx.now));
    let ids = live_from(conn, id, from, false).await?;
    let cancelled = bookings::cancel_many(conn, &ids, ctx, false).await?;
    Ok((series, cancelled))
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
    diesel::sql_query(
        "SELECT s.id, s.title, s.recurrence, s.rooms, count(r.id) AS ahead, min(r.starts_at) AS next_start,
                (array_agg(r.id ORDER BY r.starts_at))[1] AS next_id
           FROM booking_series s
           JOIN reservation r ON r.series_id = s.id AND r.ends_at > $2 AND r.status IN ('CONFIRMED', 'PENDING')
          WHERE s.organizer_digest = $1
          GROUP BY s.id
          ORDER BY min(r.starts_at), s.id",
    )
    .bind::<Text, _>(digest)
    .bind::<Timestamptz, _>(now)
    .cached()
    .load(conn)
    .await
}
