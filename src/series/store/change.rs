//! `series.update`: a new title and/or local times for every future
//! occurrence that is not an exception; all or nothing (SPEC §9). A new time
//! in a room that needs approval needs approval again, occurrence by
//! occurrence, exactly as `booking.move` decides it (SPEC §20).

use chrono::{DateTime, NaiveTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde::Serialize;
use serde_json::json;

use super::{claim_all, conflict, holders, live_from, lock, Series};
use crate::command::{Command, CommandError, Ctx, On, Operation, Role};
use crate::db::schema::{booking_series, reservation};
use crate::db::Conn;
use crate::error::ApiError;
use crate::history::Action;
use crate::rooms::booking::{find_many, Booking};
use crate::rooms::domain::{TimeRange, Title};
use crate::rooms::{events, rules};
use crate::series::WithOccurrences;

pub static UPDATE: Operation = Operation::new("series.update", &[Role::Staff, Role::Admin, Role::Integration]);

/// What a `PATCH /api/series/{id}` changes.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeriesChange {
    pub title: Option<Title>,
    pub start_time: Option<NaiveTime>,
    pub end_time: Option<NaiveTime>,
    pub from: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone)]
pub struct ChangeSeries {
    pub id: i64,
    pub change: SeriesChange,
}

impl Command for ChangeSeries {
    type Output = WithOccurrences;

    fn operation(&self) -> &'static Operation {
        &UPDATE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::to_value(On { id: self.id, change: &self.change }).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<WithOccurrences, CommandError> {
        let (series, occurrences) = change(conn, self.id, &self.change, ctx).await?;
        Ok(WithOccurrences { series, occurrences })
    }
}

/// Changes the title and/or local times of every future occurrence that is
/// not an exception; all or nothing (`SERIES_CONFLICT`).
async fn change(
    conn: &mut Conn,
    id: i64,
    change: &SeriesChange,
    ctx: &Ctx<'_>,
) -> Result<(Series, Vec<Booking>), CommandError> {
    let series = lock(conn, id, ctx).await?;
    // The zone the series was made in: its occurrences' wall-clock times.
    let tz = series.timezone.parse().unwrap_or(ctx.policy.timezone);
    let from = change.from.map_or(ctx.now, |f| f.max(ctx.now));
    let ids = live_from(conn, id, from, true).await?;
    let before = find_many(conn, &ids).await?;
    let retime = change.start_time.is_some() || change.end_time.is_some();
    let title = change.title.as_ref().map_or(series.title.clone(), |t| t.as_str().to_owned());
    let mut moved: Vec<(i64, TimeRange)> = Vec::with_capacity(before.len());
    // The rooms, for the rule of a booking that moves (rules::after_move).
    let mut linked = None;
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
        let ranges: Vec<TimeRange> = moved.iter().map(|(_, r)| *r).collect();
        rules::ensure_open(conn, &rooms, &ranges, ctx).await?;
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
        linked = Some(rooms);
    }
    for (b, (bid, r)) in before.iter().zip(&moved) {
        let row = reservation::table.find(bid);
        if let Some(rooms) = &linked {
            let (status, checked_in_at) = rules::after_move(b.status, b.checked_in_at, *r != b.time(), rooms, ctx);
            diesel::update(row)
                .set((
                    reservation::title.eq(&title),
                    reservation::status.eq(status.as_str()),
                    reservation::starts_at.eq(r.starts_at()),
                    reservation::ends_at.eq(r.ends_at()),
                    reservation::checked_in_at.eq(checked_in_at),
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
    let after = find_many(conn, &ids).await?;
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
