//! Areas as data (SPEC §24): a building or floor with its own time zone and
//! working hours, which a room's `area` names. Today's labels became rows;
//! a room naming a new area creates it with the defaults ([`ensure`]).
//! An area may name a holiday calendar (`holidays`).

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{Bool, Int4, Jsonb, Nullable, Text, Timestamptz};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::RunQueryDsl;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::domain::{bounded, present, Label};
use super::hours::WorkingHours;
pub use super::hours::WorkingHoursBody;
use crate::command::CommandError;
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};

/// An area as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Area {
    pub code: String,
    pub name: String,
    /// IANA name (the installation's `YEYAK_TIMEZONE` unless set).
    pub time_zone: String,
    /// `{"mon": ["09:00", "18:00"], …, "sun": null}`.
    pub working_hours: Value,
    /// A holiday calendar's code, or null.
    pub holiday_calendar: Option<String>,
    pub restrict_to_working_hours: bool,
    pub closed_on_holidays: bool,
    pub position: i32,
}

/// `POST /api/areas`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "CreateAreaRequest")]
pub struct NewAreaBody {
    pub code: String,
    pub name: Option<String>,
    pub time_zone: Option<String>,
    pub working_hours: Option<WorkingHoursBody>,
    /// A holiday calendar's code, or null.
    pub holiday_calendar: Option<String>,
    pub restrict_to_working_hours: Option<bool>,
    pub closed_on_holidays: Option<bool>,
    pub position: Option<i64>,
}

/// `PATCH /api/areas/{code}`: absent fields stay; `timeZone: null` goes
/// back to the installation's.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "UpdateAreaRequest")]
pub struct AreaPatchBody {
    pub name: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub time_zone: Option<Option<String>>,
    pub working_hours: Option<WorkingHoursBody>,
    #[serde(default, deserialize_with = "present")]
    pub holiday_calendar: Option<Option<String>>,
    pub restrict_to_working_hours: Option<bool>,
    pub closed_on_holidays: Option<bool>,
    pub position: Option<i64>,
}

/// A valid time zone name (`INVALID_TIME_ZONE` otherwise).
fn zone(name: &str) -> Result<String, ApiError> {
    name.trim()
        .parse::<Tz>()
        .map(|tz| tz.name().to_owned())
        .map_err(|_| ApiError::worded(ErrorCode::InvalidTimeZone, json!({ "field": "timeZone", "timeZone": name })))
}

/// Working hours checked (`workingHours`), as stored.
fn hours(given: &WorkingHoursBody) -> Result<Value, ApiError> {
    WorkingHours::from_body(given).map(|h| h.to_json())
}

/// A valid new area.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewArea {
    pub code: Label,
    pub name: Label,
    pub time_zone: Option<String>,
    pub working_hours: Option<Value>,
    pub holiday_calendar: Option<Label>,
    pub restrict_to_working_hours: bool,
    pub closed_on_holidays: bool,
    pub position: Option<i32>,
}

impl NewArea {
    pub fn parse(body: NewAreaBody) -> Result<Self, ApiError> {
        let code = Label::parse("code", &body.code)?;
        Ok(NewArea {
            name: Label::parse("name", body.name.as_deref().unwrap_or(code.as_str()))?,
            code,
            time_zone: body.time_zone.as_deref().map(zone).transpose()?,
            working_hours: body.working_hours.as_ref().map(hours).transpose()?,
            holiday_calendar: body
                .holiday_calendar
                .as_deref()
                .map(|c| Label::parse("holidayCalendar", c))
                .transpose()?,
            restrict_to_working_hours: body.restrict_to_working_hours.unwrap_or(false),
            closed_on_holidays: body.closed_on_holidays.unwrap_or(false),
            position: body.position.map(|p| bounded("position", p, 1, 100_000)).transpose()?,
        })
    }
}

/// A valid change of an area.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AreaPatch {
    pub name: Option<Label>,
    pub time_zone: Option<Option<String>>,
    pub working_hours: Option<Value>,
    pub holiday_calendar: Option<Option<Label>>,
    pub restrict_to_working_hours: Option<bool>,
    pub closed_on_holidays: Option<bool>,
    pub position: Option<i32>,
}

impl AreaPatch {
    pub fn parse(body: AreaPatchBody) -> Result<Self, ApiError> {
        Ok(AreaPatch {
            name: body.name.as_deref().map(|n| Label::parse("name", n)).transpose()?,
            time_zone: body.time_zone.map(|z| z.as_deref().map(zone).transpose()).transpose()?,
            working_hours: body.working_hours.as_ref().map(hours).transpose()?,
            holiday_calendar: body
                .holiday_calendar
                .map(|c| c.as_deref().map(|c| Label::parse("holidayCalendar", c)).transpose())
                .transpose()?,
            restrict_to_working_hours: body.restrict_to_working_hours,
            closed_on_holidays: body.closed_on_holidays,
            position: body.position.map(|p| bounded("position", p, 1, 100_000)).transpose()?,
        })
    }
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    code: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Nullable<Text>)]
    time_zone: Option<String>,
    #[diesel(sql_type = Jsonb)]
    working_hours: Value,
    #[diesel(sql_type = Nullable<Text>)]
    holiday_calendar: Option<String>,
    #[diesel(sql_type = Bool)]
    restrict_to_working_hours: bool,
    #[diesel(sql_type = Bool)]
    closed_on_holidays: bool,
    #[diesel(sql_type = Int4)]
    position: i32,
}

impl Row {
    fn area(self, home: Tz) -> Area {
        Area {
            code: self.code,
            name: self.name,
            time_zone: self.time_zone.unwrap_or_else(|| home.name().to_owned()),
            working_hours: self.working_hours,
            holiday_calendar: self.holiday_calendar,
            restrict_to_working_hours: self.restrict_to_working_hours,
            closed_on_holidays: self.closed_on_holidays,
            position: self.position,
        }
    }
}

const COLUMNS: &str =
    "code, name, time_zone, working_hours, holiday_calendar, restrict_to_working_hours, closed_on_holidays, position";

/// Every area in position order; `home` names a null time zone.
pub async fn list(conn: &mut Conn, home: Tz) -> diesel::QueryResult<Vec<Area>> {
    let rows: Vec<Row> =
        diesel::sql_query(format!("SELECT {COLUMNS} FROM area ORDER BY position, code")).load(conn).await?;
    Ok(rows.into_iter().map(|r| r.area(home)).collect())
}

/// Makes the area a room names, with the defaults, unless it exists (in
/// the room's own transaction, before the room is written).
pub async fn ensure(conn: &mut Conn, code: &str, home: Tz) -> diesel::QueryResult<()> {
    diesel::sql_query(
        "INSERT INTO area (code, name, position, time_zone)
         VALUES ($1, $1, (SELECT COALESCE(max(position), 0) + 1 FROM area), $2)
         ON CONFLICT (code) DO NOTHING",
    )
    .bind::<Text, _>(code)
    .bind::<Text, _>(home.name())
    .execute(conn)
    .await
    .map(|_| ())
}

/// Gives every area without a zone the installation's (`YEYAK_TIMEZONE`),
/// at start-up: an area's zone is then always a name the readers can use
/// in SQL and in code, and a later change of `YEYAK_TIMEZONE` does not move
/// the bookings of areas that already exist.
pub async fn settle_zones(conn: &mut Conn, home: Tz) -> diesel::QueryResult<usize> {
    diesel::sql_query("UPDATE area SET time_zone = $1 WHERE time_zone IS NULL")
        .bind::<Text, _>(home.name())
        .execute(conn)
        .await
}

fn taken(err: DieselError, code: &str) -> CommandError {
    match &err {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info)
            if info.constraint_name() == Some("area_pkey") =>
        {
            ApiError::worded(ErrorCode::AreaCodeTaken, json!({ "field": "code", "code": code })).into()
        }
        DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, info)
            if info.constraint_name() == Some("area_holiday_calendar_fkey") =>
        {
            ApiError::malformed("holidayCalendar", "no holiday calendar has this code").into()
        }
        _ => err.into(),
    }
}

pub async fn create(conn: &mut Conn, new: &NewArea, home: Tz, now: DateTime<Utc>) -> Result<Area, CommandError> {
    // Without working hours the column's default (Monday–Friday 09:00–18:00) holds.
    let (hours_column, hours_value) = if new.working_hours.is_some() { (", working_hours", ", $9") } else { ("", "") };
    let mut query = diesel::sql_query(format!(
        "INSERT INTO area (code, name, time_zone, restrict_to_working_hours, closed_on_holidays, position,
                           created_at, updated_at, holiday_calendar{hours_column})
         VALUES ($1, $2, $3, $4, $5, COALESCE($6, (SELECT COALESCE(max(position), 0) + 1 FROM area)), $7, $7,
                 $8{hours_value})
         RETURNING {COLUMNS}"
    ))
    .into_boxed::<diesel::pg::Pg>()
    .bind::<Text, _>(new.code.as_str())
    .bind::<Text, _>(new.name.as_str())
    .bind::<Text, _>(new.time_zone.clone().unwrap_or_else(|| home.name().to_owned()))
    .bind::<Bool, _>(new.restrict_to_working_hours)
    .bind::<Bool, _>(new.closed_on_holidays)
    .bind::<Nullable<Int4>, _>(new.position)
    .bind::<Timestamptz, _>(now)
    .bind::<Nullable<Text>, _>(new.holiday_calendar.as_ref().map(|c| c.as_str().to_owned()));
    if let Some(hours) = &new.working_hours {
        query = query.bind::<Jsonb, _>(hours.clone());
    }
    let row: Row = query.get_result(conn).await.map_err(|e| taken(e, new.code.as_str()))?;
    Ok(row.area(home))
}

pub async fn patch(
    conn: &mut Conn,
    code: &str,
    patch: &AreaPatch,
    home: Tz,
    now: DateTime<Utc>,
) -> Result<Area, CommandError> {
    let row: Option<Row> = diesel::sql_query(format!(
        "UPDATE area SET name = COALESCE($2, name),
                         time_zone = CASE WHEN $3 THEN $4 ELSE time_zone END,
                         working_hours = COALESCE($5, working_hours),
                         restrict_to_working_hours = COALESCE($6, restrict_to_working_hours),
                         closed_on_holidays = COALESCE($7, closed_on_holidays),
                         position = COALESCE($8, position),
                         updated_at = $9,
                         holiday_calendar = CASE WHEN $10 THEN $11 ELSE holiday_calendar END
          WHERE code = $1
         RETURNING {COLUMNS}"
    ))
    .bind::<Text, _>(code)
    .bind::<Nullable<Text>, _>(patch.name.as_ref().map(|n| n.as_str()))
    .bind::<Bool, _>(patch.time_zone.is_some())
    .bind::<Text, _>(patch.time_zone.clone().flatten().unwrap_or_else(|| home.name().to_owned()))
    .bind::<Nullable<Jsonb>, _>(patch.working_hours.as_ref())
    .bind::<Nullable<Bool>, _>(patch.restrict_to_working_hours)
    .bind::<Nullable<Bool>, _>(patch.closed_on_holidays)
    .bind::<Nullable<Int4>, _>(patch.position)
    .bind::<Timestamptz, _>(now)
    .bind::<Bool, _>(patch.holiday_calendar.is_some())
    .bind::<Nullable<Text>, _>(patch.holiday_calendar.clone().flatten().map(|c| c.as_str().to_owned()))
    .get_result(conn)
    .await
    .optional()
    .map_err(|e| taken(e, code))?;
    row.map(|r| r.area(home)).ok_or_else(|| ApiError::not_found("area").into())
}
