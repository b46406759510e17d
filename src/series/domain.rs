//! Recurrence (SPEC §9): an RFC 5545 RRULE value limited to what an office
//! books — `FREQ=DAILY|WEEKLY|MONTHLY`, `INTERVAL`, `BYDAY`, `COUNT` or
//! `UNTIL` — expanded by the `rrule` crate in the configured zone, so that a
//! weekly 10:00 stays 10:00 local on both sides of a DST change. No I/O.

use chrono::{DateTime, Months, NaiveDateTime, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use rrule::{RRule, Unvalidated};
use serde::Serialize;
use serde_json::json;

use crate::error::{ApiError, ErrorCode};
use crate::rooms::domain::TimeRange;

/// Most occurrences one series may have.
pub const MAX_OCCURRENCES: usize = 366;
/// A series ends at most this many years after its first occurrence,
/// whatever its frequency and interval (SPEC §20).
pub const MAX_YEARS: u32 = 5;

/// A validated recurrence: the text as given, and the rule handed to
/// `rrule` (UNTIL without `Z` read in the configured zone and written in UTC,
/// as RFC 5545 requires with a zoned DTSTART).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Recurrence {
    given: String,
    #[serde(skip)]
    rule: String,
    #[serde(skip)]
    count: Option<usize>,
}

fn invalid(reason: impl Into<String>) -> ApiError {
    ApiError::worded(ErrorCode::InvalidRecurrence, json!({ "field": "recurrence", "reason": reason.into() }))
}

fn is_weekday(s: &str) -> bool {
    // `BYDAY` values are ASCII; anything else is no day (and must not be
    // split inside a character: `BYDAY=éA` panicked, found by fuzzing).
    if !s.is_ascii() {
        return false;
    }
    let (ord, day) = s.split_at(s.len().saturating_sub(2));
    ["MO", "TU", "WE", "TH", "FR", "SA", "SU"].contains(&day)
        && (ord.is_empty() || ord.trim_start_matches(['+', '-']).parse::<u8>().is_ok_and(|n| (1..=5).contains(&n)))
}

impl Recurrence {
    pub fn parse(raw: &str, tz: Tz) -> Result<Self, ApiError> {
        let given = raw.trim();
        let given = given.strip_prefix("RRULE:").unwrap_or(given).to_owned();
        if given.is_empty() || given.len() > 500 {
            return Err(invalid("give an RRULE value such as FREQ=WEEKLY;COUNT=10"));
        }
        let mut parts: Vec<String> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        let mut count = None;
        for part in given.split(';').filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').ok_or_else(|| invalid(format!("`{part}` is not KEY=VALUE")))?;
            let key = key.to_ascii_uppercase();
            if seen.contains(&key) {
                return Err(invalid(format!("{key} is given twice")));
            }
            seen.push(key.clone());
            let value = value.to_ascii_uppercase();
            match key.as_str() {
                "FREQ" if ["DAILY", "WEEKLY", "MONTHLY"].contains(&value.as_str()) => {}
                "FREQ" => return Err(invalid("FREQ must be DAILY, WEEKLY or MONTHLY")),
                "INTERVAL" if value.parse::<u16>().is_ok_and(|n| (1..=366).contains(&n)) => {}
                "INTERVAL" => return Err(invalid("INTERVAL must be 1-366")),
                "BYDAY" if value.split(',').all(is_weekday) => {}
                "BYDAY" => return Err(invalid("BYDAY lists days such as MO,WE or 2TU")),
                "COUNT" => {
                    let n = value
                        .parse::<usize>()
                        .ok()
                        .filter(|n| *n >= 1)
                        .ok_or_else(|| invalid("COUNT must be at least 1"))?;
                    if n > MAX_OCCURRENCES {
                        return Err(too_long(n));
                    }
                    count = Some(n);
                }
                "UNTIL" => {
                    parts.push(format!("UNTIL={}", until_utc(&value, tz)?));
                    continue;
                }
                other => {
                    return Err(invalid(format!("{other} is not supported (FREQ, INTERVAL, BYDAY, COUNT, UNTIL)")))
                }
            }
            parts.push(format!("{key}={value}"));
        }
        if !seen.iter().any(|k| k == "FREQ") {
            return Err(invalid("FREQ is required"));
        }
        if seen.iter().any(|k| k == "COUNT") && seen.iter().any(|k| k == "UNTIL") {
            return Err(invalid("give COUNT or UNTIL, not both"));
        }
        let rule = parts.join(";");
        rule.parse::<RRule<Unvalidated>>().map_err(|e| invalid(e.to_string()))?;
        Ok(Recurrence { given, rule, count })
    }

    pub fn as_str(&self) -> &str {
        &self.given
    }

    /// The rule as `rrule` reads it (UNTIL in UTC), for writing `RRULE:`.
    pub fn rule(&self) -> &str {
        &self.rule
    }

    /// Every occurrence, the first being `first`, each as long in local
    /// wall-clock time as the first (so 10:00–11:00 stays 10:00–11:00 local).
    pub fn occurrences(&self, first: &TimeRange, tz: Tz) -> Result<Vec<TimeRange>, ApiError> {
        let start_local = first.starts_at().with_timezone(&tz).naive_local();
        let end_local = first.ends_at().with_timezone(&tz).naive_local();
        let local_length = end_local - start_local;
        let dt_start = first.starts_at().with_timezone(&rrule::Tz::Tz(tz));
        let rule: RRule<Unvalidated> = self.rule.parse().map_err(|e: rrule::RRuleError| invalid(e.to_string()))?;
        let set = rule.build(dt_start).map_err(|e| invalid(e.to_string()))?;
        let last_allowed = first
            .starts_at()
            .checked_add_months(Months::new(MAX_YEARS * 12))
            .ok_or_else(|| invalid("the first occurrence is too far ahead"))?;
        // Expanded up to one occurrence past the limits (count or years) and
        // no further, so a rule that reaches year 9999 costs no more than one
        // that stops in time.
        let mut starts: Vec<DateTime<Utc>> = Vec::new();
        for d in &set {
            let d = d.with_timezone(&Utc);
            starts.push(d);
            if d > last_allowed || starts.len() > MAX_OCCURRENCES + 1 {
                break;
            }
        }
        // DTSTART always counts as the first occurrence (RFC 5545 §3.8.5.3).
        if starts.first() != Some(&first.starts_at()) {
            starts.insert(0, first.starts_at());
        }
        if let Some(n) = self.count {
            starts.truncate(n);
        }
        if starts.len() > MAX_OCCURRENCES {
            return Err(too_long(starts.len()));
        }
        if let Some(last) = starts.last().filter(|l| **l > last_allowed) {
            return Err(too_far(*last));
        }
        starts
            .into_iter()
            .map(|s| {
                let local = s.with_timezone(&tz).naive_local() + local_length;
                let e = earliest(tz, local).unwrap_or(s + (first.ends_at() - first.starts_at()));
                TimeRange::new(s, e)
            })
            .collect()
    }
}

fn too_long(n: usize) -> ApiError {
    ApiError::worded(
        ErrorCode::SeriesTooLong,
        json!({ "field": "recurrence", "limit": "occurrences", "maxOccurrences": MAX_OCCURRENCES, "occurrences": n }),
    )
}

fn too_far(last: DateTime<Utc>) -> ApiError {
    ApiError::worded(
        ErrorCode::SeriesTooLong,
        json!({ "field": "recurrence", "limit": "years", "maxYears": MAX_YEARS, "lastOccurrence": last }),
    )
}

fn earliest(tz: Tz, local: NaiveDateTime) -> Option<DateTime<Utc>> {
    tz.from_local_datetime(&local).earliest().map(|t| t.with_timezone(&Utc))
}

/// UNTIL as a UTC date-time: kept when it ends in `Z`; a date means the end
/// of that day in `tz` (inclusive, as people read "until Friday"); a
/// date-time without `Z` is local to `tz`.
fn until_utc(value: &str, tz: Tz) -> Result<String, ApiError> {
    let bad = || invalid("UNTIL must be YYYYMMDD or YYYYMMDDTHHMMSS[Z]");
    if value.ends_with('Z') {
        NaiveDateTime::parse_from_str(value.trim_end_matches('Z'), "%Y%m%dT%H%M%S").map_err(|_| bad())?;
        return Ok(value.to_owned());
    }
    let local = match value.len() {
        8 => chrono::NaiveDate::parse_from_str(value, "%Y%m%d")
            .map_err(|_| bad())?
            .and_time(NaiveTime::from_hms_opt(23, 59, 59).expect("valid time")),
        15 => NaiveDateTime::parse_from_str(value, "%Y%m%dT%H%M%S").map_err(|_| bad())?,
        _ => return Err(bad()),
    };
    let utc = earliest(tz, local).ok_or_else(bad)?;
    Ok(utc.format("%Y%m%dT%H%M%SZ").to_string())
}

/// The repeat choices of the booking form (SPEC §15) as a recurrence ending
/// on `until` (inclusive).
pub fn from_form(repeat: &str, until: chrono::NaiveDate, tz: Tz) -> Result<Recurrence, ApiError> {
    let freq = match repeat {
        "daily" => "FREQ=DAILY",
        "weekly" => "FREQ=WEEKLY",
        "biweekly" => "FREQ=WEEKLY;INTERVAL=2",
        "monthly" => "FREQ=MONTHLY",
        _ => return Err(ApiError::malformed("repeat", "must be none, daily, weekly, biweekly or monthly")),
    };
    Recurrence::parse(&format!("{freq};UNTIL={}", until.format("%Y%m%d")), tz)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Datelike, Timelike};

    fn range(tz: Tz, y: i32, m: u32, d: u32, h: u32, len_min: i64) -> TimeRange {
        let s = tz.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap().with_timezone(&Utc);
        TimeRange::new(s, s + chrono::Duration::minutes(len_min)).unwrap()
    }

    #[test]
    fn weekly_count_and_until() {
        let tz = chrono_tz::Asia::Seoul;
        let first = range(tz, 2030, 1, 7, 10, 60);
        let w = Recurrence::parse("FREQ=WEEKLY;COUNT=4", tz).unwrap().occurrences(&first, tz).unwrap();
        assert_eq!(w.len(), 4);
        assert_eq!(w[3].starts_at() - w[0].starts_at(), chrono::Duration::weeks(3));
        let u = Recurrence::parse("FREQ=DAILY;UNTIL=20300110", tz).unwrap().occurrences(&first, tz).unwrap();
        assert_eq!(u.len(), 4, "7th to 10th inclusive");
        let b = Recurrence::parse("FREQ=WEEKLY;INTERVAL=2;COUNT=3", tz).unwrap().occurrences(&first, tz).unwrap();
        assert_eq!(b[1].starts_at() - b[0].starts_at(), chrono::Duration::weeks(2));
        let m = Recurrence::parse("FREQ=MONTHLY;COUNT=3", tz).unwrap().occurrences(&first, tz).unwrap();
        assert_eq!(m.iter().map(|r| r.starts_at().with_timezone(&tz).day()).collect::<Vec<_>>(), [7, 7, 7]);
        let d = Recurrence::parse("FREQ=WEEKLY;BYDAY=MO,WE;COUNT=4", tz).unwrap().occurrences(&first, tz).unwrap();
        let days: Vec<u32> = d.iter().map(|r| r.starts_at().with_timezone(&tz).day()).collect();
        assert_eq!(days, [7, 9, 14, 16]);
    }

    #[test]
    fn local_time_is_kept_across_a_dst_change() {
        let tz = chrono_tz::Europe::Berlin;
        // Weekly from 2030-03-18 (CET) across 2030-03-31 (CEST).
        let first = range(tz, 2030, 3, 18, 10, 90);
        let w = Recurrence::parse("FREQ=WEEKLY;COUNT=4", tz).unwrap().occurrences(&first, tz).unwrap();
        for r in &w {
            let (s, e) = (r.starts_at().with_timezone(&tz), r.ends_at().with_timezone(&tz));
            assert_eq!((s.hour(), s.minute(), e.hour(), e.minute()), (10, 0, 11, 30), "{s}");
        }
        assert_eq!(w[3].starts_at() - w[0].starts_at(), chrono::Duration::weeks(3) - chrono::Duration::hours(1));
    }

    #[test]
    fn limits_and_refusals() {
        let tz = chrono_tz::Asia::Seoul;
        let first = range(tz, 2030, 1, 1, 9, 30);
        let n = |rule: &str| Recurrence::parse(rule, tz).and_then(|r| r.occurrences(&first, tz)).map(|v| v.len());
        assert_eq!(n("FREQ=DAILY;COUNT=366").unwrap(), 366);
        assert_eq!(n("FREQ=DAILY;COUNT=367").unwrap_err().code, ErrorCode::SeriesTooLong);
        assert_eq!(n("FREQ=DAILY;UNTIL=20310101").unwrap(), 366, "2030-01-01 to 2031-01-01 inclusive");
        assert_eq!(n("FREQ=DAILY;UNTIL=20310102").unwrap_err().code, ErrorCode::SeriesTooLong);
        assert_eq!(n("FREQ=DAILY").unwrap_err().code, ErrorCode::SeriesTooLong, "endless");
        // At most five years from the first occurrence, whatever the step.
        let years = |rule: &str| n(rule).map_err(|e| (e.code, e.details["maxYears"].clone()));
        assert_eq!(years("FREQ=MONTHLY;INTERVAL=60;COUNT=2").unwrap(), 2, "exactly five years on");
        assert_eq!(years("FREQ=MONTHLY;INTERVAL=61;COUNT=2").unwrap_err(), (ErrorCode::SeriesTooLong, json!(5)));
        assert_eq!(years("FREQ=MONTHLY;INTERVAL=366;COUNT=2").unwrap_err().0, ErrorCode::SeriesTooLong);
        assert_eq!(years("FREQ=MONTHLY;INTERVAL=366").unwrap_err().0, ErrorCode::SeriesTooLong, "to year 9999");
        assert_eq!(years("FREQ=MONTHLY;UNTIL=20350101").unwrap(), 61);
        assert_eq!(years("FREQ=MONTHLY;UNTIL=20350201").unwrap_err().0, ErrorCode::SeriesTooLong);
        assert_eq!(years("FREQ=WEEKLY;INTERVAL=52;COUNT=6").unwrap(), 6);
        for bad in [
            "",
            "FREQ=YEARLY",
            "FREQ=HOURLY;COUNT=2",
            "COUNT=3",
            "FREQ=DAILY;COUNT=2;UNTIL=20300105",
            "FREQ=DAILY;BYMONTHDAY=3",
            "FREQ=DAILY;COUNT=x",
            "FREQ=WEEKLY;BYDAY=XX",
            "FREQ=WEEKLY;BYDAY=éA",
            "FREQ=WEEKLY;BYDAY=MOԧE;COUNT=44",
            "nonsense",
            "FREQ=DAILY;FREQ=WEEKLY",
            "FREQ=DAILY;UNTIL=tomorrow",
        ] {
            assert_eq!(n(bad).unwrap_err().code, ErrorCode::InvalidRecurrence, "{bad}");
        }
        assert_eq!(Recurrence::parse("RRULE:FREQ=DAILY;COUNT=2", tz).unwrap().as_str(), "FREQ=DAILY;COUNT=2");
    }
}
