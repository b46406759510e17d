//! Desks booked by day or half day (SPEC §28): a `unit` of a date becomes
//! the instants of its area's working day, or of its morning or afternoon
//! split at 13:00 local (at the working day's middle, on the hour, when the
//! day does not contain 13:00). A desk booking is always one such unit, so
//! the database's `reservation_room_one_desk_per_person` — overlapping
//! ranges of one organizer's desk copies — is one desk per half day.

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use diesel::sql_types::{Bool, Date, Int8};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use serde::Serialize;

use super::domain::TimeRange;
use crate::catalogue::domain::LinkedRooms;
use crate::catalogue::hours::WorkingHours;
use crate::command::{CommandError, Ctx};
use crate::db::cached::CacheExt;
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};

/// A whole working day, or its first or second half.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Day,
    Am,
    Pm,
}

impl Unit {
    pub const ALL: [Unit; 3] = [Unit::Day, Unit::Am, Unit::Pm];

    pub fn parse(field: &str, raw: &str) -> Result<Self, ApiError> {
        match raw.trim() {
            "day" => Ok(Unit::Day),
            "am" => Ok(Unit::Am),
            "pm" => Ok(Unit::Pm),
            _ => Err(ApiError::malformed(field, "must be `day`, `am` or `pm`")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Day => "day",
            Unit::Am => "am",
            Unit::Pm => "pm",
        }
    }
}

/// A desk booking as asked for: a date (the area's) and a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DeskDay {
    pub date: NaiveDate,
    pub unit: Unit,
}

/// When a booking is: the instants given, or a desk's unit of a date,
/// turned into instants inside the transaction from its area's hours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum When {
    Range(TimeRange),
    Desk(DeskDay),
}

/// Where a working day splits into morning and afternoon: 13:00 when the
/// day contains it, else its middle on the hour (the exact middle when no
/// hour lies strictly inside).
pub fn split(open: NaiveTime, close: NaiveTime) -> NaiveTime {
    let one = NaiveTime::from_hms_opt(13, 0, 0).unwrap_or(open);
    if open < one && one < close {
        return one;
    }
    let middle = open + (close - open) / 2;
    let floor = middle.with_minute(0).unwrap_or(middle);
    let ceil = floor + Duration::hours(1);
    [floor, ceil].into_iter().find(|t| open < *t && *t < close).unwrap_or(middle)
}

fn instant(zone: Tz, at: NaiveDateTime) -> Option<DateTime<Utc>> {
    // A wall-clock time skipped by daylight saving time reads as the next
    // one that exists (an hour later).
    zone.from_local_datetime(&at)
        .earliest()
        .or_else(|| zone.from_local_datetime(&(at + Duration::hours(1))).earliest())
        .map(|t| t.with_timezone(&Utc))
}

/// The instants of `unit` on `date` in an area with `hours` in `zone`; a
/// date without working hours is a 400 naming `date`.
pub fn span(hours: &WorkingHours, zone: Tz, date: NaiveDate, unit: Unit) -> Result<TimeRange, ApiError> {
    let Some((open, close)) = hours.on(date.weekday()) else {
        return Err(ApiError::malformed("date", "the area has no working hours that day"));
    };
    let mid = split(open, close);
    let (from, to) = match unit {
        Unit::Day => (open, close),
        Unit::Am => (open, mid),
        Unit::Pm => (mid, close),
    };
    let from = instant(zone, date.and_time(from));
    let to = instant(zone, date.and_time(to));
    match (from, to) {
        (Some(from), Some(to)) => TimeRange::new(from, to),
        _ => Err(ApiError::malformed("date", "the area has no working hours that day")),
    }
}

fn unit_required() -> ApiError {
    ApiError::malformed("unit", "a desk is booked by date and unit: day, am or pm")
}

/// The range of a booking of `rooms`: a unit only for a desk (a 400 naming
/// `unit` for a room); for a desk, instants only when they are one of its
/// units (so every desk booking is a day or a half, and a move keeps it so).
pub fn range_of(rooms: &LinkedRooms, when: &When) -> Result<TimeRange, ApiError> {
    let desk = rooms.is_desk();
    let area = rooms.area();
    match when {
        When::Desk(_) if !desk => Err(ApiError::malformed("unit", "only a desk is booked by unit")),
        When::Desk(d) => span(&area.hours, area.zone, d.date, d.unit),
        When::Range(r) if !desk => Ok(*r),
        When::Range(r) => {
            let date = r.starts_at().with_timezone(&area.zone).date_naive();
            Unit::ALL
                .into_iter()
                .filter_map(|u| span(&area.hours, area.zone, date, u).ok())
                .find(|s| s == r)
                .ok_or_else(unit_required)
        }
    }
}

#[derive(QueryableByName)]
struct Away {
    #[diesel(sql_type = Bool)]
    away: bool,
}

/// An assigned desk is its holder's (SPEC §28): anyone else may book it
/// only on a day its holder is away, read in the booking's transaction;
/// else a stored 409 `DESK_ASSIGNED`.
pub async fn ensure_may_take(
    conn: &mut Conn,
    rooms: &LinkedRooms,
    range: &TimeRange,
    ctx: &Ctx<'_>,
) -> Result<(), CommandError> {
    let Some(holder) = rooms.assigned_to() else { return Ok(()) };
    if ctx.principal.staff_id() == Some(holder) {
        return Ok(());
    }
    let date = range.starts_at().with_timezone(&rooms.area().zone).date_naive();
    let found: Away = diesel::sql_query(
        "SELECT EXISTS (SELECT 1 FROM staff_away WHERE staff_id = $1 AND $2 BETWEEN from_date AND to_date) AS away",
    )
    .bind::<Int8, _>(holder)
    .bind::<Date, _>(date)
    .cached()
    .get_result(conn)
    .await?;
    if found.away {
        return Ok(());
    }
    Err(ApiError::worded(ErrorCode::DeskAssigned, serde_json::json!({ "field": "rooms", "date": date.to_string() }))
        .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(h: u32, m: u32) -> NaiveTime {
        NaiveTime::from_hms_opt(h, m, 0).unwrap()
    }

    #[test]
    fn a_day_splits_at_one_or_at_its_middle_on_the_hour() {
        assert_eq!(split(t(9, 0), t(18, 0)), t(13, 0));
        assert_eq!(split(t(13, 0), t(22, 0)), t(17, 0));
        assert_eq!(split(t(6, 0), t(12, 0)), t(9, 0));
        assert_eq!(split(t(6, 0), t(13, 0)), t(9, 0));
        assert_eq!(split(t(9, 0), t(9, 40)), t(9, 20));
    }

    #[test]
    fn units_are_the_areas_wall_clock_in_its_zone() {
        let seoul = chrono_tz::Asia::Seoul;
        let monday = NaiveDate::from_ymd_opt(2027, 3, 15).unwrap();
        let hours = WorkingHours::default();
        let am = span(&hours, seoul, monday, Unit::Am).unwrap();
        assert_eq!(am.starts_at().to_rfc3339(), "2027-03-15T00:00:00+00:00");
        assert_eq!(am.ends_at().to_rfc3339(), "2027-03-15T04:00:00+00:00");
        let day = span(&hours, seoul, monday, Unit::Day).unwrap();
        assert_eq!(day.minutes(), 540);
        let sunday = NaiveDate::from_ymd_opt(2027, 3, 14).unwrap();
        assert_eq!(span(&hours, seoul, sunday, Unit::Pm).unwrap_err().details["field"], "date");
        assert_eq!(Unit::parse("unit", "night").unwrap_err().details["field"], "unit");
    }
}
