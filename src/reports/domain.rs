//! What a report is about (a [`Period`] of local dates) and what it holds.

use chrono::{Duration, NaiveDate};
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::QueryableByName;

use crate::error::ApiError;

/// Longest report: a leap year.
pub const MAX_DAYS: i64 = 366;
/// The range shown when none is asked for: the last four weeks.
pub const DEFAULT_DAYS: i64 = 28;

/// A report's dates, both ends included; at most [`MAX_DAYS`] long, `from`
/// never after `to`. They are local dates of each area: the same dates
/// cover different instants in areas of different time zones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    from: NaiveDate,
    to: NaiveDate,
}

impl Period {
    /// `from`/`to` as `YYYY-MM-DD`, either optional: none gives the four
    /// weeks ending `today`; one alone gives the four weeks starting or
    /// ending there.
    pub fn parse(from: Option<&str>, to: Option<&str>, today: NaiveDate) -> Result<Period, RangeError> {
        let span = Duration::days(DEFAULT_DAYS - 1);
        let (from, to) = match (given(from), given(to)) {
            (None, None) => (today - span, today),
            (Some(f), None) => {
                let f = date("from", f)?;
                (f, f.checked_add_signed(span).unwrap_or(f))
            }
            (None, Some(t)) => {
                let t = date("to", t)?;
                (t.checked_sub_signed(span).unwrap_or(t), t)
            }
            (Some(f), Some(t)) => (date("from", f)?, date("to", t)?),
        };
        if from > to {
            return Err(RangeError::Reversed);
        }
        if (to - from).num_days() + 1 > MAX_DAYS {
            return Err(RangeError::TooLong);
        }
        Ok(Period { from, to })
    }

    pub fn from(&self) -> NaiveDate {
        self.from
    }

    pub fn to(&self) -> NaiveDate {
        self.to
    }

    /// Part of a download's file name: `2026-11-01_2026-11-30`.
    pub fn slug(&self) -> String {
        format!("{}_{}", self.from, self.to)
    }
}

/// A parameter that was sent with something in it.
fn given(v: Option<&str>) -> Option<&str> {
    v.map(str::trim).filter(|s| !s.is_empty())
}

/// Years 1–9999 only, so every date is one PostgreSQL and spreadsheets read.
fn date(field: &'static str, raw: &str) -> Result<NaiveDate, RangeError> {
    crate::day::parse(raw).ok_or(RangeError::BadDate(field))
}

/// Why a range was refused; the API answers 400 `MALFORMED_REQUEST` naming
/// the field, the page says it in Korean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeError {
    /// `from` or `to` is not a `YYYY-MM-DD` date.
    BadDate(&'static str),
    /// `to` is before `from`.
    Reversed,
    /// More than [`MAX_DAYS`] days.
    TooLong,
}

impl RangeError {
    /// What the report page says, in its language.
    pub fn message(self, i18n: &crate::i18n::I18n) -> String {
        match self {
            RangeError::BadDate("from") => i18n.t("report-refused-from"),
            RangeError::BadDate(_) => i18n.t("report-refused-to"),
            RangeError::Reversed => i18n.t("report-refused-reversed"),
            RangeError::TooLong => i18n.t1("report-refused-too-long", "days", MAX_DAYS),
        }
    }
}

impl From<RangeError> for ApiError {
    fn from(e: RangeError) -> Self {
        match e {
            RangeError::BadDate(field) => ApiError::malformed(field, "must be a date like 2026-11-30"),
            RangeError::Reversed => ApiError::malformed("to", "must not be before `from`"),
            RangeError::TooLong => ApiError::malformed("to", format!("a report covers at most {MAX_DAYS} days")),
        }
    }
}

/// One active room over a period. A linked booking counts once in every
/// room it occupies.
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct RoomUse {
    #[diesel(sql_type = Text)]
    pub code: String,
    #[diesel(sql_type = Text)]
    pub name: String,
    #[diesel(sql_type = Text)]
    pub area: String,
    /// Confirmed and released (to its shortened end) time inside the period.
    #[diesel(sql_type = BigInt)]
    pub booked_seconds: i64,
    /// The part of `booked_seconds` inside its area's working hours.
    #[diesel(sql_type = BigInt)]
    pub working_booked_seconds: i64,
    /// Working hours of the period in its area: the area's weekday hours
    /// in its zone, its holidays left out.
    #[diesel(sql_type = BigInt)]
    pub working_seconds: i64,
    /// Confirmed or released bookings starting in the period.
    #[diesel(sql_type = BigInt)]
    pub bookings: i64,
    /// Cancelled bookings that were to start in the period.
    #[diesel(sql_type = BigInt)]
    pub cancellations: i64,
    /// Released bookings (no-shows) starting in the period; also in `bookings`.
    #[diesel(sql_type = BigInt)]
    pub releases: i64,
    /// Time given back by no-show releases inside the period (SPEC §25).
    #[diesel(sql_type = BigInt)]
    pub released_seconds: i64,
    /// The part of it booked again by bookings made after the release.
    #[diesel(sql_type = BigInt)]
    pub reused_seconds: i64,
}

impl RoomUse {
    /// Share of the released time booked again, in percent.
    pub fn reused_percent(&self) -> f64 {
        percent(self.reused_seconds, self.released_seconds)
    }

    /// Share of the working hours booked, in percent (0 without working hours).
    pub fn share_percent(&self) -> f64 {
        percent(self.working_booked_seconds, self.working_seconds)
    }
}

pub fn percent(part: i64, whole: i64) -> f64 {
    if whole > 0 {
        part as f64 * 100.0 / whole as f64
    } else {
        0.0
    }
}

/// Hours with two decimals, as the CSV writes them.
pub fn hours(seconds: i64) -> String {
    format!("{:.2}", seconds as f64 / 3600.0)
}

/// One area of a report: its zone and the working time of the period there
/// (the same for each of its rooms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AreaHours {
    pub code: String,
    pub time_zone: String,
    pub working_seconds: i64,
}

/// The utilisation report: one line per active room, area and position
/// order; every area reported on (all, or the one asked for), with or
/// without active rooms.
#[derive(Debug, Clone)]
pub struct Utilisation {
    pub period: Period,
    /// The area asked for (`?area=`), or none: every area.
    pub area: Option<String>,
    pub areas: Vec<AreaHours>,
    pub rooms: Vec<RoomUse>,
}

impl Utilisation {
    /// Sums over every room (room-hours; a linked booking counts per room).
    pub fn total(&self) -> RoomUse {
        let sum = |f: fn(&RoomUse) -> i64| self.rooms.iter().map(f).sum::<i64>();
        RoomUse {
            code: String::new(),
            name: String::new(),
            area: String::new(),
            booked_seconds: sum(|r| r.booked_seconds),
            working_booked_seconds: sum(|r| r.working_booked_seconds),
            working_seconds: sum(|r| r.working_seconds),
            bookings: sum(|r| r.bookings),
            cancellations: sum(|r| r.cancellations),
            releases: sum(|r| r.releases),
            released_seconds: sum(|r| r.released_seconds),
            reused_seconds: sum(|r| r.reused_seconds),
        }
    }
}

/// One booking of the bookings report; times local, as text.
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct BookingLine {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    #[diesel(sql_type = Text)]
    pub starts_at: String,
    #[diesel(sql_type = Text)]
    pub ends_at: String,
    #[diesel(sql_type = Text)]
    pub rooms: String,
    #[diesel(sql_type = Text)]
    pub title: String,
    #[diesel(sql_type = Text)]
    pub organizer: String,
    #[diesel(sql_type = Text)]
    pub status: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub series_id: Option<i64>,
    #[diesel(sql_type = Text)]
    pub created_at: String,
    #[diesel(sql_type = Nullable<Text>)]
    pub checked_in_at: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub released_at: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub cancelled_at: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn field(e: RangeError) -> String {
        ApiError::from(e).body()["details"]["field"].as_str().unwrap().to_owned()
    }

    #[test]
    fn defaults_to_the_last_four_weeks() {
        let p = Period::parse(None, Some(""), d("2026-12-01")).unwrap();
        assert_eq!((p.from(), p.to()), (d("2026-11-04"), d("2026-12-01")));
        let p = Period::parse(Some("2026-01-01"), None, d("2026-12-01")).unwrap();
        assert_eq!((p.from(), p.to()), (d("2026-01-01"), d("2026-01-28")));
    }

    #[test]
    fn refuses_bad_dates_reversed_and_long_ranges_naming_the_field() {
        let today = d("2026-12-01");
        assert_eq!(field(Period::parse(Some("2026-13-01"), None, today).unwrap_err()), "from");
        assert_eq!(field(Period::parse(None, Some("2026-1-1"), today).unwrap_err()), "to");
        assert_eq!(field(Period::parse(Some("+12026-01-01"), None, today).unwrap_err()), "from");
        assert_eq!(field(Period::parse(Some("2026-02-02"), Some("2026-02-01"), today).unwrap_err()), "to");
        assert!(Period::parse(Some("2024-01-01"), Some("2024-12-31"), today).is_ok(), "366 days");
        assert_eq!(field(Period::parse(Some("2025-01-01"), Some("2026-01-02"), today).unwrap_err()), "to");
    }
}
