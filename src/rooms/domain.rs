//! Booking rules of SPEC §2 as types that cannot hold invalid values. No I/O.

use chrono::{DateTime, Duration, DurationRound, Timelike, Utc};
use serde::Serialize;

use crate::error::{ApiError, ErrorCode};

/// A room as configured in the `room` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Room {
    pub code: String,
    pub name: String,
    pub position: i32,
}

/// The rooms of this installation, in position order.
#[derive(Debug, Clone)]
pub struct RoomCatalog {
    rooms: Vec<Room>,
}

impl RoomCatalog {
    pub fn new(mut rooms: Vec<Room>) -> Self {
        rooms.sort_by_key(|r| r.position);
        Self { rooms }
    }

    pub fn rooms(&self) -> &[Room] {
        &self.rooms
    }

    pub fn get(&self, code: &str) -> Option<&Room> {
        self.rooms.iter().find(|r| r.code == code)
    }

    /// Every bookable set: each contiguous run of rooms, shortest first.
    pub fn combinations(&self) -> Vec<Vec<String>> {
        let n = self.rooms.len();
        (1..=n)
            .flat_map(|len| (0..=n - len).map(move |start| (start, len)))
            .map(|(start, len)| self.rooms[start..start + len].iter().map(|r| r.code.clone()).collect())
            .collect()
    }

    /// Rooms named by a request, as a set that is bookable together.
    pub fn parse_set<S: AsRef<str>>(&self, codes: &[S]) -> Result<RoomSet, ApiError> {
        if codes.is_empty() {
            return Err(ApiError::malformed("rooms", "name at least one room"));
        }
        // Indices into the position-ordered catalogue.
        let mut picked: Vec<usize> = Vec::with_capacity(codes.len());
        for code in codes {
            let code = code.as_ref();
            let index = self.rooms.iter().position(|r| r.code == code).ok_or_else(|| {
                ApiError::new(ErrorCode::UnknownRoom, format!("알 수 없는 회의실입니다: {code}"))
                    .with_details(serde_json::json!({ "field": "rooms", "room": code }))
            })?;
            if picked.contains(&index) {
                return Err(ApiError::malformed("rooms", format!("room {code} is named twice")));
            }
            picked.push(index);
        }
        picked.sort_unstable();
        if picked.windows(2).any(|w| w[1] != w[0] + 1) {
            let names: Vec<&str> = picked.iter().map(|&i| self.rooms[i].code.as_str()).collect();
            return Err(ApiError::new(
                ErrorCode::RoomCombinationNotAllowed,
                "이어진 회의실만 함께 예약할 수 있습니다 (예: A+B, B+C, A+B+C). A+C처럼 가운데를 건너뛸 수 없습니다.",
            )
            .with_details(serde_json::json!({ "field": "rooms", "rooms": names })));
        }
        Ok(RoomSet(picked.into_iter().map(|i| self.rooms[i].code.clone()).collect()))
    }
}

/// A non-empty, contiguous set of known rooms in position order: the order in
/// which every write touches `reservation_room` (seed 002 §교착).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RoomSet(Vec<String>);

impl RoomSet {
    pub fn codes(&self) -> &[String] {
        &self.0
    }

    /// Rebuilds a set read back from the database, already in position order.
    pub fn from_stored(codes: Vec<String>) -> Self {
        RoomSet(codes)
    }
}

/// Limits that come from configuration.
#[derive(Debug, Clone, Copy)]
pub struct BookingRules {
    pub max_length: Duration,
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
    pub fn new(starts_at: DateTime<Utc>, ends_at: DateTime<Utc>, rules: &BookingRules) -> Result<Self, ApiError> {
        for (field, t) in [("startsAt", starts_at), ("endsAt", ends_at)] {
            if t.second() != 0 || t.nanosecond() != 0 {
                return Err(ApiError::new(
                    ErrorCode::TimeNotMinuteAligned,
                    "예약 시간은 분 단위로 정해야 합니다 (초는 0이어야 합니다).",
                )
                .with_details(serde_json::json!({ "field": field })));
            }
        }
        if ends_at <= starts_at {
            return Err(ApiError::new(ErrorCode::InvalidTimeRange, "끝나는 시간은 시작 시간보다 뒤여야 합니다.")
                .with_details(serde_json::json!({ "field": "endsAt" })));
        }
        if ends_at - starts_at > rules.max_length {
            return Err(ApiError::new(
                ErrorCode::BookingTooLong,
                format!("예약은 최대 {}분까지 할 수 있습니다.", rules.max_length.num_minutes()),
            )
            .with_details(serde_json::json!({ "maxMinutes": rules.max_length.num_minutes() })));
        }
        Ok(TimeRange { starts_at, ends_at })
    }

    /// Refuses a range that starts before the current minute.
    pub fn ensure_not_past(&self, now: DateTime<Utc>) -> Result<(), ApiError> {
        let this_minute = now.duration_trunc(Duration::minutes(1)).unwrap_or(now);
        if self.starts_at < this_minute {
            return Err(ApiError::new(ErrorCode::BookingInPast, "지난 시간은 예약할 수 없습니다.")
                .with_details(serde_json::json!({ "field": "startsAt" })));
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

/// A booking title: 1-200 characters after trimming, no control characters.
/// Stored literally (HTML and SQL are just text); escaped when shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Title(String);

impl Title {
    pub fn parse(raw: &str) -> Result<Self, ApiError> {
        Self::parse_field("title", raw)
    }

    /// Same rules for any short display text (organizer names).
    pub fn parse_field(field: &str, raw: &str) -> Result<Self, ApiError> {
        let t = raw.trim();
        let len = t.chars().count();
        if len == 0 {
            return Err(ApiError::malformed(field, "must not be empty"));
        }
        if len > 200 {
            return Err(ApiError::malformed(field, "must be at most 200 characters"));
        }
        if t.chars().any(char::is_control) {
            return Err(ApiError::malformed(field, "must not contain control characters"));
        }
        Ok(Title(t.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn catalog() -> RoomCatalog {
        RoomCatalog::new(
            ["C", "A", "B"]
                .iter()
                .enumerate()
                .map(|(i, c)| Room { code: c.to_string(), name: c.to_string(), position: [3, 1, 2][i] })
                .collect(),
        )
    }

    #[test]
    fn combinations_are_contiguous_runs() {
        let combos = catalog().combinations();
        let expected: Vec<Vec<String>> =
            vec![vec!["A"], vec!["B"], vec!["C"], vec!["A", "B"], vec!["B", "C"], vec!["A", "B", "C"]]
                .into_iter()
                .map(|v| v.into_iter().map(String::from).collect())
                .collect();
        assert_eq!(combos, expected);
    }

    #[test]
    fn room_sets() {
        let c = catalog();
        assert_eq!(c.parse_set(&["B", "A"]).unwrap().codes(), ["A", "B"]);
        assert_eq!(c.parse_set(&["C", "A", "B"]).unwrap().codes(), ["A", "B", "C"]);
        assert_eq!(c.parse_set(&["A", "C"]).unwrap_err().code, ErrorCode::RoomCombinationNotAllowed);
        assert_eq!(c.parse_set(&["D"]).unwrap_err().code, ErrorCode::UnknownRoom);
        assert_eq!(c.parse_set::<&str>(&[]).unwrap_err().code, ErrorCode::MalformedRequest);
        assert_eq!(c.parse_set(&["A", "A"]).unwrap_err().code, ErrorCode::MalformedRequest);
    }

    #[test]
    fn time_ranges() {
        let rules = BookingRules { max_length: Duration::hours(12) };
        let t = |h, m, s| Utc.with_ymd_and_hms(2030, 1, 1, h, m, s).unwrap();
        assert!(TimeRange::new(t(10, 0, 0), t(11, 0, 0), &rules).is_ok());
        assert_eq!(TimeRange::new(t(10, 0, 1), t(11, 0, 0), &rules).unwrap_err().code, ErrorCode::TimeNotMinuteAligned);
        assert_eq!(TimeRange::new(t(11, 0, 0), t(11, 0, 0), &rules).unwrap_err().code, ErrorCode::InvalidTimeRange);
        assert_eq!(TimeRange::new(t(0, 0, 0), t(12, 1, 0), &rules).unwrap_err().code, ErrorCode::BookingTooLong);
        let r = TimeRange::new(t(10, 0, 0), t(11, 0, 0), &rules).unwrap();
        assert!(r.ensure_not_past(t(10, 0, 59)).is_ok());
        assert_eq!(r.ensure_not_past(t(10, 1, 0)).unwrap_err().code, ErrorCode::BookingInPast);
    }

    #[test]
    fn titles() {
        assert_eq!(Title::parse("  주간 회의 ").unwrap().as_str(), "주간 회의");
        assert!(Title::parse("   ").is_err());
        assert!(Title::parse(&"가".repeat(201)).is_err());
        assert_eq!(Title::parse("<b>'; DROP TABLE x;--").unwrap().as_str(), "<b>'; DROP TABLE x;--");
    }
}
