//! JSON routes of series (SPEC §9).

use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, NaiveTime, Utc};
use schemars::JsonSchema;
use serde::Deserialize;

use super::bookings::BOOKING_RULES;
use super::extract::{rfc3339, ApiCommand, ApiJson, Reading};
use super::openapi::{Api, Op, Tag};
use super::run;
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
use crate::rooms::domain::{RequestedRooms, TimeRange, Title};
use crate::series::domain::Recurrence;
use crate::series::store::{self, cancel, change, create};
use crate::series::{CancelSeries, ChangeSeries, CreateSeries, Created, OnConflict, SeriesChange, WithOccurrences};
use crate::state::AppState;

pub fn routes(api: &mut Api) {
    use ErrorCode::*;
    let rules = BOOKING_RULES;
    api.route(
        Method::POST,
        "/series",
        Op::new::<Created>(
            Tag::Series,
            "createSeries",
            "book every occurrence of a recurrence in one transaction",
            201,
        )
        .owner()
        .idempotent(true)
        .body::<CreateSeriesBody>()
        .errors(&rules)
        .errors(&[SeriesTooLong, InvalidRecurrence, QuotaExceeded, SeriesConflict])
        .runs(&create::CREATE),
        create_series,
    )
    .route(
        Method::GET,
        "/series/{id}",
        Op::new::<WithOccurrences>(Tag::Series, "getSeries", "a series and every occurrence, cancelled ones too", 200)
            .errors(&[NotFound]),
        get_series,
    )
    .route(
        Method::PATCH,
        "/series/{id}",
        Op::new::<WithOccurrences>(
            Tag::Series,
            "updateSeries",
            "change title or local times of future occurrences that are not exceptions; all or nothing",
            200,
        )
        .owner()
        .idempotent(false)
        .body::<UpdateSeriesBody>()
        .errors(&rules)
        .errors(&[NotFound, NotOrganizer, SeriesConflict])
        .runs(&change::UPDATE),
        update_series,
    )
    .route(
        Method::POST,
        "/series/{id}/cancel",
        Op::new::<WithOccurrences>(
            Tag::Series,
            "cancelSeries",
            "cancel every future occurrence, or those from `from` on",
            200,
        )
        .owner()
        .idempotent(false)
        .body::<CancelSeriesBody>()
        .errors(&[NotFound, NotOrganizer])
        .runs(&cancel::CANCEL),
        cancel_series,
    );
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "CreateSeriesRequest")]
pub struct CreateSeriesBody {
    pub title: String,
    pub rooms: Vec<String>,
    /// Start of the first occurrence.
    #[serde(with = "rfc3339")]
    #[schemars(with = "DateTime<Utc>")]
    pub starts_at: DateTime<Utc>,
    /// End of the first occurrence.
    #[serde(with = "rfc3339")]
    #[schemars(with = "DateTime<Utc>")]
    pub ends_at: DateTime<Utc>,
    /// RFC 5545 RRULE value: FREQ=DAILY|WEEKLY|MONTHLY, INTERVAL, BYDAY, COUNT or UNTIL.
    pub recurrence: String,
    pub on_conflict: Option<OnConflict>,
    pub organizer_name: Option<String>,
    /// Every occurrence private (SPEC §26); default false.
    pub private: Option<bool>,
}

async fn create_series(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    ApiJson(body): ApiJson<CreateSeriesBody>,
) -> Result<HttpResponse, ApiError> {
    let key = cmd.required_key()?;
    // A date-only UNTIL ends at midnight of the rooms' area (SPEC §24).
    let tz = state.zone_of_rooms(&body.rooms).await;
    let command = CreateSeries {
        title: Title::parse(&body.title)?,
        rooms: RequestedRooms::parse(&body.rooms)?,
        first: TimeRange::new(body.starts_at, body.ends_at)?,
        recurrence: Recurrence::parse(&body.recurrence, tz)?,
        on_conflict: body.on_conflict.unwrap_or(OnConflict::Fail),
        organizer_name: cmd.organizer_name(body.organizer_name.as_deref())?,
        private: body.private.unwrap_or(false),
    };
    run(&state.pipeline, &cmd.principal, Some(key), &command).await
}

async fn get_series(
    state: web::Data<AppState>,
    reading: Reading,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let mut series =
        store::find(&mut conn, id).await.map_err(DbError::from)?.ok_or_else(|| ApiError::not_found("series"))?;
    let occurrences = store::occurrences(&mut conn, id).await.map_err(DbError::from)?;
    // A private series reads like its occurrences (SPEC §26).
    if !reading.reader.sees(series.private, &series.organizer_digest) {
        series.title = reading.label();
        series.organizer = String::new();
    }
    let occurrences = reading.reader.show_all(occurrences, &reading.label());
    Ok(HttpResponse::Ok().json(WithOccurrences { series, occurrences }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "UpdateSeriesRequest")]
pub struct UpdateSeriesBody {
    pub title: Option<String>,
    /// New local start time, HH:MM.
    pub start_time: Option<String>,
    /// New local end time, HH:MM.
    pub end_time: Option<String>,
    /// Only occurrences starting at or after this instant (default: now).
    #[serde(default, deserialize_with = "rfc3339_opt::deserialize")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    pub from: Option<DateTime<Utc>>,
}

pub fn hhmm(field: &str, raw: Option<&str>) -> Result<Option<NaiveTime>, ApiError> {
    raw.map(|t| NaiveTime::parse_from_str(t, "%H:%M").map_err(|_| ApiError::malformed(field, "must be HH:MM")))
        .transpose()
}

async fn update_series(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<UpdateSeriesBody>,
) -> Result<HttpResponse, ApiError> {
    let change = SeriesChange {
        title: body.title.as_deref().map(Title::parse).transpose()?,
        start_time: hhmm("startTime", body.start_time.as_deref())?,
        end_time: hhmm("endTime", body.end_time.as_deref())?,
        from: body.from,
    };
    if change.title.is_none() && change.start_time.is_none() && change.end_time.is_none() {
        return Err(ApiError::malformed("body", "give a title, a startTime or an endTime"));
    }
    let command = ChangeSeries { id: id.into_inner(), change };
    run(&state.pipeline, &cmd.principal, cmd.key, &command).await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "CancelSeriesRequest")]
pub struct CancelSeriesBody {
    /// Only occurrences starting at or after this instant (default: now).
    #[serde(default, deserialize_with = "rfc3339_opt::deserialize")]
    #[schemars(with = "Option<DateTime<Utc>>")]
    from: Option<DateTime<Utc>>,
}

async fn cancel_series(
    state: web::Data<AppState>,
    cmd: ApiCommand,
    id: web::Path<i64>,
    ApiJson(body): ApiJson<CancelSeriesBody>,
) -> Result<HttpResponse, ApiError> {
    let command = CancelSeries { id: id.into_inner(), from: body.from };
    run(&state.pipeline, &cmd.principal, cmd.key, &command).await
}

/// An optional RFC 3339 instant with an offset.
mod rfc3339_opt {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(raw) => DateTime::parse_from_rfc3339(&raw)
                .map(|t| Some(t.with_timezone(&Utc)))
                .map_err(|_| serde::de::Error::custom("must be an RFC 3339 time with an offset")),
        }
    }
}
