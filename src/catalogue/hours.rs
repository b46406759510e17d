//! An area's working hours (SPEC §24): for each weekday one span of local
//! time, or closed. Read from the JSON the API takes (`{"mon": ["09:00",
//! "18:00"], …, "sun": null}`) or the admin form's text (`mon 09:00-18:00,
//! tue 09:00-18:00, …`), stored as that JSON, and used by the booking rules
//! (inside the hours?) and the reports (how many working minutes a day has).

use chrono::{DateTime, Datelike, NaiveDate, NaiveTime, Utc, Weekday};
use chrono_tz::Tz;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ApiError;

/// Day names in the JSON and the form, Monday first (ISO order).
const DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// Working hours as sent: each day `["HH:MM", "HH:MM"]` or null (closed);
/// a day not named is closed.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "WorkingHours")]
pub struct WorkingHoursBody {
    pub mon: Option<[String; 2]>,
    pub tue: Option<[String; 2]>,
    pub wed: Option<[String; 2]>,
    pub thu: Option<[String; 2]>,
    pub fri: Option<[String; 2]>,
    pub sat: Option<[String; 2]>,
    pub sun: Option<[String; 2]>,
}

/// One span a day, the start before the end, or closed; Monday first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkingHours([Option<(NaiveTime, NaiveTime)>; 7]);

impl Default for WorkingHours {
    /// Monday to Friday, 09:00–18:00 (the column's default).
    fn default() -> Self {
        let day = Some((hm(9, 0), hm(18, 0)));
        WorkingHours([day, day, day, day, day, None, None])
    }
}

fn hm(h: u32, m: u32) -> NaiveTime {
    NaiveTime::from_hms_opt(h, m, 0).unwrap_or(NaiveTime::MIN)
}

fn span(field: &str, day: &str, start: &str, end: &str) -> Result<(NaiveTime, NaiveTime), ApiError> {
    let time = |t: &str| {
        NaiveTime::parse_from_str(t.trim(), "%H:%M")
            .map_err(|_| ApiError::malformed(field, format!("{day}: `{t}` is not HH:MM")))
    };
    let (s, e) = (time(start)?, time(end)?);
    if s >= e {
        return Err(ApiError::malformed(field, format!("{day}: the start must be before the end")));
    }
    Ok((s, e))
}

impl WorkingHours {
    /// The API's body (`workingHours`).
    pub fn from_body(body: &WorkingHoursBody) -> Result<Self, ApiError> {
        let given = [&body.mon, &body.tue, &body.wed, &body.thu, &body.fri, &body.sat, &body.sun];
        let mut days = [None; 7];
        for (i, day) in given.into_iter().enumerate() {
            if let Some([start, end]) = day {
                days[i] = Some(span("workingHours", DAYS[i], start, end)?);
            }
        }
        Ok(WorkingHours(days))
    }

    /// The admin form's text: `mon 09:00-18:00, tue 09:00-18:00`; a day
    /// not named is closed, and so is `sat closed`.
    pub fn parse_text(field: &str, text: &str) -> Result<Self, ApiError> {
        let mut days = [None; 7];
        for part in text.split([',', '\n']).map(str::trim).filter(|p| !p.is_empty()) {
            let (day, hours) = part.split_once(char::is_whitespace).unwrap_or((part, ""));
            let day = day.trim().to_ascii_lowercase();
            let i = DAYS
                .iter()
                .position(|d| *d == day)
                .ok_or_else(|| ApiError::malformed(field, format!("`{day}` is not a day (mon … sun)")))?;
            let hours = hours.trim();
            if hours.eq_ignore_ascii_case("closed") || hours == "-" {
                continue;
            }
            let (start, end) =
                hours.split_once('-').ok_or_else(|| ApiError::malformed(field, format!("{day}: write HH:MM-HH:MM")))?;
            days[i] = Some(span(field, &day, start, end)?);
        }
        Ok(WorkingHours(days))
    }

    /// As stored: written by [`Self::to_json`], so anything else is the
    /// default rather than an error on every read.
    pub fn from_json(value: &Value) -> Self {
        let mut days = [None; 7];
        for (i, day) in DAYS.iter().enumerate() {
            let pair = value.get(day).and_then(Value::as_array);
            if let Some([Value::String(s), Value::String(e)]) = pair.map(Vec::as_slice) {
                match span("workingHours", day, s, e) {
                    Ok(span) => days[i] = Some(span),
                    Err(_) => return WorkingHours::default(),
                }
            }
        }
        WorkingHours(days)
    }

    pub fn to_json(&self) -> Value {
        let mut out = serde_json::Map::new();
        for (i, day) in DAYS.iter().enumerate() {
            let v = match self.0[i] {
                Some((s, e)) => json!([s.format("%H:%M").to_string(), e.format("%H:%M").to_string()]),
                None => Value::Null,
            };
            out.insert((*day).to_owned(), v);
        }
        Value::Object(out)
    }

    /// The form's text for these hours (closed days left out).
    pub fn to_text(&self) -> String {
        let mut parts = Vec::new();
        for (i, day) in DAYS.iter().enumerate() {
            if let Some((s, e)) = self.0[i] {
                parts.push(format!("{day} {}-{}", s.format("%H:%M"), e.format("%H:%M")));
            }
        }
        parts.join(", ")
    }

    pub fn on(&self, day: Weekday) -> Option<(NaiveTime, NaiveTime)> {
        self.0[day.num_days_from_monday() as usize]
    }

    /// Working minutes of a date (the wall-clock span; a day that loses or
    /// gains an hour to daylight saving time inside the span is rare
    /// enough in office hours to count as written).
    pub fn minutes_on(&self, date: NaiveDate) -> i64 {
        self.on(date.weekday()).map_or(0, |(s, e)| (e - s).num_minutes())
    }

    /// Whether `[start, end)` lies inside one day's span in `tz`.
    pub fn contains(&self, tz: Tz, start: DateTime<Utc>, end: DateTime<Utc>) -> bool {
        let (s, e) = (start.with_timezone(&tz).naive_local(), end.with_timezone(&tz).naive_local());
        let Some((open, close)) = self.on(s.date().weekday()) else { return false };
        let day = s.date();
        s >= day.and_time(open) && e <= day.and_time(close) && e >= s
    }
}

/// What a booking's area decides about when its rooms open (SPEC §24), as
/// read with the rooms inside the booking's transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AreaRules {
    pub area: String,
    pub zone: Tz,
    pub hours: WorkingHours,
    pub restrict_to_working_hours: bool,
    pub closed_on_holidays: bool,
    pub holiday_calendar: Option<String>,
}

impl Default for AreaRules {
    /// Open at any time, in UTC (rooms made in tests without an area).
    fn default() -> Self {
        AreaRules {
            area: String::new(),
            zone: chrono_tz::UTC,
            hours: WorkingHours::default(),
            restrict_to_working_hours: false,
            closed_on_holidays: false,
            holiday_calendar: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn text_and_json_agree_and_bad_text_names_the_field() {
        let h = WorkingHours::parse_text("working_hours", "mon 08:30-17:00, wed 09:00-12:00, sat closed").unwrap();
        assert_eq!(h.to_text(), "mon 08:30-17:00, wed 09:00-12:00");
        assert_eq!(WorkingHours::from_json(&h.to_json()), h);
        assert_eq!(h.minutes_on(NaiveDate::from_ymd_opt(2027, 3, 15).unwrap()), 510);
        for bad in ["funday 09:00-10:00", "mon 9-10", "mon 18:00-09:00", "mon 09:00"] {
            let e = WorkingHours::parse_text("working_hours", bad).unwrap_err();
            assert_eq!(e.details["field"], "working_hours", "{bad}");
        }
        assert_eq!(WorkingHours::from_json(&WorkingHours::default().to_json()), WorkingHours::default());
    }

    #[test]
    fn contains_reads_wall_clock_time_of_the_zone() {
        let h = WorkingHours::default();
        let ny = chrono_tz::America::New_York;
        // Monday 2027-03-15, after New York moved to daylight time: 09:00 EDT is 13:00 UTC.
        let at = |hh| ny.with_ymd_and_hms(2027, 3, 15, hh, 0, 0).unwrap().with_timezone(&Utc);
        assert!(h.contains(ny, at(9), at(18)));
        assert!(!h.contains(ny, at(8), at(10)));
        assert!(!h.contains(ny, at(17), at(19)));
        let sat = ny.with_ymd_and_hms(2027, 3, 13, 10, 0, 0).unwrap().with_timezone(&Utc);
        assert!(!h.contains(ny, sat, sat + chrono::Duration::hours(1)));
    }
}
