//! `series.create`: a series and its occurrences in one transaction,
//! refused whole in `fail` mode when any date is taken, the free dates
//! booked in `skip` mode (SPEC §9).

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{claim_all, conflict, holders, Series, Taken};
use crate::catalogue::domain::LinkedRooms;
use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::schema::{booking_series, reservation};
use crate::db::Conn;
use crate::rooms::booking::{find_many, Booking};
use crate::rooms::domain::{RequestedRooms, Status, TimeRange, Title};
use crate::rooms::{events, rules};
use crate::series::domain::Recurrence;

pub static CREATE: Operation =
    Operation::new("series.create", &[Role::Staff, Role::Admin, Role::Integration]).creates();

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
pub struct CreateSeries {
    pub title: Title,
    pub rooms: RequestedRooms,
    #[serde(flatten)]
    pub first: TimeRange,
    pub recurrence: Recurrence,
    pub on_conflict: OnConflict,
    pub organizer_name: Title,
    /// SPEC §26: every occurrence private.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub private: bool,
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

impl Command for CreateSeries {
    type Output = Created;

    fn operation(&self) -> &'static Operation {
        &CREATE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Created, CommandError> {
        create(conn, self, ctx).await
    }
}

/// Creates a series and its occurrences; refuses it whole in `fail` mode
/// when any date is taken, books the free ones in `skip` mode.
async fn create(conn: &mut Conn, new: &CreateSeries, ctx: &Ctx<'_>) -> Result<Created, CommandError> {
    new.first.ensure_not_past(ctx.now)?;
    let quota = rules::Quota::lock(conn, ctx).await?;
    let rooms = rules::resolve(conn, new.rooms.codes(), &new.first, ctx).await?;
    // Occurrences repeat at the same wall-clock time of the rooms' area (SPEC §24).
    let tz = rooms.area().zone;
    let occurrences = new.recurrence.occurrences(&new.first, tz).map_err(CommandError::Invalid)?;
    for o in &occurrences {
        o.ensure_at_most(rooms.max_duration_minutes()).map_err(CommandError::Invalid)?;
        rules::ensure_within_horizon(&rooms, o, ctx)?;
    }
    rules::ensure_open(conn, &rooms, &occurrences, ctx).await?;
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
            booking_series::organizer_digest.eq(ctx.principal.digest().as_str()),
            booking_series::organizer_staff_id.eq(ctx.principal.staff_id()),
            booking_series::booked_by.eq(ctx.principal.booked_by()),
            booking_series::private.eq(new.private),
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
    let created = find_many(conn, &complete).await?;
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
    let rows = crate::rooms::store::NewRows {
        title: &series.title,
        organizer_name: &series.organizer,
        status,
        private: series.private,
        check_in_required: rooms.check_in_required(),
        series: Some(series.id),
    };
    let owned: Vec<TimeRange> = ranges.iter().map(|r| **r).collect();
    let inserted = crate::rooms::store::insert_rows(conn, &rows, &owned, ctx).await?;
    Ok(inserted
        .into_iter()
        .filter_map(|(id, starts_at)| ranges.iter().find(|r| r.starts_at() == starts_at).map(|r| (id, **r)))
        .collect())
}
