//! Booking rules of SPEC §2 as types that cannot hold invalid values. No I/O.

use chrono::{DateTime, Duration, DurationRound, Timelike, Utc};
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorCode};

/// The rooms a request names: at least one, each once, sorted by code so
/// that the same set always makes the same fingerprint. Whether they exist
/// and link is decided inside the booking's transaction, against the
/// catalogue as PostgreSQL holds it then (`catalogue::domain::LinkedRooms`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequestedRooms(Vec<String>);

impl RequestedRooms {
    pub fn parse<S: AsRef<str>>(codes: &[S]) -> Result<Self, ApiError> {
        if codes.is_empty() {
            return Err(ApiError::malformed("rooms", "name at least one room"));
        }
        if codes.len() > 64 {
            return Err(ApiError::malformed("rooms", "name at most 64 rooms"));
        }
        let mut picked: Vec<String> = Vec::with_capacity(codes.len());
        for code in codes {
            let code = code.as_ref();
            if picked.iter().any(|c| c == code) {
                return Err(ApiError::malformed("rooms", format!("room {code} is named twice")));
            }
            picked.push(code.to_owned());
        }
        picked.sort();
        Ok(RequestedRooms(picked))
    }

    pub fn codes(&self) -> &[String] {
        &self.0
    }
}

/// The longest booking any room may allow; each room's own
/// `maxDurationMinutes` decides inside the transaction.
pub const MAX_LENGTH: Duration = Duration::minutes(crate::catalogue::domain::MAX_DURATION_LIMIT as i64);

/// Where a booking is in its life (SPEC §11, §12).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    diesel::deserialize::FromSqlRow,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Holds its time.
    Confirmed,
    /// Waits for an admin's approval; holds its time meanwhile.
    Pending,
    Cancelled,
    /// Refused by an admin; its time is free.
    Rejected,
    /// Nobody checked in: shortened to the release time by the sweeper.
    Released,
}

/// The statuses that hold a room's time (SPEC §2, §12): what overlaps,
/// quotas, availability and calendars count as booked. In SQL it is
/// [`live_statuses!`](crate::live_statuses); the partial indexes and the
/// `EXCLUDE` constraint's predicate in the migrations say the same.
#[macro_export]
macro_rules! live_statuses {
    () => {
        "('CONFIRMED', 'PENDING')"
    };
}

/// The statuses whose time was taken: the live ones, and bookings released
/// as no-shows (SPEC §11) for the time they held. Pages show them; copies
/// of them are `active`.
#[macro_export]
macro_rules! occupied_statuses {
    () => {
        "('CONFIRMED', 'PENDING', 'RELEASED')"
    };
}

impl Status {
    /// [`live_statuses!`](crate::live_statuses) as values.
    pub const LIVE: [Status; 2] = [Status::Confirmed, Status::Pending];
    /// [`occupied_statuses!`](crate::occupied_statuses) as values.
    pub const OCCUPIED: [Status; 3] = [Status::Confirmed, Status::Pending, Status::Released];

    /// [`Status::LIVE`] as the texts stored in `reservation.status`.
    pub fn live_texts() -> [&'static str; 2] {
        Status::LIVE.map(Status::as_str)
    }

    /// Whether a booking of this status holds its rooms' time.
    pub fn is_live(self) -> bool {
        Status::LIVE.contains(&self)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Confirmed => "CONFIRMED",
            Status::Pending => "PENDING",
            Status::Cancelled => "CANCELLED",
            Status::Rejected => "REJECTED",
            Status::Released => "RELEASED",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        [Status::Confirmed, Status::Pending, Status::Cancelled, Status::Rejected, Status::Released]
            .into_iter()
            .find(|x| x.as_str() == s)
    }
}

impl diesel::deserialize::FromSql<diesel::sql_types::Text, diesel::pg::Pg> for Status {
    fn from_sql(bytes: diesel::pg::PgValue<'_>) -> diesel::deserialize::Result<Self> {
        let text = <String as diesel::deserialize::FromSql<diesel::sql_types::Text, diesel::pg::Pg>>::from_sql(bytes)?;
        Status::parse(&text).ok_or_else(|| format!("unknown booking status {text}").into())
    }
}

/// `[starts_at, ends_at)` on whole minutes, ends after starts, within the
/// maximum length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeRange {
    starts_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
}

impl TimeRange {
    pub fn new(starts_at: DateTime<Utc>, ends_at: DateTime<Utc>) -> Result<Self, ApiError> {
        for (field, t) in [("startsAt", starts_at), ("endsAt", ends_at)] {
            if t.second() != 0 || t.nanosecond() != 0 {
                return Err(ApiError::worded(ErrorCode::TimeNotMinuteAligned, serde_json::json!({ "field": field })));
            }
        }
        if ends_at <= starts_at {
            return Err(ApiError::worded(ErrorCode::InvalidTimeRange, serde_json::json!({ "field": "endsAt" })));
        }
        let range = TimeRange { starts_at, ends_at };
        range.ensure_at_most(MAX_LENGTH.num_minutes() as i32)?;
        Ok(range)
    }

    /// A range read back from the database (valid when it was written).
    pub fn from_stored(starts_at: DateTime<Utc>, ends_at: DateTime<Utc>) -> Self {
        TimeRange { starts_at, ends_at }
    }

    /// Refuses a range longer than a room allows (`BOOKING_TOO_LONG`).
    pub fn ensure_at_most(&self, max_minutes: i32) -> Result<(), ApiError> {
        if self.ends_at - self.starts_at > Duration::minutes(i64::from(max_minutes)) {
            return Err(ApiError::worded(
                ErrorCode::BookingTooLong,
                serde_json::json!({ "field": "endsAt", "maxMinutes": max_minutes }),
            ));
        }
        Ok(())
    }

    pub fn minutes(&self) -> i64 {
        (self.ends_at - self.starts_at).num_minutes()
    }

    /// Refuses a range that starts before the current minute.
    pub fn ensure_not_past(&self, now: DateTime<Utc>) -> Result<(), ApiError> {
        let this_minute = now.duration_trunc(Duration::minutes(1)).unwrap_or(now);
        if self.starts_at < this_minute {
            return Err(ApiError::worded(ErrorCode::BookingInPast, serde_json::json!({ "field": "startsAt" })));
        }
        Ok(())
    }

    pub fn starts_at(&self) -> DateTime<Utc> {
        self.starts_at
    }

    pub fn ends_at(&self) -> DateTime<Utc> {
        self.ends_at
    }
}

/// A booking title: 1-200 characters after trimming, on one line, no
/// control characters (`text::is_forbidden`, SPEC §20). Stored literally
/// (HTML and SQL are just text); escaped when shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Title(String);

impl Title {
    pub fn parse(raw: &str) -> Result<Self, ApiError> {
        Self::parse_field("title", raw)
    }

    /// Same rules for any short display text (organizer names), named `field`.
    pub fn parse_field(field: &str, raw: &str) -> Result<Self, ApiError> {
        let t = raw.trim();
        let len = t.chars().count();
        if len == 0 {
            return Err(ApiError::malformed(field, "must not be empty"));
        }
        if len > 200 {
            return Err(ApiError::malformed(field, "must be at most 200 characters"));
        }
        crate::text::ensure_plain(field, t)?;
        Ok(Title(t.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Who booked, as every page, feed, calendar and mail shows it: the
/// organizer's name and, for a booking made through an API key, that key's
/// tenant (`김민지 · crm`), so an integration never passes for a colleague
/// (SPEC §20).
pub fn shown_organizer<'a>(name: &'a str, tenant: Option<&str>) -> std::borrow::Cow<'a, str> {
    match tenant {
        Some(tenant) => format!("{name} · {tenant}").into(),
        None => name.into(),
    }
}

/// The `[start, end)` of a calendar day in a zone, in UTC.
pub fn day_bounds(tz: chrono_tz::Tz, date: chrono::NaiveDate) -> (DateTime<Utc>, DateTime<Utc>) {
    use chrono::TimeZone;
    let start_of = |d: chrono::NaiveDate| {
        let midnight = d.and_hms_opt(0, 0, 0).expect("midnight exists");
        // A zone that skips midnight (DST) starts the day at its first instant.
        tz.from_local_datetime(&midnight)
            .earliest()
            .unwrap_or_else(|| tz.from_utc_datetime(&midnight))
            .with_timezone(&Utc)
    };
    (start_of(date), start_of(date.succ_opt().unwrap_or(date)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn requested_rooms() {
        assert_eq!(RequestedRooms::parse(&["B", "A"]).unwrap().codes(), ["A", "B"]);
        assert_eq!(RequestedRooms::parse::<&str>(&[]).unwrap_err().code, ErrorCode::MalformedRequest);
        assert_eq!(RequestedRooms::parse(&["A", "A"]).unwrap_err().code, ErrorCode::MalformedRequest);
    }

    #[test]
    fn time_ranges() {
        let t = |h, m, s| Utc.with_ymd_and_hms(2030, 1, 1, h, m, s).unwrap();
        assert!(TimeRange::new(t(10, 0, 0), t(11, 0, 0)).is_ok());
        assert_eq!(TimeRange::new(t(10, 0, 1), t(11, 0, 0)).unwrap_err().code, ErrorCode::TimeNotMinuteAligned);
        assert_eq!(TimeRange::new(t(11, 0, 0), t(11, 0, 0)).unwrap_err().code, ErrorCode::InvalidTimeRange);
        assert_eq!(
            TimeRange::new(t(0, 0, 0), t(0, 0, 0) + Duration::days(8)).unwrap_err().code,
            ErrorCode::BookingTooLong
        );
        let day = TimeRange::new(t(0, 0, 0), t(12, 1, 0)).unwrap();
        assert_eq!(day.ensure_at_most(720).unwrap_err().code, ErrorCode::BookingTooLong);
        assert!(day.ensure_at_most(721).is_ok());
        let r = TimeRange::new(t(10, 0, 0), t(11, 0, 0)).unwrap();
        assert!(r.ensure_not_past(t(10, 0, 59)).is_ok());
        assert_eq!(r.ensure_not_past(t(10, 1, 0)).unwrap_err().code, ErrorCode::BookingInPast);
    }

    #[test]
    fn titles() {
        assert_eq!(Title::parse("  주간 회의 ").unwrap().as_str(), "주간 회의");
        assert!(Title::parse("   ").is_err());
        assert!(Title::parse(&"가".repeat(201)).is_err());
        assert_eq!(Title::parse("<b>'; DROP TABLE x;--").unwrap().as_str(), "<b>'; DROP TABLE x;--");
        // One line only (SPEC §20): no line breaks, tabs or line separators.
        for bad in ["첫 줄\r\n둘째 줄", "a\nb", "a\tb", "a\u{2028}b", "a\u{2029}b", "a\u{7f}b"] {
            assert_eq!(Title::parse(bad).unwrap_err().details["field"], "title", "{bad:?}");
            assert_eq!(Title::parse_field("organizerName", bad).unwrap_err().details["field"], "organizerName");
        }
    }

    #[test]
    fn the_status_sets_read_the_same_in_rust_and_sql() {
        let sql = |set: &[Status]| {
            format!("({})", set.iter().map(|s| format!("'{}'", s.as_str())).collect::<Vec<_>>().join(", "))
        };
        assert_eq!(crate::live_statuses!(), sql(&Status::LIVE));
        assert_eq!(crate::occupied_statuses!(), sql(&Status::OCCUPIED));
        let migrations = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/2026-12-01-000002_booking_lifecycle/up.sql"
        ))
        .unwrap();
        assert!(
            migrations.contains(&format!("WHERE status IN {}", crate::live_statuses!())),
            "the live index's predicate"
        );
    }
}
