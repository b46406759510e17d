//! Holiday calendars (SPEC §24): named sets of dates, each with a name, that
//! an area names. Their days are replaced whole by one `PUT`, from JSON or
//! from a public-holiday `.ics` file as calendar apps publish it (all-day
//! events: each `DTSTART` date up to its `DTEND`, exclusive, named by its
//! `SUMMARY`), read by the one reader of outside iCalendar.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{Array, Date, Text, Timestamptz};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::RunQueryDsl;
use icalendar::parser::Component;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::domain::Label;
use crate::command::CommandError;
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};

/// Days one calendar may hold (ten years of every day).
pub const MAX_DAYS: usize = 3_660;
/// Days one event of an `.ics` file may span.
const MAX_EVENT_DAYS: i64 = 366;

/// A holiday: a local date and its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Holiday {
    pub date: NaiveDate,
    pub name: String,
}

/// A calendar with its days in date order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HolidayCalendar {
    pub code: String,
    pub name: String,
    pub days: Vec<Holiday>,
}

/// `POST /api/holiday-calendars`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "CreateHolidayCalendarRequest")]
pub struct NewCalendarBody {
    pub code: String,
    /// Default: the code.
    pub name: Option<String>,
}

/// A valid new calendar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewCalendar {
    pub code: Label,
    pub name: Label,
}

impl NewCalendar {
    pub fn parse(body: NewCalendarBody) -> Result<Self, ApiError> {
        let code = Label::parse("code", &body.code)?;
        Ok(NewCalendar { name: Label::parse("name", body.name.as_deref().unwrap_or(code.as_str()))?, code })
    }
}

/// One day as sent in `PUT …/days`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "HolidayDay")]
pub struct DayBody {
    /// `YYYY-MM-DD`.
    pub date: String,
    pub name: String,
}

/// `PUT /api/holiday-calendars/{code}/days` as JSON.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "HolidayDaysRequest")]
pub struct DaysBody {
    pub days: Vec<DayBody>,
}

/// A calendar's days, valid: each date once, names 1–200 plain characters,
/// at most [`MAX_DAYS`]; sorted by date.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Days(Vec<Holiday>);

fn holiday_name(field: &str, raw: &str) -> Result<String, ApiError> {
    let t = raw.trim();
    if !(1..=200).contains(&t.chars().count()) {
        return Err(ApiError::malformed(field, "a holiday's name must be 1-200 characters"));
    }
    crate::text::ensure_plain(field, t)?;
    Ok(t.to_owned())
}

impl Days {
    fn new(mut days: Vec<Holiday>) -> Result<Self, ApiError> {
        if days.len() > MAX_DAYS {
            return Err(ApiError::malformed("days", format!("at most {MAX_DAYS} days")));
        }
        days.sort_by_key(|d| d.date);
        if let Some(w) = days.windows(2).find(|w| w[0].date == w[1].date) {
            return Err(ApiError::malformed("days", format!("{} is named twice", w[0].date)));
        }
        Ok(Days(days))
    }

    pub fn from_json(body: DaysBody) -> Result<Self, ApiError> {
        let days = body
            .days
            .into_iter()
            .map(|d| {
                let date =
                    crate::day::parse(&d.date).ok_or_else(|| ApiError::malformed("days", "dates are YYYY-MM-DD"))?;
                Ok(Holiday { date, name: holiday_name("days", &d.name)? })
            })
            .collect::<Result<Vec<_>, ApiError>>()?;
        Days::new(days)
    }

    /// The all-day events of an iCalendar file. Anything but one
    /// `VCALENDAR` of events with date `DTSTART`s is a 400 naming `body`;
    /// a recurring event is refused rather than guessed at.
    pub fn from_ics(text: &str) -> Result<Self, ApiError> {
        let bad = |why: String| ApiError::malformed("body", why);
        let unfolded = crate::calendar::ics::read::unfold(text);
        let components = crate::calendar::ics::read::components(&unfolded).map_err(|e| bad(e.reason()))?;
        let calendar = match components.as_slice() {
            [c] if c.name.as_str().eq_ignore_ascii_case("VCALENDAR") => c,
            _ => return Err(bad("not one VCALENDAR".to_owned())),
        };
        let mut days = Vec::new();
        for event in calendar.components.iter().filter(|c| c.name.as_str().eq_ignore_ascii_case("VEVENT")) {
            if prop(event, "RRULE").is_some() {
                return Err(bad("recurring holidays are not read: list each date".to_owned()));
            }
            let start = prop(event, "DTSTART")
                .and_then(date_of)
                .ok_or_else(|| bad("an event has no date DTSTART".to_owned()))?;
            let end = prop(event, "DTEND").and_then(date_of).unwrap_or(start + Duration::days(1));
            if end <= start || end - start > Duration::days(MAX_EVENT_DAYS) {
                return Err(bad(format!(
                    "the event of {start} ends before it starts or spans over {MAX_EVENT_DAYS} days"
                )));
            }
            let name = holiday_name("body", &prop(event, "SUMMARY").unwrap_or_default())?;
            let mut day = start;
            while day < end {
                if !days.iter().any(|d: &Holiday| d.date == day) {
                    days.push(Holiday { date: day, name: name.clone() });
                }
                day += Duration::days(1);
                if days.len() > MAX_DAYS {
                    return Err(ApiError::malformed("days", format!("at most {MAX_DAYS} days")));
                }
            }
        }
        Days::new(days)
    }

    pub fn list(&self) -> &[Holiday] {
        &self.0
    }
}

fn prop(c: &Component<'_>, name: &str) -> Option<String> {
    c.properties.iter().find(|p| p.name.as_str().eq_ignore_ascii_case(name)).map(|p| p.val.as_str().to_owned())
}

/// `20270101` (a `VALUE=DATE`) or the date of `20270101T000000[Z]`.
fn date_of(value: String) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(value.get(..8)?, "%Y%m%d").ok()
}

#[derive(QueryableByName)]
struct CalendarRow {
    #[diesel(sql_type = Text)]
    code: String,
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct DayRow {
    #[diesel(sql_type = Text)]
    calendar: String,
    #[diesel(sql_type = Date)]
    day: NaiveDate,
    #[diesel(sql_type = Text)]
    name: String,
}

/// Every calendar with its days, in code order (two statements).
pub async fn list(conn: &mut Conn) -> diesel::QueryResult<Vec<HolidayCalendar>> {
    let calendars: Vec<CalendarRow> =
        diesel::sql_query("SELECT code, name FROM holiday_calendar ORDER BY code").load(conn).await?;
    let days: Vec<DayRow> =
        diesel::sql_query("SELECT calendar, day, name FROM holiday ORDER BY calendar, day").load(conn).await?;
    Ok(calendars
        .into_iter()
        .map(|c| HolidayCalendar {
            days: days
                .iter()
                .filter(|d| d.calendar == c.code)
                .map(|d| Holiday { date: d.day, name: d.name.clone() })
                .collect(),
            code: c.code,
            name: c.name,
        })
        .collect())
}

async fn one(conn: &mut Conn, code: &str) -> Result<HolidayCalendar, CommandError> {
    let calendar: Option<CalendarRow> = diesel::sql_query("SELECT code, name FROM holiday_calendar WHERE code = $1")
        .bind::<Text, _>(code)
        .get_result(conn)
        .await
        .optional()?;
    let calendar = calendar.ok_or_else(|| ApiError::not_found("holiday calendar"))?;
    let days: Vec<DayRow> =
        diesel::sql_query("SELECT calendar, day, name FROM holiday WHERE calendar = $1 ORDER BY day")
            .bind::<Text, _>(code)
            .load(conn)
            .await?;
    Ok(HolidayCalendar {
        code: calendar.code,
        name: calendar.name,
        days: days.into_iter().map(|d| Holiday { date: d.day, name: d.name }).collect(),
    })
}

pub async fn create(conn: &mut Conn, new: &NewCalendar, now: DateTime<Utc>) -> Result<HolidayCalendar, CommandError> {
    let inserted =
        diesel::sql_query("INSERT INTO holiday_calendar (code, name, created_at, updated_at) VALUES ($1, $2, $3, $3)")
            .bind::<Text, _>(new.code.as_str())
            .bind::<Text, _>(new.name.as_str())
            .bind::<Timestamptz, _>(now)
            .execute(conn)
            .await;
    match inserted {
        Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info))
            if info.constraint_name() == Some("holiday_calendar_pkey") =>
        {
            Err(ApiError::worded(
                ErrorCode::HolidayCalendarCodeTaken,
                json!({ "field": "code", "code": new.code.as_str() }),
            )
            .into())
        }
        Err(e) => Err(e.into()),
        Ok(_) => one(conn, new.code.as_str()).await,
    }
}

/// Replaces the calendar's days: the calendar row locked, its days deleted
/// and the new ones inserted in the command's one transaction.
pub async fn replace_days(
    conn: &mut Conn,
    code: &str,
    days: &Days,
    now: DateTime<Utc>,
) -> Result<HolidayCalendar, CommandError> {
    let updated = diesel::sql_query("UPDATE holiday_calendar SET updated_at = $2 WHERE code = $1")
        .bind::<Text, _>(code)
        .bind::<Timestamptz, _>(now)
        .execute(conn)
        .await?;
    if updated == 0 {
        return Err(ApiError::not_found("holiday calendar").into());
    }
    diesel::sql_query("DELETE FROM holiday WHERE calendar = $1").bind::<Text, _>(code).execute(conn).await?;
    let (dates, names): (Vec<NaiveDate>, Vec<String>) = days.list().iter().map(|d| (d.date, d.name.clone())).unzip();
    diesel::sql_query(
        "INSERT INTO holiday (calendar, day, name) SELECT $1, d, n FROM unnest($2::date[], $3::text[]) AS t(d, n)",
    )
    .bind::<Text, _>(code)
    .bind::<Array<Date>, _>(dates)
    .bind::<Array<Text>, _>(names)
    .execute(conn)
    .await?;
    one(conn, code).await
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n\
        BEGIN:VEVENT\r\nUID:a\r\nDTSTART;VALUE=DATE:20270101\r\nDTEND;VALUE=DATE:20270102\r\nSUMMARY:New Year\r\nEND:VEVENT\r\n\
        BEGIN:VEVENT\r\nUID:b\r\nDTSTART;VALUE=DATE:20270206\r\nDTEND;VALUE=DATE:20270209\r\nSUMMARY:Seollal\r\nEND:VEVENT\r\n\
        BEGIN:VEVENT\r\nUID:c\r\nDTSTART;VALUE=DATE:20270301\r\nSUMMARY:Independence Movement Day\r\nEND:VEVENT\r\n\
        END:VCALENDAR\r\n";

    #[test]
    fn an_ics_file_gives_each_date_to_dtend_exclusive() {
        let days = Days::from_ics(FILE).unwrap();
        let dates: Vec<String> = days.list().iter().map(|d| format!("{} {}", d.date, d.name)).collect();
        assert_eq!(
            dates,
            [
                "2027-01-01 New Year",
                "2027-02-06 Seollal",
                "2027-02-07 Seollal",
                "2027-02-08 Seollal",
                "2027-03-01 Independence Movement Day"
            ]
        );
    }

    #[test]
    fn what_is_not_a_holiday_file_names_the_body() {
        let recurring = FILE.replace("SUMMARY:New Year", "SUMMARY:New Year\r\nRRULE:FREQ=YEARLY");
        let backwards = FILE.replace("DTEND;VALUE=DATE:20270209", "DTEND;VALUE=DATE:20270201");
        for bad in
            ["hello", "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nEND:VCALENDAR\r\n", recurring.as_str(), backwards.as_str()]
        {
            let e = Days::from_ics(bad).unwrap_err();
            assert_eq!(e.details["field"], "body", "{bad}");
        }
        let twice = DaysBody {
            days: vec![
                DayBody { date: "2027-01-01".into(), name: "a".into() },
                DayBody { date: "2027-01-01".into(), name: "b".into() },
            ],
        };
        assert_eq!(Days::from_json(twice).unwrap_err().details["field"], "days");
    }
}
